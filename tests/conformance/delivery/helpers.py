"""What the delivery tests share: a case's manifest, a delivery of it, the records its polls deliver."""
import json
from pathlib import Path

from ticdc_conformance.delivery import Delivery, Poll, Schedule


def manifest_of(case: Path) -> dict:
    return json.loads((case / "manifest.json").read_text())


def delivery(case: Path, spec: str) -> Delivery:
    return Delivery(Schedule.parse(spec), case / "records", manifest_of(case), case / "truth")


def delivered(steps) -> list:
    """The records of the Poll steps, in delivery order."""
    return [r for step in steps if isinstance(step, Poll) for r in step.records]
