"""Findings name everything a reader needs to act on them: the rule (id and quote), the table, the
key, the commit ts, the record that last wrote the row, the seed, a DeepDiff of expected vs actual
row and the replay command; the deliberately broken consumers of tests/consumers/ are the cases."""
from __future__ import annotations

import json
import re
import sys

import pytest

from tests.conftest import ROOT
from ticdc_conformance.checks.checkpoints import CheckpointVerdict
from ticdc_conformance.checks.differential import check_final_state
from ticdc_conformance.checks.locate import (
    MAX_COPIES_NAMED,
    decoded_events,
    decoded_rows,
    locate_findings,
    record_coordinates,
)
from ticdc_conformance.findings.finding import Finding, RunContext, row_diff, rule_quote
from ticdc_conformance.report.html import minimal_diff
from ticdc_conformance.rules import default_catalogue
from ticdc_conformance.runner import EncodingResult, run_encoding
from ticdc_generators.pipeline import config_for


def consumer(name: str) -> str:
    return f"{sys.executable} {ROOT / 'tests' / 'consumers' / f'{name}.py'}"


def quote_start(rule: str) -> str:
    return default_catalogue().get(rule).first_line[:40]


def _events_at(case, record: str) -> list[dict]:
    topic_partition, offset = record.split(" ")[0].rsplit("@", 1)
    topic, partition = topic_partition.rsplit("/", 1)
    manifest = json.loads((case / "manifest.json").read_text())
    return [ev for ev in decoded_rows(case, manifest)
            if (ev["topic"], ev["partition"], ev["offset"]) == (topic, int(partition), int(offset))]


@pytest.fixture(scope="module")
def lost_deletes(tmp_path_factory):
    work = tmp_path_factory.mktemp("findings")
    result = run_encoding("smoke", 1, "canal-json", work, consumer=consumer("ignores_deletes"))
    return result, result.case


def test_a_lost_delete_names_rule_table_key_commit_ts_record_seed_and_replay(lost_deletes):
    result, case = lost_deletes
    final = [f for t in result.tables for f in t.findings if f.rule == "CONSUMER-DELETE-1"]
    assert final, result.render()
    f = final[0]
    text = f.render(result.context)
    assert text.startswith(f"[CONSUMER-DELETE-1] {f.table} key={json.dumps(f.key, ensure_ascii=False)}: "
                           f"upstream deleted this row at ts {f.commit_ts}; the DELETE was not applied")
    assert 'CONSUMER-DELETE-1 (required, ' in text and quote_start("CONSUMER-DELETE-1") in text
    assert re.search(rf"at: commit ts {f.commit_ts}, record ticdc-smoke/\d+@\d+, seed 1", text), text
    assert "actual row: {" in text and "upstream has none" in text
    assert text.rstrip().endswith("replay: ticdc-conformance run --scenario smoke --seed 1 --protocol canal-json "
                                  f"--consumer '{consumer('ignores_deletes')}'")
    # The record named is the DELETE the consumer ignored: the last write of the row, at that commit ts.
    [ev] = [e for e in _events_at(case, f.record) if e["op"] == "delete"]
    assert ev["commit_ts"] == f.commit_ts and [ev["before"][c] for c in ("code", "id") if c in ev["before"]] == f.key


def test_every_finding_of_the_run_is_rendered_with_its_context(lost_deletes):
    result, _ = lost_deletes
    text = result.render()
    blocks = [b for b in text.split("\n  [")[1:]]
    assert len(blocks) == len(result.findings)
    for block in blocks:
        assert "    rule: CONSUMER-" in block and ", seed 1" in block and "replay: ticdc-conformance run" in block
    summary = result.to_json()
    located = [f for t in summary["tables"] for f in t["findings"]]
    assert located and all("commit_ts" in f and "record" in f and f["rule_quote"].startswith(f["rule"])
                           for f in located)


def test_a_differing_row_shows_the_deepdiff_of_expected_and_actual(tmp_path):
    result = run_encoding("smoke", 1, "simple-json", tmp_path, consumer="local")
    assert result.conformant, result.render()
    case = result.case
    path = case / "consumer" / "final" / "smoke.orders.ndjson"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    before = rows[0]["note"]
    rows[0]["note"] = "tampered"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((case / "manifest.json").read_text())
    [verdict] = [v for v in check_final_state(case / "truth", case / "consumer", "simple", manifest["sink"])
                 if v.table == "smoke.orders"]
    [f] = locate_findings(verdict.findings, case, manifest)
    assert f.diff == {"root['note']": {"expected": before, "actual": "tampered"}}
    text = f.render(RunContext("smoke", 1, "ticdc-conformance run --scenario smoke --seed 1 --protocol simple-json"))
    assert f"root['note']: {json.dumps(before, ensure_ascii=False)} -> \"tampered\"" in text
    assert f.key == [rows[0]["id"]] and f.commit_ts is not None and re.fullmatch(r"ticdc-smoke/\d+@\d+.*", f.record)
    assert [e for e in _events_at(case, f.record) if e["after"] and e["after"]["id"] == rows[0]["id"]]


