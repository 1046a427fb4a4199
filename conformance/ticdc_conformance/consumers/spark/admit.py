"""Admission: what happens to each row event, decided per partition in arrival order.

A `mapInArrow` over the decoded row events (and watermarks) of each topic-partition, in
(offset, seq) order, with the driver's checkpoints (plan.py). Per row event, as sequential/consumer.py
and consumers/rules/ordering.py decide it:
- `state`: `dropped` when its commit ts is at or below the checkpoint recorded before it arrived
  (a re-send of something already applied); `applied` with the checkpoint index `k` whose flush
  applies it; `waiting` when no checkpoint reaches it yet (it is still buffered at the end);
- `epoch`: how often its partition showed a re-send before it (a watermark regression, or a
  table's commit ts going back among the events not dropped; consumers/rules/ordering.py DMLBuffer.new_epoch),
  which tells a re-sent copy from a legitimate duplicate in a table without key;
- the apply-order columns (plan.APPLY_KEY) and `seg`, the number of DDLs applied before it;
- `key_shape`: the key the consumer's table is keyed by after this event (consumers/rules/tables.py: the named key
  columns, or for a message naming none, the image's column names).

A partition's events come in offset order, and the arrival places of its records only grow, so the
checkpoints recorded before an event are found by walking one pointer forward.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterator

import orjson
import pyarrow as pa

from ticdc_conformance.consumers.rules.ordering import is_image_keyed
from ticdc_conformance.consumers.sequential.consumer import (
    _OP_RANK,  # the sequential consumer's order of ops within a transaction
)
from ticdc_conformance.consumers.spark.plan import APPLY_KEY, PHASE_FLUSH, Checkpoints, arrival_key, flush_row_key

PASSED = ["commit_ts", "schema", "table", "op", "key", "key_order", "old_key", "old_key_order", "key_columns",
          "after", "before", "columns", "topic", "partition", "offset", "seq", "pos_ts", "pos_offset"]
COMPUTED = [
    pa.field("state", pa.string()),  # applied | waiting | dropped
    pa.field("k", pa.int32()),
    pa.field("phase", pa.int32()),
    pa.field("ts0", pa.int64()),
    pa.field("kind_rank", pa.int32()),
    pa.field("s_schema", pa.string()),
    pa.field("s_table", pa.string()),
    pa.field("s_key_order", pa.string()),
    pa.field("op_rank", pa.int32()),
    pa.field("piece", pa.int32()),
    pa.field("epoch", pa.int32()),
    pa.field("image_keyed", pa.bool_()),
    pa.field("key_shape", pa.string()),
    pa.field("seg", pa.int32()),
]


KEY_COLUMNS = APPLY_KEY[:8]  # the apply-key columns computed here; the rest are the event's place


def admitted_schema(decoded: pa.Schema) -> pa.Schema:
    return pa.schema([decoded.field(name) for name in PASSED] + COMPUTED)


@dataclass
class AdmitPlan:
    checkpoints: Checkpoints
    ddl_keys: list[tuple]  # apply keys of the DDLs applied, sorted


def key_shape(ev: dict) -> str:
    if not is_image_keyed(ev):
        return ev["key_columns"]
    image = ev["after"] if ev["after"] is not None else ev["before"]
    return "image:" + orjson.dumps(list(orjson.loads(image))).decode()


class _Partition:
    def __init__(self) -> None:
        self.reached = 0  # checkpoints recorded before the current event
        self.epoch = 0
        self.high: dict[tuple[str, str], int] = {}  # consumers/rules/ordering.py _Group.high per table


def admitter(plan: AdmitPlan, decoded: pa.Schema):
    """The function handed to DataFrame.mapInArrow."""
    cps = plan.checkpoints
    out_schema = admitted_schema(decoded)
    # A row event's DDL segment: how many DDL apply keys lie before its own. Flushed events compare
    # by (k, phase, commit ts, kind) alone: a DDL of the same commit ts comes after them.
    flush_prefixes = [key[:4] for key in plan.ddl_keys]

    def segment(key: tuple) -> int:
        if key[1] == PHASE_FLUSH:
            return bisect.bisect_left(flush_prefixes, key[:4])
        return bisect.bisect_left(plan.ddl_keys, key)

    def admit(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts: dict[tuple[str, int], _Partition] = {}
        for batch in batches:
            d = batch.select(["kind", *PASSED, "mark"]).to_pydict()
            keep: list[int] = []
            new: dict[str, list] = {f.name: [] for f in COMPUTED}
            for i, kind in enumerate(d["kind"]):
                tp = (d["topic"][i], d["partition"][i])
                p = parts.get(tp) or parts.setdefault(tp, _Partition())
                pos = (d["pos_ts"][i], tp[0], tp[1], d["pos_offset"][i], d["offset"][i], d["seq"][i])
                while p.reached < cps.count and cps.positions[p.reached] < pos:
                    p.reached += 1
                ts = d["commit_ts"][i]
                if kind == "watermark":
                    if ts < d["mark"][i]:
                        p.epoch += 1  # a regression: what follows re-sends what came before
                    continue
                keep.append(i)
                schema, table = d["schema"][i], d["table"][i]
                if ts is None:  # no commit ts: applied on arrival
                    state, key = "applied", arrival_key(p.reached, pos)
                elif p.reached and ts <= cps.values[p.reached - 1]:
                    state, key = "dropped", flush_row_key(p.reached, ts, schema, table, None, 0, pos)
                else:
                    if ts < p.high.get((schema, table), 0):
                        p.epoch += 1  # a table's commit ts going back is a re-send too
                    p.high[(schema, table)] = max(p.high.get((schema, table), 0), ts)
                    k = cps.flush_key(ts)
                    state, k = ("applied", k) if k is not None else ("waiting", cps.count)
                    key = flush_row_key(k, ts, schema, table, d["key_order"][i], _OP_RANK.get(d["op"][i], 3), pos)
                ev = {"key_columns": d["key_columns"][i], "after": d["after"][i], "before": d["before"][i]}
                for name, value in zip(KEY_COLUMNS, key):
                    new[name].append(value)
                new["state"].append(state)
                new["piece"].append(0)
                new["epoch"].append(p.epoch)
                new["image_keyed"].append(is_image_keyed(ev))
                new["key_shape"].append(key_shape(ev))
                new["seg"].append(segment(key) if plan.ddl_keys else 0)
            if keep:
                passed = batch.select(PASSED).take(pa.array(keep, pa.int64()))
                arrays = list(passed.columns) + [pa.array(new[f.name], type=f.type) for f in COMPUTED]
                yield pa.RecordBatch.from_arrays(arrays, schema=out_schema)

    return admit
