"""The shared helpers of protocols/common/wire.py that both the consumers and the checks use."""
from __future__ import annotations

import tracemalloc

import orjson

from ticdc_conformance.protocols.common.wire import compact


def test_kept_rows_and_keys_hold_their_own_size_not_the_json_writers_buffer():
    written = [orjson.dumps([i, "k"]) for i in range(2000)]
    tracemalloc.start()
    try:
        kept = [compact(w) for w in written]
        per_copy = tracemalloc.get_traced_memory()[0] / len(kept)
    finally:
        tracemalloc.stop()
    assert kept == written and compact(None) is None
    assert per_copy < 100  # orjson's own results hold 4 KB each (its write buffer)


def test_a_long_output_is_copied_whole_into_its_own_size():
    # Past 4 KB orjson's buffer is 64 KB; the copy is the output's length and the same bytes.
    written = [orjson.dumps({"v": "x" * n}) for n in (0, 4090, 5000, 70000)]
    tracemalloc.start()
    try:
        kept = [compact(w) for w in written]
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert kept == written and all(k is not w for k, w in zip(kept, written))
    assert held < sum(map(len, written)) + 100 * len(written)
