"""The Spark consumer reads a record file whole and decodes it as it lies only while the file keeps
each partition's records together in increasing offsets (consumers/spark/job.py in_file_order)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from ticdc_conformance.consumers.spark.job import OUT_OF_ORDER, in_file_order


def _batch(rows: list[tuple[str, int, int]]) -> pa.RecordBatch:
    topics, partitions, offsets = zip(*rows) if rows else ((), (), ())
    return pa.RecordBatch.from_pydict({"topic": list(topics), "partition": list(partitions), "offset": list(offsets)})


def _offsets(batches) -> list[int]:
    return [o for b in batches for o in b.column("offset").to_pylist()]


def _run(*batches: list[tuple[str, int, int]]) -> list[int]:
    return _offsets(in_file_order(lambda it: list(it))(iter([_batch(b) for b in batches])))


def test_partitions_together_in_increasing_offsets_pass_unchanged():
    assert _run([("t", 0, 0), ("t", 0, 1)], [("t", 0, 5), ("t", 1, 0)], [("t", 1, 2)]) == [0, 1, 5, 0, 2]
    assert _run() == []


@pytest.mark.parametrize("rows, says", [
    ([("t", 0, 1), ("t", 0, 1)], "t/0 goes from offset 1 to 1"),
    ([("t", 0, 2), ("t", 0, 1)], "t/0 goes from offset 2 to 1"),
    ([("t", 0, 0), ("t", 1, 0), ("t", 0, 1)], "t/0 resumes at offset 1"),
])
def test_offsets_that_go_back_or_a_partition_that_resumes_stop_the_task(rows, says):
    with pytest.raises(ValueError, match=OUT_OF_ORDER) as e:
        _run(rows[:1], rows[1:])
    assert says in str(e.value)
