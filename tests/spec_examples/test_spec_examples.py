"""Every example message of specs 000-004, reproduced by the project's encoders from its event.

The examples live as data in tests/spec_examples/examples/ (format: tests/spec_examples/README.md);
docs/spec-examples.md lists the outcome per example. Each example is checked four ways:
- its `spec_text` is verbatim spec text at the lines it names, and its `expected` message is a
  faithful transcription of that text (every key and scalar comes from it);
- its status agrees with its ignore/legacy lists, and an inconsistent example quotes the spec;
- every ignore/legacy entry matches something and is needed, so ignores stay minimal;
- the encoder, fed the example's upstream event under its config, produces the expected message
  under each version profile the example lists, and not under the others.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.conftest import ROOT, SHARED

from .compare import (
    decode_legacy,
    differences,
    drop,
    leaves,
    parse_part,
    render_path,
    scalar_tokens,
    select,
)
from .corpus import FILES, LEVELS, load
from .encode import encode
from .events import build_events

DOC = ROOT / "docs" / "spec-examples.md"
SPECS = SHARED / "specs"
STATUSES = ("exact", "ignoring-fields", "inconsistent")
PROFILES = ("ticdc", "tiflow")  # SinkConfig.version_profile: new TiCDC, classic TiCDC
# The specs whose examples this suite covers.
SPEC_FILES = ("000_7c7f64400a859d22.txt", "001_ce40c87ecb9d78e2.txt", "002_d55d2a926897fbba.txt",
              "003_385d166a1dc1baca.txt", "004_c321302fd88c8969.txt")


def spec_lines(name: str) -> list[str]:
    return (SPECS / name).read_text(encoding="utf-8").split("\n")


def unquote_log(text: str) -> str:
    """A key/value as spec 002's logs print it: inside double quotes, with \\" for "."""
    return re.sub(r'\\(["\\])', r"\1", text)


def spec_json_text(entry: dict) -> str:
    return unquote_log(entry["text"]) if entry.get("quoting") == "log" else entry["text"]


def _with(predicate) -> list:
    return [pytest.param(load(p), id=p.stem) for p in FILES if predicate(load(p))]


PRINTED_BYTES = _with(lambda ex: ex.get("compare_bytes") or ex.get("raw_fragments"))


@pytest.fixture(params=FILES, ids=lambda p: p.stem)
def example(request) -> dict:
    return load(request.param)


def test_examples_exist_for_every_spec():
    assert len(FILES) >= 50 and len(_with(lambda ex: len(ex["profiles"]) == 1)) >= 3 and len(PRINTED_BYTES) >= 15
    assert {load(p)["spec"]["file"] for p in FILES} == set(SPEC_FILES)
    ids = [load(p)["id"] for p in FILES]
    assert ids == [p.stem for p in FILES], "each file is named after its example id"


# The top-level fields tests/spec_examples/README.md describes.
FIELDS = {"id", "spec", "protocol", "status", "level", "inconsistency", "summary", "profiles", "profile_notes", "config",
          "config_notes", "partition", "tables", "events", "output", "spec_text", "transcription", "expected",
          "select", "ignore", "legacy", "compare_bytes", "raw_fragments"}
REQUIRED = {"id", "spec", "protocol", "status", "level", "summary", "profiles", "events", "spec_text", "transcription",
            "expected"}


def test_example_fields_are_known(example):
    unknown, missing = set(example) - FIELDS, REQUIRED - set(example)
    assert not unknown and not missing, f"{example['id']}: unknown fields {sorted(unknown)}, missing {sorted(missing)}"
    assert set(example.get("config_notes", {})) <= set(example.get("config", {}))


def test_spec_text_is_verbatim(example):
    lines = spec_lines(example["spec"]["file"])
    for entry in example["spec_text"]:
        first, last = entry["lines"]
        assert 1 <= first <= last <= len(lines)
        region = "\n".join(lines[first - 1:last])
        assert entry["text"] in region, f"{example['id']}: spec_text ({entry['part']}) is not at lines {first}-{last}"


def test_table_definitions_quote_the_spec(example):
    """A table whose CREATE TABLE the spec prints names it in `source_sql`, verbatim."""
    spec = (SPECS / example["spec"]["file"]).read_text(encoding="utf-8")
    for name, table in example.get("tables", {}).items():
        if "source_sql" in table:
            assert table["source_sql"] in spec, f"{example['id']}: table {name}'s source_sql is not in the spec"


def test_expected_is_transcribed_from_spec_text(example):
    for part, expected in example["expected"].items():
        entries = [e for e in example["spec_text"] if e["part"] == part]
        assert entries, f"{example['id']}: expected {part} has no spec_text"
        quoted = [e for e in entries if e.get("quoting") == "log"]
        if quoted:
            # A log prints the exact JSON text: the transcription is that text, parsed.
            [entry] = quoted
            text = spec_json_text(entry)
            assert expected == (json.loads(text) if text else ""), f"{example['id']}: {part}"
            continue
        tokens = set().union(*(scalar_tokens(spec_json_text(e)) for e in entries))
        strays = [f"{render_path(p)} = {json.dumps(v, ensure_ascii=False)}" for p, v in leaves(expected)
                  if json.dumps(v, ensure_ascii=False) not in tokens]
        assert not strays, f"{example['id']}: {part} has keys/values not in its spec text: {strays}"


