"""The rule catalogue: every rule quotes its spec verbatim, ids and fields are well formed, the
`rules` command lists and filters, and coverage joins registered checks with marked tests."""
from __future__ import annotations

import importlib
import json
import textwrap
from collections import Counter

import pytest
from click.testing import CliRunner, Result

from tests.conftest import ROOT, SHARED
from ticdc_conformance.cli import main
from ticdc_conformance.rules import (
    APPLIES_TO,
    ENCODINGS,
    LEVELS,
    CatalogueError,
    CheckRegistry,
    RegistryError,
    default_catalogue,
    load_catalogue,
    quote_problems,
)
from ticdc_conformance.rules.catalogue import CATALOGUE_DIR
from ticdc_conformance.rules.coverage import compute, coverage, load_checks
from ticdc_conformance.rules.doc import render
from ticdc_conformance.rules.known_checks import KNOWN_CHECKS
from ticdc_conformance.rules.markers import MarkerError, find_marked_tests
from ticdc_conformance.rules.model import ID_PATTERN, PREFIX_ENCODINGS, normalize_ws
from ticdc_conformance.rules.registry import REGISTRY

SPECS = SHARED / "specs"
CATALOGUE = default_catalogue()


def cli(*args: str) -> Result:
    """`ticdc-conformance rules ARGS`, in process; --coverage reads this checkout's tests."""
    extra = ["--tests", str(ROOT / "tests")] if "--coverage" in args else []
    return CliRunner().invoke(main, ["rules", *args, *extra])


# --- the catalogue ------------------------------------------------------------------------------

def test_every_quote_and_section_is_verbatim_in_its_spec():
    assert quote_problems(CATALOGUE, SPECS) == []


def test_quote_check_catches_an_altered_quote(tmp_path):
    # The verbatim check is only worth something if a one-word change fails it.
    for path in (f for f in CATALOGUE_DIR.iterdir() if f.name.endswith(".toml")):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    text = (tmp_path / "open-protocol.toml").read_text(encoding="utf-8")
    altered = text.replace("The version of the current protocol is 1.", "The version of the current protocol is 2.")
    assert altered != text
    (tmp_path / "open-protocol.toml").write_text(altered, encoding="utf-8")
    problems = quote_problems(load_catalogue(tmp_path), SPECS)
    assert problems == [p for p in problems if p.startswith("OPEN-VERSION-1:")] and len(problems) == 1


def test_catalogue_covers_the_five_specs_in_the_expected_size():
    assert set(CATALOGUE.sources) == {p.name for p in SPECS.glob("*.txt")}
    assert 120 <= len(CATALOGUE) <= 250
    per_spec = Counter(r.source for r in CATALOGUE)
    assert min(per_spec.values()) >= 10, per_spec


def test_ids_are_unique_and_well_formed():
    ids = [r.id for r in CATALOGUE]
    assert len(ids) == len(set(ids))
    for r in CATALOGUE:
        m = ID_PATTERN.match(r.id)
        assert m and m["prefix"] in PREFIX_ENCODINGS and m["topic"] == r.topic.upper(), r.id


def test_levels_protocols_and_applies_to_are_valid():
    for r in CATALOGUE:
        assert r.level in LEVELS, r.id
        assert r.applies_to in APPLIES_TO, r.id
        assert r.protocols and set(r.protocols) <= set(PREFIX_ENCODINGS[r.prefix]) <= set(ENCODINGS), r.id
    # Both levels and all three subjects occur: the catalogue is not one undifferentiated list.
    assert {r.level for r in CATALOGUE} == set(LEVELS)
    assert {r.applies_to for r in CATALOGUE} == set(APPLIES_TO)


def test_rules_the_checks_already_cite_are_catalogued():
    # checks/differential.py names its findings after these rules.
    source = (ROOT / "conformance/ticdc_conformance/checks/differential.py").read_text()
    for rule_id in ("CONSUMER-STATE-1", "CONSUMER-DEDUP-1"):
        assert f'"{rule_id}"' in source
        assert CATALOGUE.get(rule_id).applies_to == "consumer"
    assert "watermarkTs have been sent" in CATALOGUE.get("CONSUMER-STATE-1").quote
    assert CATALOGUE.get("CONSUMER-DEDUP-1").section == "Restrictions"


def test_chinese_and_japanese_quotes_carry_an_english_gloss():
    for r in CATALOGUE:
        if any("\u3040" <= ch <= "\u9fff" for ch in r.quote):
            assert "Gloss:" in r.note or r.see_also, f"{r.id}: a quote in Chinese or Japanese needs a gloss"


