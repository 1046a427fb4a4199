"""The fidelity matrix: TiDB type x encoding/option -> exact / lossy (how) / absent.

Rows are the declarations of the type catalogue (`type_catalogue.all_types_matrix`); columns are the
encodings of the default matrix and the sink options that change what a consumer can know of a
value (`COLUMNS`). Each cell comes from the protocol package's `describe_fidelity`, the same
knowledge its `project_value` applies in the differential check, and a lossy cell shows one edge
value the projection changes. tests/conformance/fidelity/test_fidelity_roundtrip.py verifies every cell by
encoding the type's edge values with the real encoder and decoding them with the reference
decoder: exact cells read back the identical canonical value, lossy ones the projection with at
least one edge changed, absent ones never the value.

Options that change rows rather than values (Open Protocol `output-old-value`, which drops the
update's old image) and version profiles that change nothing a decoder reads back are no column;
`UNPUBLISHED` lists them, and the round-trip test proves they decode every edge as their base
column does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ticdc_conformance.checks import value_forms
from ticdc_conformance.fidelity.roundtrip import canonical, same_value
from ticdc_conformance.protocols import protocol
from ticdc_contract.tidb_types import TiDBType
from ticdc_contract.type_catalogue import all_types_matrix
from ticdc_generators.pipeline import DEFAULT_MATRIX
from ticdc_generators.sink.config import SinkConfig
from ticdc_generators.values import SETTINGS, domain_for

LEVELS = ("exact", "lossy", "absent")
# Zones the edges are taken in: TIMESTAMP is printed in the upstream zone, and what is lost can
# depend on it (a zone behind UTC reaches below the smallest TIMESTAMP's wall clock).
ZONES = ("UTC", "America/New_York", "Asia/Kolkata")


@dataclass(frozen=True)
class MatrixColumn:
    """One column of the matrix: an encoding of the default matrix with some sink options changed."""

    name: str
    encoding: str
    changes: tuple[tuple[str, Any], ...] = ()  # SinkConfig field -> value, beyond the encoding's defaults
    version_profile: str = "ticdc"

    @property
    def protocol(self) -> str:
        return DEFAULT_MATRIX[self.encoding]["protocol"]

    def config(self, time_zone: str = "UTC") -> SinkConfig:
        return SinkConfig(topic="fidelity", partition_num=1, time_zone=time_zone,
                          version_profile=self.version_profile, **{**DEFAULT_MATRIX[self.encoding], **dict(self.changes)})

    def options(self, time_zone: str = "UTC") -> dict:
        """The sink options under TiCDC's names, as the projection and description read them; the
        version profile rides along for the description only (decoders read both generations)."""
        return {**self.config(time_zone).ticdc_options(), "version-profile": self.version_profile}

    def settings(self) -> dict:
        """What sets this column apart, under TiCDC's option names."""
        out = {k.replace("_", "-"): v for k, v in DEFAULT_MATRIX[self.encoding].items()}
        out.update({k.replace("_", "-"): v for k, v in self.changes})
        if self.version_profile != "ticdc":
            out["version-profile"] = self.version_profile
        return out

    def to_json(self) -> dict:
        return {"name": self.name, "encoding": self.encoding, "protocol": self.protocol,
                "options": self.settings()}


COLUMNS: tuple[MatrixColumn, ...] = (
    MatrixColumn("open-protocol", "open-protocol"),
    MatrixColumn("canal-json", "canal-json"),
    MatrixColumn("canal-json no-ext", "canal-json", (("enable_tidb_extension", False),)),
    MatrixColumn("canal-json compat", "canal-json", (("enable_tidb_extension", False), ("content_compatible", True))),
    MatrixColumn("debezium", "debezium"),
    MatrixColumn("debezium no-ext", "debezium", (("enable_tidb_extension", False),)),
    MatrixColumn("debezium no-schema", "debezium", (("debezium_disable_schema", True),)),
    MatrixColumn("simple-json", "simple-json"),
    MatrixColumn("simple-avro", "simple-avro"),
    # tiflow's Simple Avro writes BIT as a long, new TiCDC as a string (docs/version-profiles.md).
    MatrixColumn("simple-avro tiflow", "simple-avro", version_profile="tiflow"),
)