def test_a_differing_json_document_names_the_members_that_differ(tmp_path):
    """A JSON column's document of many members that differs in one: the finding names that member
    by its path inside the document, in the text and in the HTML report's minimal diff."""
    result = run_encoding("types", 1, "canal-json", tmp_path, consumer="local")
    assert result.conformant, result.render()
    case = result.case
    path = case / "consumer" / "final" / "types.t4.ndjson"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    i = next(i for i, r in enumerate(rows) if isinstance(r["c96_json"], str) and r["c96_json"].startswith("{")
             and len(json.loads(r["c96_json"])) >= 3)
    document = json.loads(rows[i]["c96_json"])
    member = sorted(document)[1]
    document[member] = ["tampered"]
    rows[i]["c96_json"] = document  # the consumer holds the document as a JSON value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((case / "manifest.json").read_text())
    [verdict] = [v for v in check_final_state(case / "truth", case / "consumer", "canal-json", manifest["sink"])
                 if v.table == "types.t4"]
    [f] = verdict.findings
    assert set(f.diff) == {"root['c96_json']"}, f.diff
    inner = f"[{json.dumps(member, ensure_ascii=False)}]".replace('"', "'")
    assert f"in the document, {inner}" in f.render(), f.render()
    rows_shown = minimal_diff(f)["rows"]
    assert [r["path"] for r in rows_shown][1:] and all(r["path"].startswith("root['c96_json'] ▸ ")
                                                      for r in rows_shown[1:]), rows_shown
    assert any(inner in r["path"] for r in rows_shown), rows_shown


def test_checkpoint_findings_name_commit_ts_checkpoint_and_records(tmp_path):
    result = run_encoding("replays", 1, "open-protocol", tmp_path, consumer=consumer("reapplies_replays"))
    dedup = [f for f in result.checkpoints.findings if f.rule == "CONSUMER-DEDUP-1"]
    assert dedup, result.render()
    f = dedup[0]
    assert f.commit_ts is not None and f.checkpoint is not None and f.key is not None
    text = f.render(result.context)
    assert f"commit ts {f.commit_ts}, checkpoint {f.checkpoint}, record ticdc-replays" in text
    assert "re-sent at ticdc-replays" in f.record  # the copies the consumer applied twice
    assert quote_start("CONSUMER-DEDUP-1") in text and ", seed 1" in text
    assert "replay: ticdc-conformance run --scenario replays --seed 1 --protocol open-protocol" in text


def test_without_commit_ts_in_the_stream_the_commit_ts_comes_from_upstream(tmp_path):
    config = config_for("smoke", "canal-json", enable_tidb_extension=False)
    result = run_encoding("smoke", 1, "canal-json", tmp_path, consumer=consumer("ignores_deletes"), config=config)
    final = [f for t in result.tables for f in t.findings if f.key is not None]
    assert final, result.render()
    history = [json.loads(line) for line in
               (result.case / "truth" / "history.ndjson").read_text().splitlines()]
    key_of = {"smoke.customers": "code", "smoke.orders": "id"}
    # The row left its key at that commit ts upstream: a DELETE, or an UPDATE that changed the key.
    gone = {(ch["table"], ch["before"][key_of[ch["table"]]], e["commit_ts"]) for e in history if e["kind"] == "txn"
            for ch in e["changes"] if ch["before"] is not None
            and (ch["after"] is None or ch["after"][key_of[ch["table"]]] != ch["before"][key_of[ch["table"]]])}
    lost = [f for f in final if f.rule in ("CONSUMER-DELETE-1", "CONSUMER-UPDATE-1")]
    assert lost and all((f.table, f.key[0], f.commit_ts) in gone and f.record for f in lost)
    assert all(f"at ts {f.commit_ts}" in f.message for f in lost)


def test_a_ddl_finding_names_the_ddl_table_and_every_record_that_carried_it(tmp_path):
    result = run_encoding("smoke", 1, "open-protocol", tmp_path, consumer=consumer("applies_ddl_twice"))
    case = result.case
    manifest = json.loads((case / "manifest.json").read_text())
    ddl_events = [ev for ev in decoded_events(case, manifest) if ev["kind"] == "ddl"]
    twice = [f for f in result.checkpoints.findings if f.rule == "CONSUMER-DDL-1"]
    assert twice, result.render()
    for f in twice:
        # DDLs are broadcast to every partition: the finding names the first copy to arrive, then the others.
        copies = [ev for ev in ddl_events if (ev["commit_ts"], ev["query"]) == (f.commit_ts, f.ddl)]
        assert {ev["partition"] for ev in copies} == set(range(manifest["topics"]["ticdc-smoke"]))
        named = [f"{ev['topic']}/{ev['partition']}@{ev['offset']}" for ev in copies][: MAX_COPIES_NAMED + 1]
        assert record_coordinates(f.record) == named, f.record
        assert f.table == f"{copies[0]['schema']}.{copies[0]['table']}" and f.table in f.ddl.replace("`", "")
        text = f.render(result.context)
        assert text.startswith(f"[CONSUMER-DDL-1] {f.table}: DDL at commit ts {f.commit_ts} ("), text
        assert f"checkpoint {f.checkpoint}, record {named[0]} (copies also at {named[1]}" in text
        assert ", seed 1" in text and "not named" not in text