def test_level_says_whether_every_implementation_must_reproduce_the_example(example):
    """`required`: what the spec prints is what every TiCDC generation writes, so every encoder
    must write it and every decoder read it. `optional`: the example is not self-consistent or
    only one generation writes it."""
    assert example["level"] in LEVELS
    universal = example["status"] != "inconsistent" and set(example["profiles"]) == set(PROFILES)
    assert example["level"] == ("required" if universal else "optional"), example["id"]


def test_status_agrees_with_ignores(example):
    status = example["status"]
    assert status in STATUSES
    adjustments = example.get("ignore", []) + example.get("legacy", [])
    for adj in adjustments:
        assert adj["part"] in example["expected"] and adj["path"] and adj["reason"].strip()
    if status == "exact":
        assert not adjustments and "inconsistency" not in example
    elif status == "ignoring-fields":
        assert adjustments and "inconsistency" not in example
    else:
        inc = example["inconsistency"]
        assert inc["explanation"].strip()
        for quote in inc["quotes"]:
            spec = (SPECS / quote["file"]).read_text(encoding="utf-8")
            assert quote["text"] in spec, f"{example['id']}: quoted text not in {quote['file']}: {quote['text']!r}"


def _outputs(example: dict, profile: str) -> dict:
    """The encoded message the example shows (its `output` index, or the only one)."""
    config = dict(example.get("config", {}), version_profile=profile)
    outputs = encode(example["protocol"], config, build_events(example), example.get("partition", 0))
    if "output" in example:
        return outputs[example["output"]]
    assert len(outputs) == 1, f"{example['id']}: {len(outputs)} messages, expected one"
    return outputs[0]


def _differences(example: dict, profile: str, omit: dict | None = None) -> tuple[list[str], list[str]]:
    """(differences, stale entries): the example against the encoder's message under a version
    profile, after selection, legacy renderings and ignores (less `omit`, to show it is needed)."""
    output = _outputs(example, profile)
    legacy = [a for a in example.get("legacy", []) if a is not omit]
    ignore = [a for a in example.get("ignore", []) if a is not omit]
    diffs, stale = [], []
    for part, expected in example["expected"].items():
        actual = parse_part(output[part])
        paths = example.get("select", {}).get(part) or [[]]
        for path in paths:
            exp, act = expected, select(actual, path)
            for adj in (a for a in legacy if a["part"] == part):
                exp, done = decode_legacy(exp, adj["path"], adj["rendering"])
                stale += [] if done else [f"legacy {part}{render_path(adj['path'])}"]
            for adj in (a for a in ignore if a["part"] == part):
                exp, gone_e = drop(exp, adj["path"])
                act, gone_a = drop(act, adj["path"])
                stale += [] if gone_e or gone_a else [f"ignore {part}{render_path(adj['path'])}"]
            where = part + (render_path(path) if path else "")
            diffs += [where + (line if line[0] in ".[" else " " + line) for line in differences(exp, act)]
    return diffs, stale


@pytest.mark.rules(
    "DBZ-KEY-1", "DBZ-DDL-1", "DBZ-DDL-2", "DBZ-DDL-3", "DBZ-DML-2", "DBZ-DML-3", "DBZ-DML-4", "DBZ-DML-5",
    "DBZ-KEY-3", "DBZ-SCHEMA-3", "DBZ-WATERMARK-2", "DBZ-WATERMARK-3", "DBZ-WATERMARK-4", "DBZ-DML-6", "DBZ-KEY-6",
    "DBZ-DML-7", "DBZ-DML-8", "OPEN-TYPECODE-1", "OPEN-TYPECODE-2", "OPEN-TYPECODE-3", "OPEN-TYPECODE-4",
    "OPEN-TYPECODE-5", "OPEN-TYPECODE-6", "OPEN-TYPECODE-7", "OPEN-TYPECODE-8", "OPEN-TYPECODE-9",
    "OPEN-TYPECODE-10", "OPEN-TYPECODE-11", "OPEN-TYPECODE-12", "OPEN-KEY-1", "OPEN-KEY-2", "OPEN-DDL-2",
    "OPEN-WATERMARK-3", "OPEN-ROW-1", "OPEN-ROW-5", "OPEN-BROADCAST-3", "CANAL-BINARY-5", "CANAL-DDL-2",
    "CANAL-OLD-5", "CANAL-DML-2", "CANAL-MYSQLTYPE-3", "CANAL-MYSQLTYPE-4", "CANAL-OLD-3", "CANAL-OLD-4",
    "CANAL-WATERMARK-4", "SIMPLE-BOOTSTRAP-7", "SIMPLE-COLUMN-2", "SIMPLE-DDL-1", "SIMPLE-DDL-2", "SIMPLE-DML-2",
    "SIMPLE-DML-3", "SIMPLE-DML-4", "SIMPLE-INDEX-2", "SIMPLE-TABLESCHEMA-2", "SIMPLE-WATERMARK-2")