@dataclass(frozen=True)
class Unpublished:
    """A variant that is no column: it must decode every edge exactly as `same_as` does."""

    variant: MatrixColumn
    same_as: str
    why: str


UNPUBLISHED: tuple[Unpublished, ...] = (
    Unpublished(MatrixColumn("open-protocol no-old-value", "open-protocol", (("output_old_value", False),)),
                "open-protocol", "output-old-value=false drops an update's old image (\"p\"), not a value's fidelity"),
    *(Unpublished(MatrixColumn(f"{enc} tiflow", enc, version_profile="tiflow"), enc,
                  "the classic generation differs in layout (docs/version-profiles.md), not in the values read back")
      for enc in ("open-protocol", "canal-json", "debezium", "simple-json")),
)


def column(name: str) -> MatrixColumn:
    for c in COLUMNS + tuple(u.variant for u in UNPUBLISHED):
        if c.name == name:
            return c
    raise KeyError(f"no fidelity matrix column {name!r}; expected one of {', '.join(c.name for c in COLUMNS)}")


def edge_values(t: TiDBType, time_zone: str = "UTC") -> list:
    """The type's edge values, NULL and the values of permissive sql_modes included: the matrix
    speaks of everything TiDB can store."""
    return domain_for(t, nullable=True, time_zone=time_zone, allow=tuple(SETTINGS)).edges()


def zones_for(t: TiDBType) -> tuple[str, ...]:
    return ZONES if t.base == "timestamp" else ZONES[:1]


@dataclass(frozen=True)
class Cell:
    level: str
    why: str
    example: Optional[dict] = field(default=None)  # a lossy cell's edge: {"value", "read", "time_zone"}

    def to_json(self) -> dict:
        out = {"level": self.level, "why": self.why}
        if self.example is not None:
            out["example"] = self.example
        return out


def describe(t: TiDBType, col: MatrixColumn) -> tuple[str, str]:
    level, why = protocol(col.protocol).describe_fidelity(t, col.options())
    if level not in LEVELS:
        raise ValueError(f"{col.name} describes {t.sql()} as {level!r}, not one of {', '.join(LEVELS)}")
    return level, why


def lossy_example(t: TiDBType, col: MatrixColumn) -> Optional[dict]:
    """An edge value (in the zones of `zones_for`) the projection changes: one whose JSON type
    survives when there is one (a changed value tells more than a changed representation), else
    the one with the most characters (a DECIMAL with all its digits rather than '0')."""
    spec = protocol(col.protocol)
    changed = []
    for zone in zones_for(t):
        options = col.options(zone)
        for v in edge_values(t, zone):
            value = canonical(t, v)
            read = spec.project_value(t, value, options)
            if not same_value(read, value):
                changed.append({"value": value, "read": read, "time_zone": zone})
    if not changed:
        return None
    kept = [c for c in changed if _json_kind(c["value"]) == _json_kind(c["read"])]
    return kept[0] if kept else max(changed, key=lambda c: len(_text(c["value"])))


