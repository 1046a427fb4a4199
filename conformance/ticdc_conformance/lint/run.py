"""The lint's one pass: records in, findings and a summary out."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from ticdc_contract.record import KafkaRecord

from .findings import NO_OFFSET, Findings
from .readers import Problem, Readers
from .settings import LintSettings
from .sources import RecordFiles, in_offset_order
from .stream import StreamChecker


@dataclass
class LintResult:
    findings: Findings
    summary: dict[str, Any]

    @property
    def failed(self) -> bool:
        """Whether a `required` rule is broken."""
        return self.findings.failed


def lint(records: Iterable[KafkaRecord], settings: LintSettings, findings: Optional[Findings] = None,
         partitions: Optional[Mapping[str, Iterable[int]]] = None) -> LintResult:
    """Checks `records` (each partition's in offset order, partitions interleaved in any way) against
    the rules of `settings.protocol`. `partitions` names topic-partitions known beforehand, so one
    that never gets a broadcast is found even if it holds no record."""
    findings = findings if findings is not None else Findings()
    stream = StreamChecker(settings, findings)
    for topic, numbers in (partitions or {}).items():
        stream.expect(topic, numbers)
    readers = Readers(settings)
    for record in in_offset_order(records):
        stream.record(record)
        read = readers.reader(record).read(record)
        for problem in read.problems:
            _report(findings, record.topic, record.partition, record.offset, problem)
        for event in read.events:
            stream.event(record, event)
    for topic, partition, problem in readers.finish():
        _report(findings, topic, partition, NO_OFFSET, problem)
    stream.finish()
    summary = {"protocol": settings.protocol, "encoding": settings.encoding, **stream.summary(),
               "findings": findings.by_rule()}
    return LintResult(findings, summary)


def _report(findings: Findings, topic: str, partition: int, offset: int, problem: Problem) -> None:
    """A reader's problem as a finding at its record (or at the earlier record it names)."""
    report = findings.info if problem.info else findings.violation
    report(problem.rule, topic, partition, problem.offset if problem.offset is not None else offset, problem.message)


def lint_record_files(directory: Path, settings: LintSettings, findings: Optional[Findings] = None) -> LintResult:
    files = RecordFiles(directory)
    return lint(files, settings, findings, files.partitions)
