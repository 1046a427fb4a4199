"""Regression cases: a shrunk fuzz failure saved in the golden corpus's language-agnostic format
(docs/golden-format.md), plus what replays it: the configuration, the delivery schedule and the
simulator's seed.

    DIR/<encoding>/<case>/
      case.json                 golden case.json fields, plus `config` (every SinkConfig field),
                                `schedule` (its spec, docs/delivery-schedules.md), `found` (the
                                consumer, the fuzz seed, the verdict) and `replay`
      records.ndjson            the input, one Kafka record per line
      expected/applied.ndjson   the applied log a conformant consumer writes
      expected/final/           the tables at the end
      truth/                    the upstream history (history.ndjson, tables.ndjson) and its final tables

A case is read back from its truth and case.json alone (`load_case`): the history is
truth/history.ndjson read as the model's events, so replaying never needs the strategy that drew it.
Cases sit two folders deep (DIR/<encoding>/<case>) so the golden corpus's own `scenario/variant`
cases and these never mix.
"""
from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import asdict, fields
from pathlib import Path
from typing import Iterator

from ticdc_conformance.checks.checkpoints import unjudged_by_table
from ticdc_conformance.delivery import Schedule
from ticdc_conformance.folders import recreate
from ticdc_conformance.golden.corpus import CASE_FORMAT, record_line, write_case_files
from ticdc_conformance.golden.expected import READ_ORDER, GoldenExpectationError, expected_output, ordering_note
from ticdc_conformance.golden.trace import simulate_history
from ticdc_conformance.protocols.common.projection import with_version_profile
from ticdc_contract.canonical import dumps_line
from ticdc_contract.truth import read_history
from ticdc_generators.pipeline import GENERATOR_VERSION
from ticdc_generators.sink.config import ColumnSelector, DispatchRule, SinkConfig

from .space import FuzzCase, base_config

REGRESSION_FORMAT = "ticdc-conformance/fuzz-regression-v1"
CASE_FILE = "case.json"


class RegressionCaseError(ValueError):
    """A folder that is not a regression case `fuzz` wrote."""


def config_to_json(config: SinkConfig) -> dict:
    return asdict(config)


def config_from_json(doc: dict) -> SinkConfig:
    known = {f.name for f in fields(SinkConfig)}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise RegressionCaseError(f"unknown SinkConfig field(s) {', '.join(unknown)}")
    values = dict(doc)
    values["dispatchers"] = tuple(DispatchRule(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})
                                  for d in doc.get("dispatchers", ()))
    values["column_selectors"] = tuple(ColumnSelector(matcher=tuple(c["matcher"]), columns=tuple(c["columns"]))
                                       for c in doc.get("column_selectors", ()))
    return SinkConfig(**values)


def changed_options(config: SinkConfig) -> dict:
    """The configuration's fields that differ from the encoding's default (what the fuzz drew)."""
    base = asdict(base_config(config.encoding))
    return {k: v for k, v in asdict(config).items() if base.get(k) != v}


def case_name(case: FuzzCase) -> str:
    """A name fixed by what the case is: the same shrunk failure found twice is one file."""
    digest = hashlib.sha256()
    for line in (json.dumps(config_to_json(case.config), sort_keys=True), case.schedule.spec(), str(case.seed),
                 repr(case.history)):
        digest.update(line.encode())
    return f"case-{digest.hexdigest()[:12]}"


def replay_command(folder: Path, consumer: str) -> str:
    return f"ticdc-conformance fuzz --replay {shlex.quote(str(folder))} --consumer {shlex.quote(consumer)}"