def _json_kind(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return repr(v)
    return "number" if isinstance(v, (int, float)) else type(v).__name__


def type_label(t: TiDBType) -> str:
    """The declaration as a row label: its SQL, which states a declared character set and
    collation, so the catalogue's same-length string variants differ."""
    return t.sql()


def cell(t: TiDBType, col: MatrixColumn) -> Cell:
    level, why = describe(t, col)
    return Cell(level, why, lossy_example(t, col) if level == "lossy" else None)


def matrix(types: Optional[list[TiDBType]] = None) -> dict:
    """{"columns": [...], "rows": [{"type": SQL, "cells": {column: cell}}]}, JSON-ready."""
    rows = [{"type": type_label(t), "cells": {c.name: cell(t, c).to_json() for c in COLUMNS}}
            for t in (types if types is not None else all_types_matrix())]
    return {"columns": [c.to_json() for c in COLUMNS], "rows": rows}


def _text(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _showable(example: Optional[dict]) -> bool:
    """Short examples fit a table cell; long or multi-line ones stay in the JSON."""
    if not example:
        return False
    texts = (_text(example["value"]), _text(example["read"]))
    return all(len(x) <= 40 and "`" not in x and "\n" not in x for x in texts)


def _noted_table(m: dict, cell: Callable[[Any, Callable[[str], int]], str]) -> str:
    """A type × column table whose cells cite their reasons by number, the reasons listed below it.
    `cell(content, note)` renders one cell; `note(why)` gives the reason's number."""
    names = [c["name"] for c in m["columns"]]
    out = ["| TiDB type | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    notes: dict[str, int] = {}

    def note(why: str) -> int:
        return notes.setdefault(why, len(notes) + 1)

    for r in m["rows"]:
        out.append(f"| {r['type']} | " + " | ".join(cell(r["cells"][name], note) for name in names) + " |")
    out.append("")
    out += [f"{n}. {why}" for why, n in notes.items()]
    return "\n".join(out) + "\n"


def to_markdown(m: dict) -> str:
    def cell(c: dict, note: Callable[[str], int]) -> str:
        if c["level"] == "exact":
            return "exact"
        ex = c.get("example")
        shown = f" `{_text(ex['value'])}`→`{_text(ex['read'])}`".replace("|", "\\|") if _showable(ex) else ""
        return f"{c['level']} [{note(c['why'])}]{shown}"

    return _noted_table(m, cell)


def columns_markdown() -> str:
    """The options of each column, for the page's legend."""
    lines = ["| column | TiCDC sink options |", "|---|---|"]
    for c in COLUMNS:
        opts = ", ".join(f"`{k}={_option(v)}`" for k, v in c.settings().items())
        lines.append(f"| {c.name} | {opts} |")
    return "\n".join(lines) + "\n"


def _option(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


# --- accepted forms (checks/value_forms.py) -----------------------------------------------------
NUMBER_WHY = ("a JSON number is compared by its value: an integral double equals its integer, and a "
              "float64 is the one the protocol carries whatever digits its writer chose (Go's encoding/json "
              "writes 2^63 as 9223372036854776000 and 1e21 as 1e+21)")


def accepted(t: TiDBType, col: MatrixColumn) -> list[dict]:
    """The representations a consumer of `col` may write for a value of `t` beside the projection
    itself: the carried number by value, then the upstream-value forms with their reasons."""
    options = col.options()
    out = []
    number = value_forms.carried_number(t, col.protocol, options)
    if number is not None:
        out.append({"form": "number", "why": NUMBER_WHY})
    out += [{"form": f, "why": why} for f, why in value_forms.accepted_forms(t, col.protocol, options).items()]
    return out


def forms_matrix(types: Optional[list[TiDBType]] = None) -> dict:
    """{"columns": [...], "rows": [{"type": SQL, "cells": {column: [{"form", "why"}]}}]}, JSON-ready."""
    rows = [{"type": type_label(t), "cells": {c.name: accepted(t, c) for c in COLUMNS}}
            for t in (types if types is not None else all_types_matrix())]
    return {"columns": [c.to_json() for c in COLUMNS], "rows": rows}


def forms_markdown(m: dict) -> str:
    """The forms of each type per column, each with the number of its reason below the table."""
    def cell(forms: list[dict], note: Callable[[str], int]) -> str:
        return ", ".join(f"{f['form']} [{note(f['why'])}]" for f in forms) or "as carried"

    return _noted_table(m, cell)


def forms_legend() -> str:
    lines = ["| form | what the consumer writes |", "|---|---|",
             "| number | the carried JSON number, in any spelling of the same value |"]
    lines += [f"| {name} | {form.what} |" for name, form in value_forms.FORMS.items()]
    return "\n".join(lines) + "\n"
