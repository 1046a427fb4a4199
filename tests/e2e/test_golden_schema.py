"""The committed corpus is valid against the JSON Schemas in golden/schema/ (draft 2020-12), and the
schemas are strict enough to reject what a broken corpus would hold."""
import json
from pathlib import Path

import orjson
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.conftest import ROOT

GOLDEN = ROOT / "golden"
SCHEMAS = GOLDEN / "schema"
CASES = sorted(p.parent for p in GOLDEN.glob("*/*/case.json"))


def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        doc = json.loads(path.read_text())
        resource = Resource.from_contents(doc)
        # Reachable both by $id and by the relative file name the schemas use in $ref.
        resources += [(doc["$id"], resource), (path.name, resource)]
    return Registry().with_resources(resources)


REGISTRY = _registry()


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=REGISTRY)


def errors(v: Draft202012Validator, doc, where: str) -> list[str]:
    return [f"{where}: {'/'.join(map(str, e.absolute_path))}: {e.message}"[:400] for e in v.iter_errors(doc)]


def ndjson_errors(v: Draft202012Validator, path: Path, limit: int | None = None) -> list[str]:
    out = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if limit is not None and n > limit:
                break
            out += errors(v, orjson.loads(line), f"{path.relative_to(GOLDEN)} line {n}")
    return out


def test_every_schema_is_a_valid_draft_2020_12_schema():
    names = sorted(p.name for p in SCHEMAS.glob("*.schema.json"))
    assert names == ["applied.schema.json", "case.schema.json", "index.schema.json", "record.schema.json",
                     "row.schema.json"]
    for name in names:
        schema = json.loads((SCHEMAS / name).read_text())
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(schema)


def test_every_case_json_and_the_index_are_valid():
    assert len(CASES) >= 80
    v = validator("case.schema.json")
    problems = [e for case in CASES for e in errors(v, json.loads((case / "case.json").read_text()), str(case))]
    problems += errors(validator("index.schema.json"), json.loads((GOLDEN / "index.json").read_text()), "index.json")
    assert not problems, "\n".join(problems[:20])


def _lines_of_every_case(limit: int | None) -> list[str]:
    record, applied, row = validator("record.schema.json"), validator("applied.schema.json"), validator("row.schema.json")
    problems = []
    for case in CASES:
        doc = json.loads((case / "case.json").read_text())
        problems += ndjson_errors(record, case / doc["files"]["records"], limit)
        problems += ndjson_errors(applied, case / doc["files"]["applied"], limit)
        for final in doc["files"]["final"]:
            problems += ndjson_errors(row, case / final, limit)
        if problems:
            break
    return problems


def test_the_first_lines_of_every_ndjson_file_are_valid():
    problems = _lines_of_every_case(limit=20)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.slow
def test_every_line_of_every_ndjson_file_is_valid():
    problems = _lines_of_every_case(limit=None)
    assert not problems, "\n".join(problems[:20])


def test_the_schemas_reject_broken_lines():
    case = GOLDEN / "smoke" / "canal-json"
    record = orjson.loads((case / "records.ndjson").read_bytes().splitlines()[0])
    applied = [orjson.loads(x) for x in (case / "expected" / "applied.ndjson").read_bytes().splitlines()]
    txn = next(e for e in applied if e["kind"] == "txn")
    checkpoint = next(e for e in applied if e["kind"] == "checkpoint")
    broken = [
        ("record.schema.json", dict(record, value="not base64!")),
        ("record.schema.json", dict(record, partition=-1)),
        ("record.schema.json", {k: v for k, v in record.items() if k != "headers"}),
        ("applied.schema.json", dict(txn, rows=[])),
        ("applied.schema.json", dict(txn, rows=[dict(txn["rows"][0], op="upsert")])),
        ("applied.schema.json", dict(txn, rows=[dict(txn["rows"][0], op="delete", before=None)])),
        ("applied.schema.json", dict(checkpoint, ts="12")),
        ("applied.schema.json", {"kind": "watermark", "ts": 1}),
        ("row.schema.json", {"id": [1, 2]}),
        ("case.schema.json", dict(json.loads((case / "case.json").read_text()), level="optional")),
    ]
    for name, doc in broken:
        assert errors(validator(name), doc, name), f"{name} accepted {str(doc)[:200]}"