def test_encoder_reproduces_example(example):
    assert example["profiles"] and set(example["profiles"]) <= set(PROFILES)
    assert "version_profile" not in example.get("config", {}), "profiles are listed in `profiles`"
    first = example["spec_text"][0]
    for profile in example["profiles"]:
        diffs, stale = _differences(example, profile)
        assert not stale, f"{example['id']}: ignore/legacy entries that match nothing: {stale}"
        assert not diffs, (f"{example['id']} ({example['spec']['file']} lines {first['lines'][0]}-{first['lines'][1]}, "
                           f"{example['status']}, profile {profile}):\n  " + "\n  ".join(diffs))


def test_other_profiles_do_not_reproduce_example(example):
    """`profiles` is exact: a generation left out really writes something else."""
    others = [p for p in PROFILES if p not in example["profiles"]]
    assert not others or example.get("profile_notes", "").strip(), f"{example['id']}: say why {others} differ"
    for profile in others:
        diffs, _ = _differences(example, profile)
        assert diffs, f"{example['id']}: reproduced under {profile} too; list it in profiles"


def test_every_ignore_and_legacy_entry_is_needed(example):
    """An entry the encoder would pass without is taken out: ignores stay minimal."""
    for adj in example.get("ignore", []) + example.get("legacy", []):
        for profile in example["profiles"]:
            diffs, _ = _differences(example, profile, omit=adj)
            assert diffs, f"{example['id']}: {adj['part']}{render_path(adj['path'])} is not needed under {profile}"


@pytest.mark.parametrize("example", PRINTED_BYTES)
@pytest.mark.rules(
    "OPEN-KEY-1", "OPEN-KEY-2", "OPEN-DDL-2", "OPEN-WATERMARK-3", "OPEN-ROW-1", "OPEN-ROW-5", "CANAL-BINARY-5")
def test_exact_bytes_where_the_spec_prints_them(example):
    """spec 002's logs print the event JSON byte for byte, and spec 003 spells out escapes that
    parsing hides: those bytes must be the encoder's."""
    parts = example.get("compare_bytes", [])
    fragments = example.get("raw_fragments", [])
    for profile in example["profiles"]:
        output = _outputs(example, profile)
        for part in parts:
            [entry] = [e for e in example["spec_text"] if e["part"] == part]
            assert output[part] == spec_json_text(entry).encode("utf-8"), f"{example['id']}: {part} bytes ({profile})"
        for frag in fragments:
            assert any(frag["text"] in e["text"] for e in example["spec_text"]), \
                f"{example['id']}: fragment not in spec_text"
            assert frag["text"].encode("utf-8") in output[frag["part"]], \
                f"{example['id']} ({profile}): {frag['part']} lacks {frag['text']!r}: {output[frag['part']][:300]!r}"


def test_doc_lists_every_example_with_its_status():
    doc = DOC.read_text(encoding="utf-8")
    rows = {}
    for line in doc.splitlines():
        m = re.match(r"\|\s*`([0-9a-z-]+)`\s*\|", line)
        if m:
            rows[m.group(1)] = line
    for path in FILES:
        ex = load(path)
        assert ex["id"] in rows, f"docs/spec-examples.md has no row for {ex['id']}"
        assert f"**{ex['status']}**" in rows[ex["id"]], f"docs/spec-examples.md: {ex['id']} is not **{ex['status']}**"
    assert set(rows) == {load(p)["id"] for p in FILES}


# --- the comparison rules the example files rely on ---------------------------------------------
def test_elided_object_matches_on_shown_keys_only():
    assert differences({"a": 1, "...": "..."}, {"a": 1, "b": 2}) == []
    assert differences({"a": 1}, {"a": 1, "b": 2}) == [".b: unexpected field 2"]
    assert differences({"a": 1, "...": "..."}, {"b": 2}) == [".a: missing (expected 1)"]


def test_elided_array_matches_listed_elements_in_order():
    assert differences(["x", "z", "..."], ["x", "y", "z", "w"]) == []
    assert differences(["z", "x", "..."], ["x", "y", "z"]) != []
    assert differences(["x"], ["x", "y"]) == ["<root>: expected 1 elements, got 2"]


def test_true_is_not_one_and_ignores_drop_wildcard_paths():
    assert differences(True, 1) and differences(1, 1.0) == []
    doc, gone = drop({"u": {"a": {"f": 1, "v": 2}, "b": {"f": 3}}}, ["*", "*", "f"])
    assert doc == {"u": {"a": {"v": 2}, "b": {}}} and gone == [".u.a.f", ".u.b.f"]


def test_legacy_base64_is_decoded_to_text():
    doc, done = decode_legacy({"u": {"val": {"v": "YWE="}}}, ["*", "val", "v"], "base64-utf8")
    assert doc == {"u": {"val": {"v": "aa"}}} and done == [".u.val.v"]
