"""The `old` field of a Canal-JSON UPDATE (spec 003, "Comparison of TiCDC Canal-JSON and the official
Canal" and "Compatibility with the official Canal").

`old` is an array parallel to `data` (CANAL-OLD-4). By default each element holds every column
`data` holds (CANAL-OLD-3); with only-output-updated-columns it holds only the columns whose value
changed (CANAL-OLD-2), and so it does in content-compatible mode (CANAL-COMPAT-2). TiCDC
pkg/sink/codec/canal/canal_json_encoder.go fillUpdateColumns leaves out a column exactly when the
option is on and its new and old values are equal.
A message that carries the handle key only (large-message handling) or points at a claim-check
file is not judged: its columns are cut on purpose.
"""
from __future__ import annotations

from ...rules import checks_rules
from ..common.lint import Problem

OLD_RULES = ("CANAL-OLD-2", "CANAL-OLD-3", "CANAL-OLD-4", "CANAL-COMPAT-2")


def _cut(msg: dict) -> bool:
    tidb = msg.get("_tidb")
    return isinstance(tidb, dict) and bool(tidb.get("onlyHandleKey") or tidb.get("claimCheckLocation"))


@checks_rules(*OLD_RULES, name="lint.canal-json.update-old",
              description="an UPDATE's old is parallel to data and holds every column by default, only the "
                          "changed ones with only-output-updated-columns or content-compatible")
def check_update_old(msg: dict, only_updated: bool, content_compatible: bool, problems: list[Problem]) -> None:
    if msg.get("type") != "UPDATE" or _cut(msg):
        return
    where = f"UPDATE of {msg.get('database')}.{msg.get('table')}"
    data, old = msg.get("data"), msg.get("old")
    if not isinstance(data, list) or not isinstance(old, list) or len(data) != len(old):
        problems.append(Problem("CANAL-OLD-4", f"{where}: old is not an array parallel to data "
                                               f"({_size(old)} old, {_size(data)} data)"))
        return
    for i, (after, before) in enumerate(zip(data, old)):
        if not isinstance(after, dict) or not isinstance(before, dict):
            problems.append(Problem("CANAL-OLD-4", f"{where}: row {i} of data or old is not an object"))
            continue
        if only_updated or content_compatible:
            same = sorted(c for c, v in before.items() if c in after and after[c] == v)
            if same:
                rule, option = (("CANAL-COMPAT-2", "content-compatible") if content_compatible
                                else ("CANAL-OLD-2", "only-output-updated-columns"))
                problems.append(Problem(rule, f"{where}: old row {i} holds unchanged column(s) {same}; with "
                                              f"{option} it holds the modified columns only"))
        else:
            missing = sorted(set(after) - set(before))
            if missing:
                problems.append(Problem("CANAL-OLD-3", f"{where}: old row {i} lacks column(s) {missing}; by "
                                                       f"default old holds all the column data"))


def _size(value: object) -> str:
    return str(len(value)) if isinstance(value, list) else repr(value)
