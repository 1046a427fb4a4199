"""The golden corpus as data: which scenarios, which option variants, and what each case covers.

A case is one scenario (seed, size) encoded under one variant, written to
`golden/<scenario>/<variant>/`. A variant is an encoding of the default matrix
(ticdc_generators.pipeline.DEFAULT_MATRIX) plus TiCDC sink options under TiCDC's own names, so
adding a variant is one line in VARIANTS; each changes one thing against its encoding's default
(one feature per case folder). Rule ids name the rule catalogue (rules/catalogue/); the case's
level is the strongest level among its rules.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Iterator, Mapping, Optional

from ticdc_generators.pipeline import config_for, encoding_names
from ticdc_generators.scenarios import SCENARIOS as SCENARIO_CLASSES
from ticdc_generators.scenarios.large import DEFAULT_EVENTS as LARGE_DEFAULT_EVENTS
from ticdc_generators.sink.config import SIMULATOR_SETTINGS, SinkConfig

from ticdc_conformance.rules.catalogue import default_catalogue


@dataclass(frozen=True)
class Variant:
    name: str  # the case folder under golden/<scenario>/
    encoding: str  # an encoding of the default matrix
    options: Mapping[str, Any]  # TiCDC sink options on top of the encoding's defaults
    feature: str  # what the variant exercises, in one sentence
    rules: tuple[str, ...]
    notes: tuple[str, ...] = ()  # what the options do to the events a consumer sees


_OPEN = ("OPEN-ROW-1", "OPEN-ROW-3", "OPEN-BROADCAST-1", "OPEN-WATERMARK-2")
_CANAL = ("CANAL-KIND-1", "CANAL-KIND-2", "CANAL-DISPATCH-1", "CANAL-OLD-2")
_DBZ = ("DBZ-DML-2", "DBZ-DML-3", "DBZ-DML-4", "DBZ-DML-5", "DBZ-BROADCAST-1", "DBZ-WATERMARK-1")
_SIMPLE = ("SIMPLE-SCHEMACACHE-1", "SIMPLE-SCHEMACACHE-2", "SIMPLE-SCHEMACACHE-3", "SIMPLE-DML-3",
           "SIMPLE-BOOTSTRAP-8", "SIMPLE-WATERMARK-1", "SIMPLE-BROADCAST-1")
_TO_PARTITION_0 = ("SIMPLE-BOOTSTRAP-4", "SIMPLE-BOOTSTRAP-11")
_PARTITION_0_NOTE = ("BOOTSTRAP messages go to partition 0 only; the other partitions' rows are read through the "
                     "schemas their DDL messages carried",)

VARIANTS: tuple[Variant, ...] = (
    Variant("open-protocol", "open-protocol", {}, "Open Protocol with the old value (output-old-value = true, the default)", _OPEN + ("OPEN-ROW-2",)),
    Variant("open-protocol-no-old-value", "open-protocol", {"output-old-value": False}, "Open Protocol without the old value: no \"p\" on updates", _OPEN + ("OPEN-ROW-2",), ("an UPDATE carries no old row (\"p\"), so an INSERT and an UPDATE are the same \"u\" event: op update, before null (an upsert by handle key)",)),
    Variant("canal-json", "canal-json", {"enable-tidb-extension": True}, "Canal-JSON with the TiDB extension: commitTs and WATERMARK events", _CANAL + ("CANAL-EXTENSION-2", "CANAL-EXTENSION-3", "CANAL-WATERMARK-2", "CANAL-WATERMARK-3")),
    Variant("canal-json-no-tidb-extension", "canal-json", {"enable-tidb-extension": False}, "Canal-JSON as the official Canal writes it: no _tidb field, no commit ts, no WATERMARK", _CANAL + ("CANAL-EXTENSION-1", "CANAL-WATERMARK-2"), ("no commit ts and no WATERMARK: events can only be applied in arrival order, each row event on its own",)),
    Variant("canal-json-content-compatible", "canal-json", {"enable-tidb-extension": True, "content-compatible": True}, "Canal-JSON content-compatible: full mysqlType (ENUM/SET members) and only changed columns in old", _CANAL + ("CANAL-COMPAT-1", "CANAL-COMPAT-2", "CANAL-EXTENSION-3"), ("old holds the changed columns only; the row before an UPDATE is data overlaid with old",)),
    Variant("debezium", "debezium", {"enable-tidb-extension": True}, "Debezium with its schema and the TiDB extension", _DBZ + ("DBZ-SCHEMA-1", "DBZ-EXTENSION-2")),
    Variant("debezium-no-schema", "debezium", {"enable-tidb-extension": True, "debezium-disable-schema": True}, "Debezium without the schema part (debezium-disable-schema = true)", _DBZ + ("DBZ-SCHEMA-4",), ("without the schema a value's semantic type is unknown: temporal values stay Debezium's numbers and strings, BIT(n>1) its base64 text, a BIGINT UNSIGNED above 2^63-1 negative (fidelity.values lists the types)",)),
    Variant("simple-json", "simple-json", {"send-bootstrap-to-all-partition": True}, "Simple JSON, BOOTSTRAP to every partition (the default)", _SIMPLE + _TO_PARTITION_0),
    Variant("simple-json-bootstrap-partition-0", "simple-json", {"send-bootstrap-to-all-partition": False}, "Simple JSON, BOOTSTRAP to partition 0 only", _SIMPLE + _TO_PARTITION_0, _PARTITION_0_NOTE),
    Variant("simple-avro", "simple-avro", {"send-bootstrap-to-all-partition": True}, "Simple Avro, BOOTSTRAP to every partition (the default)", _SIMPLE + _TO_PARTITION_0 + ("SIMPLE-AVRO-1",)),
    Variant("simple-avro-bootstrap-partition-0", "simple-avro", {"send-bootstrap-to-all-partition": False}, "Simple Avro, BOOTSTRAP to partition 0 only", _SIMPLE + _TO_PARTITION_0 + ("SIMPLE-AVRO-1",), _PARTITION_0_NOTE),
)

# The encodings' default variants (one folder per encoding): wide-rows keeps to these, since each
# variant of it adds megabytes of base64 (its large values travel in the records, the applied log
# and the final state).
DEFAULTS = tuple(v.name for v in VARIANTS if v.name in encoding_names())


@dataclass(frozen=True)
class ScenarioCases:
    seed: int = 1
    events: Optional[int] = None  # the scenario's size (`generate --events`); None: its default
    variants: Optional[tuple[str, ...]] = None  # None: every variant
    rules: tuple[str, ...] = ()
    note: str = ""
    max_value_bytes: Optional[int] = None  # rows with a longer value are left out (cap.py)


# Every scenario `ticdc-conformance scenarios` lists has an entry (cases() refuses one without).
SCENARIO_CASES: dict[str, ScenarioCases] = {
    "smoke": ScenarioCases(rules=("CONSUMER-DDL-1", "CONSUMER-DDL-2", "CONSUMER-ORDER-1")),
    "types": ScenarioCases(events=5, rules=("CONSUMER-ORDER-1",), max_value_bytes=1024,
                           note="the edge values beyond the cap (1 MiB MEDIUMTEXT/LONGTEXT/MEDIUMBLOB/LONGBLOB, 64 KiB "
                                "TEXT/BLOB/VARCHAR) would make each case tens of MiB; scenario wide-rows carries large "
                                "values"),
    "keys": ScenarioCases(events=40, rules=("CONSUMER-ORDER-1", "OPEN-DISPATCH-1")),
    "ddl-evolution": ScenarioCases(events=5, rules=("CONSUMER-DDL-1", "CONSUMER-DDL-2")),
    "multi-table": ScenarioCases(events=40, rules=("CONSUMER-DDL-1", "CONSUMER-DDL-2", "CONSUMER-ORDER-1")),
    "wide-rows": ScenarioCases(seed=4, events=3, variants=DEFAULTS, rules=("CONSUMER-ORDER-1",),
                               note="a seed whose values stay at or below 64 KiB (the scenario draws up to 256 KiB), and "
                                    "the encodings' default variants only: each variant of this scenario adds "
                                    "megabytes of base64 to the corpus"),
    "replays": ScenarioCases(events=120, rules=("KAFKA-DELIVERY-1", "CONSUMER-DEDUP-1", "CONSUMER-DEDUP-2",
                                                "CONSUMER-LOSS-1")),
    "large": ScenarioCases(events=300, rules=("CONSUMER-ORDER-1", "CONSUMER-LOSS-1"),
                           note=f"a small size: the scenario's default is {LARGE_DEFAULT_EVENTS:,} row events"),
}
# Rules every case covers, and those that need a commit ts or watermarks to mean anything.
COMMON_RULES = ("CONSUMER-STATE-1",)
NEEDS_WATERMARK = frozenset({"CONSUMER-CHECKPOINT-1", "CONSUMER-WATERMARK-1", "CONSUMER-DEDUP-1", "CONSUMER-DEDUP-2"})
WATERMARK_RULES = ("CONSUMER-CHECKPOINT-1", "CONSUMER-WATERMARK-1")
NEEDS_COMMIT_TS = frozenset({"CONSUMER-ORDER-1", "CONSUMER-DDL-2", "CONSUMER-LOSS-1"})


class GoldenMatrixError(ValueError):
    """The matrix names something that does not exist (a scenario, encoding, option or rule)."""


@dataclass(frozen=True)
class Case:
    scenario: str
    variant: Variant
    seed: int
    events: Optional[int]
    note: str = ""
    scenario_rules: tuple[str, ...] = field(default=())
    max_value_bytes: Optional[int] = None

    @property
    def path(self) -> str:
        return f"{self.scenario}/{self.variant.name}"

    def config(self) -> SinkConfig:
        return variant_config(self.scenario, self.variant)

    def rules(self, ordering: str) -> list[str]:
        """The rule ids the case covers once its ordering is known (watermark, commit-ts, arrival)."""
        ids = list(dict.fromkeys(COMMON_RULES + self.scenario_rules + self.variant.rules
                                 + (WATERMARK_RULES if ordering == "watermark" else ())))
        if ordering != "watermark":
            ids = [i for i in ids if i not in NEEDS_WATERMARK]
        if ordering == "arrival":
            ids = [i for i in ids if i not in NEEDS_COMMIT_TS]
        return ids


def option_fields(options: Mapping[str, Any]) -> dict[str, Any]:
    """TiCDC option names -> SinkConfig fields (TiCDC's name with '-' turned into '_')."""
    known = {f.name for f in fields(SinkConfig)} - set(SIMULATOR_SETTINGS)
    out = {}
    for name, value in options.items():
        attr = name.replace("-", "_")
        if attr not in known:
            raise GoldenMatrixError(f"unknown TiCDC sink option {name!r} in the golden matrix")
        out[attr] = value
    return out


def variant_config(scenario: str, variant: Variant) -> SinkConfig:
    if variant.encoding not in encoding_names():
        raise GoldenMatrixError(f"variant {variant.name}: unknown encoding {variant.encoding!r}")
    return replace(config_for(scenario, variant.encoding), **option_fields(variant.options))


def _check_rules(ids: tuple[str, ...], where: str) -> None:
    catalogue = default_catalogue()
    for rule_id in ids:
        if rule_id not in catalogue:
            raise GoldenMatrixError(f"{where}: rule {rule_id} is not in the rule catalogue")


def level_of(rule_ids: list[str]) -> str:
    catalogue = default_catalogue()
    return "required" if any(catalogue.get(i).level == "required" for i in rule_ids) else "recommended"


def cases() -> Iterator[Case]:
    """Every case of the corpus, scenario by scenario in name order, variants in matrix order."""
    names = [v.name for v in VARIANTS]
    if len(set(names)) != len(names):
        raise GoldenMatrixError("two variants share a folder name")
    _check_rules(COMMON_RULES + WATERMARK_RULES, "common rules")
    for v in VARIANTS:
        _check_rules(v.rules, f"variant {v.name}")
    for scenario in sorted(SCENARIO_CLASSES):
        spec = SCENARIO_CASES.get(scenario)
        if spec is None:
            raise GoldenMatrixError(f"scenario {scenario} has no entry in golden_matrix.SCENARIO_CASES")
        _check_rules(spec.rules, f"scenario {scenario}")
        unknown = set(spec.variants or ()) - set(names)
        if unknown:
            raise GoldenMatrixError(f"scenario {scenario} names unknown variants {sorted(unknown)}")
        for v in VARIANTS:
            if spec.variants is None or v.name in spec.variants:
                yield Case(scenario, v, spec.seed, spec.events, spec.note, spec.rules, spec.max_value_bytes)
    stale = set(SCENARIO_CASES) - set(SCENARIO_CLASSES)
    if stale:
        raise GoldenMatrixError(f"golden_matrix.SCENARIO_CASES names unknown scenarios {sorted(stale)}")
