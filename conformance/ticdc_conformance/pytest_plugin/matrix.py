"""The cases `pytest --ticdc-consumer=SPEC` collects: scenario × encoding × variant, where the variants
are every changefeed file × every time zone (findings/case_ids.py names them as `run` does, so one
expected-failure list serves both). Every option is checked here, before anything runs, and a bad one
is a usage error naming the option."""
from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest

from ticdc_conformance.findings.case_ids import case_id, variant_label


@dataclass(frozen=True)
class Case:
    """One case to run: what `run_encoding` takes for it, and its id."""

    scenario: str
    encoding: str
    time_zone: str
    changefeed: Optional[Path]
    variant: str
    config: object  # the SinkConfig, the changefeed file applied
    digest: Optional[str]  # names the case folder apart from the other variants'

    @property
    def id(self) -> str:
        return case_id(self.scenario, self.encoding, self.variant)

    @property
    def config_args(self) -> str:
        """The options beyond scenario, seed, encoding and time zone, for the replay command."""
        import shlex

        return f"--changefeed {shlex.quote(str(self.changefeed))}" if self.changefeed is not None else ""


def split_list(values: Sequence[str]) -> list[str]:
    """`--ticdc-scenario a,b --ticdc-scenario c` -> [a, b, c], without repeats."""
    return list(dict.fromkeys(v.strip() for value in values for v in value.split(",") if v.strip()))


def encodings_of(protocol: str) -> list[str]:
    from ticdc_contract.protocols import encodings_named

    try:
        return encodings_named(protocol)
    except ValueError as e:
        raise pytest.UsageError(f"--ticdc-protocol: {e}") from None


def parse_schedule(spec: Optional[str], seed: int):
    """The schedule `--ticdc-schedule` names, seeded with `--ticdc-seed` unless it names a seed (as
    `run --schedule` does, so the variant label is the same)."""
    if spec is None:
        return None
    from ticdc_conformance.delivery import Schedule

    try:
        schedule = Schedule.parse(spec)
    except ValueError as e:
        raise pytest.UsageError(f"--ticdc-schedule: {e}") from None
    _, _, options = spec.partition(":")
    named = any(part.partition("=")[0].strip() == "seed" for part in options.split(","))
    return schedule if named else replace(schedule, seed=seed)


def cases(scenarios: Sequence[str], protocol: str, changefeeds: Sequence[Path], time_zones: Sequence[str],
          schedule=None) -> list[Case]:
    """Every case, in report order: scenario, encoding, then variant (changefeed file, time zone);
    `schedule` (parse_schedule's) labels every variant."""
    from ticdc_conformance.folders import options_digest
    from ticdc_generators.errors import ChangefeedFailure
    from ticdc_generators.pipeline import configure
    from ticdc_generators.scenarios import SCENARIOS
    from ticdc_generators.sink.changefeed import ChangefeedConfigError

    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown:
        raise pytest.UsageError(f"--ticdc-scenario: unknown scenario {', '.join(map(repr, unknown))}; "
                                f"known: {', '.join(sorted(SCENARIOS))}")
    for zone in time_zones:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise pytest.UsageError(f"--ticdc-time-zone {zone!r}: not a time zone name (IANA, e.g. Asia/Shanghai)"
                                    ) from None
    for path in changefeeds:
        if not path.is_file():
            raise pytest.UsageError(f"--ticdc-changefeed {path}: no such file")
    out: list[Case] = []
    for scenario, encoding in itertools.product(scenarios, encodings_of(protocol)):
        for changefeed, time_zone in itertools.product(list(changefeeds) or [None], list(time_zones) or ["UTC"]):
            try:
                config = configure(scenario, encoding, time_zone, changefeed)
            except (ChangefeedConfigError, ChangefeedFailure, ValueError) as e:
                where = f"--ticdc-changefeed {changefeed}" if changefeed is not None else f"--ticdc-time-zone {time_zone}"
                hint = ("; a changefeed file that names its protocol goes with --ticdc-protocol naming it"
                        if changefeed is not None and protocol == "all" else "")
                raise pytest.UsageError(f"{where} ({scenario}/{encoding}): {e}{hint}") from None
            variant = variant_label(time_zone, changefeed.stem if changefeed is not None else None,
                                    schedule=schedule.spec() if schedule is not None else None)
            # A changefeed file counts by its content, as in `run`: two files of one name never share a folder.
            text = hashlib.sha256(changefeed.read_bytes()).hexdigest() if changefeed is not None else None
            digest = options_digest([variant, text]) if variant else None
            out.append(Case(scenario, encoding, time_zone, changefeed, variant, config, digest))
    seen: dict[str, Case] = {}
    for case in out:
        if case.id in seen and seen[case.id].changefeed != case.changefeed:
            raise pytest.UsageError(f"--ticdc-changefeed {seen[case.id].changefeed} and {case.changefeed} give one "
                                    f"case id {case.id}: a case is named by the file's name; rename one")
        seen[case.id] = case
    return list(seen.values())