def test_the_finding_count_includes_the_findings_not_listed():
    listed = [Finding("CONSUMER-LOSS-1", "s.t", [n], "lost") for n in range(3)]
    result = EncodingResult("smoke", 1, "canal-json", "canal-json", "local",
                            checkpoints=CheckpointVerdict(True, 5, "", listed, suppressed=7))
    assert len(result.findings) == 3 and result.finding_count == 10
    assert "7 more finding(s) not listed" in result.checkpoint_summary
    assert EncodingResult("smoke", 1, "canal-json", "canal-json", "local").finding_count == 0


def test_rules_outside_the_spec_catalogue_are_quoted_from_the_suite():
    assert rule_quote("CONSUMER-OUTPUT-1").startswith("CONSUMER-OUTPUT-1 (docs/consumer-protocol.md, Output)")
    assert "(not in the rule catalogue)" in rule_quote("NO-SUCH-1")
    both = rule_quote("OPEN-TYPECODE-10 / DBZ-TYPEMAP-4")
    assert both.index("OPEN-TYPECODE-10 (required") < both.index("; DBZ-TYPEMAP-4 (required")


# Which spec states each encoding (shared/specs/README.md).
_SPECS = {"open-protocol": ("002",), "canal-json": ("003",), "debezium": ("000", "001"),
          "simple-json": ("004",), "simple-avro": ("004",)}


@pytest.mark.parametrize("encoding", sorted(_SPECS))
def test_a_cross_protocol_rule_also_quotes_the_runs_own_spec(encoding):
    catalogue = default_catalogue()
    quoted = 0
    for rule in catalogue:
        if rule.prefix not in ("CONSUMER", "KAFKA"):
            assert rule_quote(rule.id, encoding) == rule_quote(rule.id)  # a protocol's own rule: its quote only
            continue
        text = rule_quote(rule.id, encoding)
        assert text.startswith(rule_quote(rule.id))
        if rule.source.startswith(_SPECS[encoding]):
            assert text == rule_quote(rule.id)  # already the encoding's own spec
            continue
        own = [catalogue.get(i) for i in rule.see_also if catalogue.get(i).prefix not in ("CONSUMER", "KAFKA")
               and encoding in catalogue.get(i).protocols]
        if own:
            assert f"; in {encoding}'s spec: {own[0].id} ({own[0].level}, {own[0].source}): " in text
            assert own[0].source.startswith(_SPECS[encoding])
            quoted += 1
        else:
            assert text == rule_quote(rule.id)
    # the state and DDL-order rules quote other specs than Open Protocol's; the watermark, checkpoint,
    # state and DDL rules quote Open Protocol's or Canal-JSON's, and name a counterpart in every other
    assert quoted >= (2 if encoding == "open-protocol" else 4)


def test_findings_of_a_run_quote_its_encodings_spec():
    f = Finding("CONSUMER-WATERMARK-1", "s.t", None, "applied before the global watermark reached it")
    plain = f.render(RunContext("smoke", 1, "replay"))
    canal = f.render(RunContext("smoke", 1, "replay", "canal-json"))
    assert "CANAL-WATERMARK-3" not in plain
    assert "in canal-json's spec: CANAL-WATERMARK-3 (required, 003_" in canal
    assert "CANAL-WATERMARK-3" in f.to_json("canal-json")["rule_quote"]
    result = EncodingResult("smoke", 1, "canal-json", "canal-json", "local",
                            checkpoints=CheckpointVerdict(True, 5, "", [f]))
    assert "CANAL-WATERMARK-3" in result.render()
    assert "CANAL-WATERMARK-3" in result.to_json()["checkpoints"]["findings"][0]["rule_quote"]


def test_row_diff_is_minimal():
    assert row_diff({"a": 1, "b": "x", "c": None}, {"a": 1, "b": "y", "d": 2}) == {
        "root['b']": {"expected": "x", "actual": "y"},
        "root['c']": {"expected": None, "actual": "<absent>"},
        "root['d']": {"expected": "<absent>", "actual": 2},
    }
    f = Finding("CONSUMER-STATE-1", "s.t", [1], "row differs from upstream", row_diff({"a": 1}, {"a": 1.5}))
    assert "root['a']: 1 -> 1.5" in f.render()
    # Never "unknown": a finding not located says so, and one that cannot be says why.
    assert "at: commit ts and record not named: not looked up in the stream" in f.render()
    why = f.located(None, None, "a finding about the whole table, not one change").render()
    assert "at: commit ts and record not named: a finding about the whole table, not one change" in why
    assert "unknown" not in why