def write_case(case: FuzzCase, root: Path, found: dict) -> Path:
    """Writes ROOT/<encoding>/<case>/ (replacing one of that name); returns the folder.
    `found`: the consumer, fuzz seed and verdict that made it a regression."""
    config = case.config
    target = recreate(Path(root) / config.encoding / case_name(case))
    options = with_version_profile(config.ticdc_options(), config.version_profile)
    trace = simulate_history(case.history, config, case.seed, target / "truth")
    hidden = unjudged_by_table(target / "truth", options)
    try:
        expected = expected_output(trace, config.protocol, options, hidden)
    except GoldenExpectationError as e:
        expected, why = None, str(e)
    if expected is not None:
        finals = write_case_files(target, trace, expected)
        expected_doc = {"ordering": expected.ordering, "read_order": READ_ORDER, **expected.counts()}
        notes = ordering_note(expected, trace.restarts)
        undetermined = expected.undetermined
    else:  # the records alone; the checks judge a replay against the truth
        write_records(target, trace.records)
        finals, expected_doc, notes, undetermined = [], {"ordering": None, "why_none": why}, [why], {}
    doc = {
        "format": CASE_FORMAT,
        "regression_format": REGRESSION_FORMAT,
        "case": f"regressions/{config.encoding}/{target.name}",
        "description": f"A consumer failed this case under `fuzz` ({found.get('verdict', '')}). A conformant "
                       "consumer reading records.ndjson in the order of `schedule` writes expected/applied.ndjson "
                       "and the tables under expected/final/.",
        "scenario": "fuzz",
        "seed": case.seed,
        "events": None,
        "size": case.size,
        "encoding": config.encoding,
        "protocol": config.protocol,
        "options": changed_options(config),
        "sink": options,
        "config": config_to_json(config),
        "schedule": case.schedule.spec(),
        "generator": {"version": GENERATOR_VERSION, "version_profile": config.version_profile,
                      "watermark_interval_ms": config.watermark_interval_ms,
                      "interleave_tables": config.interleave_tables, "failovers": config.failovers,
                      "failover_spacing": config.failover_spacing, "checkpoint_lag": config.checkpoint_lag,
                      "restarts": trace.restarts},
        "topics": trace.topics,
        "records": len(trace.records),
        "expected": expected_doc,
        "fidelity": {"notes": notes, "undetermined_tables": undetermined,
                     "unjudged_columns": {f"{s}.{t}": sorted(c) for (s, t), c in sorted(hidden.items()) if c}},
        "found": found,
        "replay": replay_command(target, found.get("consumer", "CONSUMER")),
        "files": {"records": "records.ndjson", "applied": "expected/applied.ndjson" if finals else None,
                  "final": finals, "history": "truth/history.ndjson"},
    }
    (target / CASE_FILE).write_text(json.dumps(doc, indent=2, ensure_ascii=False, default=list) + "\n")
    return target


def write_records(target: Path, records) -> None:
    with open(target / "records.ndjson", "wb") as f:
        for r in sorted(records, key=lambda r: (r.topic, r.partition, r.offset)):
            f.write(dumps_line(record_line(r)))


def load_case(folder: Path) -> FuzzCase:
    """The FuzzCase a regression folder holds (RegressionCaseError naming the file otherwise)."""
    folder = Path(folder)
    path = folder / CASE_FILE
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RegressionCaseError(f"{path}: not a regression case written by `fuzz`: {e}") from None
    if not isinstance(doc, dict) or doc.get("regression_format") != REGRESSION_FORMAT:
        raise RegressionCaseError(f"{path}: not a regression case written by `fuzz` "
                                  f"(regression_format is not {REGRESSION_FORMAT!r})")
    try:
        config = config_from_json(doc["config"])
        schedule = Schedule.parse(doc["schedule"])
        history = tuple(read_history(folder / "truth"))
    except (KeyError, TypeError, ValueError, OSError) as e:
        raise RegressionCaseError(f"{path}: cannot be read back: {type(e).__name__}: {e}") from None
    return FuzzCase(history, config, schedule, int(doc["seed"]))


def iter_cases(root: Path) -> Iterator[Path]:
    """The regression case folders under ROOT (ROOT/<encoding>/<case>/case.json), in path order."""
    return iter(sorted(p.parent for p in Path(root).glob(f"*/*/{CASE_FILE}")))