@pytest.mark.parametrize("field, value, message", [
    ("id", "OPEN-ORDER-0", "PREFIX-TOPIC-N"),
    ("id", "FOO-ORDER-1", "prefix FOO"),
    ("id", "OPEN-BROADCAST-9", "differs from topic"),
    ("level", "must", "level"),
    ("applies_to", "wire", "applies_to"),
    ("protocols", ["canal-json"], "cannot apply"),
    ("protocols", ["kafka"], "unknown protocol"),
])
def test_a_malformed_rule_is_refused_with_its_file_and_id(tmp_path, field, value, message):
    rule = {"id": "OPEN-ORDER-1", "level": "required", "topic": "order", "section": "Restrictions",
            "applies_to": "stream", "quote": "DDL Events are broadcasted to each MQ Partition.",
            "protocols": ["open-protocol"], field: value}
    lines = ['source = "002_d55d2a926897fbba.txt"', "[[rule]]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in rule.items()]
    (tmp_path / "x.toml").write_text("\n".join(lines) + "\n")
    with pytest.raises(CatalogueError, match=message) as e:
        load_catalogue(tmp_path)
    assert "x.toml" in str(e.value)


def test_a_duplicate_id_across_files_is_refused(tmp_path):
    body = textwrap.dedent('''
        source = "002_d55d2a926897fbba.txt"
        protocols = ["open-protocol"]
        [[rule]]
        id = "OPEN-ORDER-1"
        level = "required"
        topic = "order"
        section = "Restrictions"
        applies_to = "stream"
        quote = "DDL Events are broadcasted to each MQ Partition."
        ''')
    (tmp_path / "a.toml").write_text(body)
    (tmp_path / "b.toml").write_text(body)
    with pytest.raises(CatalogueError, match="already defined in a.toml"):
        load_catalogue(tmp_path)


def test_see_also_names_existing_rules():
    for r in CATALOGUE:
        for other in r.see_also:
            assert other in CATALOGUE and other != r.id


# --- the docs ---------------------------------------------------------------------------------------

def test_published_rule_catalogue_is_current():
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == render(), \
        "docs/rules.md is stale: run `ticdc-conformance rules --write`"


def test_doc_lists_every_rule_with_its_quote():
    doc = render()
    for r in CATALOGUE:
        assert f"| {r.id} | {r.level} |" in doc
    assert normalize_ws(CATALOGUE.get("OPEN-ORDER-1").quote) in doc


# --- the command ----------------------------------------------------------------------------------

def test_cli_lists_every_rule_with_level_source_and_quote():
    out = cli()
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[-1] == f"{len(CATALOGUE)} rule(s)"
    order = next(line for line in lines if line.startswith("OPEN-ORDER-1 "))
    assert "required" in order and "002_d55d2a926897fbba.txt" in order and "On the same table" in order


def test_cli_filters_by_protocol_level_and_topic():
    out = cli("--protocol", "simple", "--level", "required", "--topic", "bootstrap", "--format", "json")
    assert out.exit_code == 0, out.output
    rules = json.loads(out.stdout)
    expected = [r.id for r in CATALOGUE.select(["simple-json", "simple-avro"], "required", "bootstrap")]
    assert [r["id"] for r in rules] == expected and len(expected) >= 10
    assert all(r["topic"] == "bootstrap" and r["level"] == "required" for r in rules)
    canal = json.loads(cli("-p", "canal-json", "--format", "json").stdout)
    # Cross-protocol rules show up for every encoding; no other protocol's rules do.
    assert {r["id"].split("-")[0] for r in canal} == {"CANAL", "CONSUMER", "KAFKA"}
    assert cli("-p", "no-such-protocol").exit_code != 0


def test_cli_coverage_reports_checks_and_strict_fails_on_unchecked_rules(monkeypatch):
    out = cli("--coverage", "--format", "json", "--topic", "state")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    [state] = report["rules"]
    assert state["id"] == "CONSUMER-STATE-1" and "differential.final-state" in state["checks"]
    assert cli("--coverage", "--strict", "--protocol", "simple").exit_code == 0
    # Every rule has a check now; take one away and --strict must name its rule.
    load_checks()
    monkeypatch.delitem(REGISTRY._checks, "lint.simple.watermark-period")
    strict = cli("--coverage", "--strict", "--protocol", "simple")
    unchecked = [r.id for r in compute(CATALOGUE, load_checks(), [],
                                       CATALOGUE.select(["simple-json", "simple-avro"])).without_check]
    assert unchecked == ["SIMPLE-WATERMARK-3"]
    assert strict.exit_code == 1 and all(i in strict.stdout.splitlines()[-1] for i in unchecked)
    assert cli("--coverage", "--strict", "--topic", "framing").exit_code == 0


def test_cli_write_regenerates_the_page(tmp_path):
    out = cli("--write", str(tmp_path / "rules.md"))
    assert out.exit_code == 0, out.output
    assert (tmp_path / "rules.md").read_text(encoding="utf-8") == render()


# --- checks and coverage ----------------------------------------------------------------------------

def test_registry_refuses_unknown_rules_and_conflicting_names():
    reg = CheckRegistry(CATALOGUE)
    reg.register("a", ["OPEN-ORDER-1"], "x", "m:f")
    reg.register("a", ["OPEN-ORDER-1"], "x", "m:f")  # the same registration again is harmless
    with pytest.raises(RegistryError, match="OPEN-ORDER-99"):
        reg.register("b", ["OPEN-ORDER-99"], "x")
    with pytest.raises(RegistryError, match="already registered"):
        reg.register("a", ["OPEN-ORDER-2"], "y", "m:g")


def test_decorator_registers_the_function_it_marks():
    reg = CheckRegistry(CATALOGUE)

    @reg.checks_rules("OPEN-ORDER-1", "OPEN-ORDER-2")
    def check_order(records):
        """First-sent row events of a table come in TS order."""
        return records

    [check] = reg.checks()
    assert check.rule_ids == ("OPEN-ORDER-1", "OPEN-ORDER-2")
    assert check.target.endswith(":test_decorator_registers_the_function_it_marks.<locals>.check_order")
    assert check.description == "First-sent row events of a table come in TS order."
    assert check_order([1]) == [1] and check_order.__rules__ == ("OPEN-ORDER-1", "OPEN-ORDER-2")


def test_coverage_joins_a_registered_check_and_a_marked_test(tmp_path):
    reg = CheckRegistry(CATALOGUE)
    reg.register("stream.order", ["OPEN-ORDER-1"], "order check", "m:f")
    tests = tmp_path / "tests"
    (tests / "unit").mkdir(parents=True)
    (tests / "unit" / "test_x.py").write_text(textwrap.dedent('''
        import pytest
        from pytest import mark

        @pytest.mark.parametrize("n", [1, 2])
        @pytest.mark.rules("OPEN-ORDER-1", "OPEN-ORDER-2")
        def test_order(n):
            pass

        @mark.rules("OPEN-ORDER-1")
        class TestGroup:
            def test_inner(self):
                pass

            @pytest.mark.rules("OPEN-DISPATCH-1")
            def test_both(self):
                pass

        def test_unmarked():
            pass

        @pytest.mark.rules("OPEN-NOPE-1")
        def test_typo():
            pass
        '''))
    (tests / "unit" / "test_module.py").write_text('import pytest\npytestmark = [pytest.mark.rules("KAFKA-DELIVERY-1")]\n'
                                                   "def test_a():\n    pass\n")
    cov = coverage(CATALOGUE, tests, CATALOGUE.select(topic="order") + [CATALOGUE.get("OPEN-DISPATCH-1")],
                   checks=reg.checks())
    by_id = {c.rule.id: c for c in cov.rules}
    assert [c.name for c in by_id["OPEN-ORDER-1"].checks] == ["stream.order"]
    assert by_id["OPEN-ORDER-1"].tests == ("tests/unit/test_x.py::test_order", "tests/unit/test_x.py::TestGroup::test_inner",
                                           "tests/unit/test_x.py::TestGroup::test_both")
    assert by_id["OPEN-ORDER-2"].checks == () and by_id["OPEN-ORDER-2"].tests == ("tests/unit/test_x.py::test_order",)
    assert by_id["OPEN-DISPATCH-1"].tests == ("tests/unit/test_x.py::TestGroup::test_both",)
    assert [r.id for r in cov.without_check] == [i for i in by_id if i != "OPEN-ORDER-1"]
    assert cov.unknown_in_tests == {"tests/unit/test_x.py::test_typo": ("OPEN-NOPE-1",)}
    module = [t for t in find_marked_tests(tests) if t.node_id.endswith("test_module.py::test_a")]
    assert module and module[0].rule_ids == ("KAFKA-DELIVERY-1",)


def test_a_mark_that_cannot_be_read_statically_is_an_error(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_y.py").write_text('import pytest\nIDS = ["OPEN-ORDER-1"]\n\n'
                                                  "@pytest.mark.rules(*IDS)\ndef test_y():\n    pass\n")
    with pytest.raises(MarkerError, match="test_y.py:4"):
        find_marked_tests(tmp_path / "tests")


def test_known_checks_name_code_that_exists():
    for name, target, rule_ids, _ in KNOWN_CHECKS:
        module, _, qualname = target.partition(":")
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        assert callable(obj), name
        assert all(i in CATALOGUE for i in rule_ids), name


def test_the_suites_own_marks_name_catalogued_rules():
    marked = find_marked_tests(ROOT / "tests")
    unknown = {t.node_id: [i for i in t.rule_ids if i not in CATALOGUE] for t in marked}
    assert not {k: v for k, v in unknown.items() if v}
    assert any(t.node_id.startswith("tests/generators/protocols/test_open_protocol_encoder.py::") for t in marked)
