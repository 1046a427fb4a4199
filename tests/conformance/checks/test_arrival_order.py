"""checks/arrival_order.excuse: only findings about undecidable rows are taken out."""
from __future__ import annotations

from ticdc_conformance.checks.arrival_order import Undecidable, excuse
from ticdc_conformance.findings.finding import Finding

TIED = Undecidable("sales.orders", [2429], "tie", ("id",), None, 1)
ORPHAN = Undecidable("sales.t0", [2429], "tie", ("id",), None, 1)


def test_a_finding_about_a_tied_key_is_excused_others_stay():
    tied = Finding("CONSUMER-STATE-1", "sales.orders", [2429], "row differs from upstream")
    other = Finding("CONSUMER-STATE-1", "sales.orders", [7], "row missing from the consumer's table")
    same_key_other_table = Finding("CONSUMER-STATE-1", "sales.t1", [2429], "row missing")
    assert excuse([tied, other], "sales.orders", [TIED]) == [other]
    assert excuse([same_key_other_table], "sales.t1", [TIED]) == [same_key_other_table]


def test_no_order_explains_a_key_held_twice_or_bad_output():
    twice = Finding("CONSUMER-DEDUP-1", "sales.orders", [2429], "the consumer's table holds this row 2 times")
    output = Finding("CONSUMER-OUTPUT-1", "sales.orders", None, "final/sales.orders.ndjson line 3: not JSON")
    assert excuse([twice, output], "sales.orders", [TIED]) == [twice, output]


def test_a_table_upstream_lacks_is_excused_only_when_every_row_in_it_is_tied():
    table = Finding("CONSUMER-TABLE-1", "sales.t0", None, "renamed to sales.orders")
    assert excuse([table], "sales.t0", [ORPHAN], [{"id": 2429, "label": "x"}]) == []
    assert excuse([table], "sales.t0", [ORPHAN], []) == []  # a tied DELETE re-created it empty
    assert excuse([table], "sales.t0", [ORPHAN], [{"id": 2429}, {"id": 5}]) == [table]
    assert excuse([table], "sales.t0", [TIED], [{"id": 2429}]) == [table]  # no tie on that name


def test_a_row_of_a_table_without_key_is_matched_by_its_image():
    image = {"a": 1, "b": "x"}
    tied = Undecidable("s.nokey", None, "tie", (), image, 1)
    surplus = Finding("CONSUMER-ROW-1", "s.nokey", None, "1 row(s) more", actual=dict(image))
    missing = Finding("CONSUMER-STATE-1", "s.nokey", None, "1 row(s) missing", expected={"a": 2, "b": "y"})
    assert excuse([surplus, missing], "s.nokey", [tied]) == [missing]
