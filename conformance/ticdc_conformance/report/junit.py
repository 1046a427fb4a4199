"""The JUnit XML report: a <testsuite> per case, a <testcase> per rule judged on it (docs/reports.md).

Each test case is named by its check id (`smoke/canal-json::CONSUMER-DELETE-1`), its class is
`ticdc-conformance.<scenario>.<encoding>`, so a CI tool's test history follows one rule on one case
from run to run. A failed rule is a <failure> whose text holds that rule's first findings (as `run`
prints them), how many more there are and the JSON files with all of them, and the replay command; a
consumer error is an <error>; a rule not judged (the consumer declined the case, errored, or showed
no applied log) and an expected failure are <skipped>, the latter with "expected failure: FILE:LINE".
A stale entry of the expected-failure list is a failing test case named by the entry, in a suite of
its own. Every suite's tests/failures/errors/skipped/time count its test cases, and the root's add up
the suites'.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable, Optional, Sequence

from ticdc_conformance.findings.case_ids import CONSUMER_ERROR_ID, FINAL_STATE_ONLY_ID
from ticdc_conformance.findings.expected import Judgement
from ticdc_conformance.runner import FINDINGS_SHOWN_PER_RULE, EncodingResult

from .checks import EXPECTED, FAILED, NOT_JUDGED, Check, RunChecks

MESSAGE_CHARS = 500  # the message attribute is one line in most CI views; the text holds the rest
EXPECTED_SUITE = "ticdc-conformance.expected-failures"
COUNTED = ("tests", "failures", "errors", "skipped")


def classname(result: EncodingResult) -> str:
    return f"ticdc-conformance.{result.scenario}.{result.encoding}"


def _one_line(text: str) -> str:
    line = (text or "").strip().split("\n", 1)[0]
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def check_text(result: EncodingResult, check: Check, full_list: Sequence[Path]) -> str:
    """What a failed (or expected) check shows: the verdict, the rule's first findings in the shared
    format (findings/finding.py), where the rest are, and the replay command. A case that failed as
    a whole (consumer error, final state only) shows its whole verdict."""
    if check.rule in (CONSUMER_ERROR_ID, FINAL_STATE_ONLY_ID):
        return result.render(FINDINGS_SHOWN_PER_RULE, full_list)
    lines = [result.verdict_line]
    shown = check.findings[:FINDINGS_SHOWN_PER_RULE]
    lines += ["\n".join("  " + line for line in f.render(result.context).splitlines()) for f in shown]
    more = len(check.findings) - len(shown)
    if more:
        where = " and ".join(str(p) for p in full_list) or "the JSON summary (--report)"
        lines.append(f"  … {more} more {check.rule} findings (the first {FINDINGS_SHOWN_PER_RULE} are shown; "
                     f"every finding is in {where})")
    suppressed = result.checkpoints.suppressed if result.checkpoints is not None else 0
    if suppressed and any(f.checkpoint is not None for f in check.findings):
        lines.append(f"  the checkpoint check counted {suppressed} more finding(s) of this case beyond its "
                     "per-rule limit, not listed")
    if check.status == FAILED and check.expected_by:
        lines.append(f"  some of these are expected ({', '.join(check.expected_by)}), the others are not")
    lines.append(f"  replay: {result.replay_command}")
    return "\n".join(lines)


def _system_out(result: EncodingResult) -> str:
    return "\n".join([result.verdict_line, f"records={result.records} consumer={result.consumer} "
                      f"{result.checkpoint_summary}"]
                     + ([f"consumer log: {result.consumer_log}"] if result.consumer_log is not None else [])
                     + ([f"result: {result.result_file}"] if result.result_file is not None else []))


def _testcase(suite: ET.Element, result: EncodingResult, check: Check, seconds: float,
              full_list: Sequence[Path]) -> None:
    case = ET.SubElement(suite, "testcase", classname=classname(result), name=check.id, time=f"{seconds:.3f}")
    if check.status == NOT_JUDGED:
        ET.SubElement(case, "skipped", message=_one_line(check.reason))
    elif check.status == EXPECTED:
        el = ET.SubElement(case, "skipped", message=_one_line("expected failure: " + ", ".join(check.expected_by)))
        el.text = check_text(result, check, full_list)
    elif check.status == FAILED and check.rule == CONSUMER_ERROR_ID:
        el = ET.SubElement(case, "error", type=CONSUMER_ERROR_ID,
                           message=_one_line(f"consumer error: {result.error or ''}"))
        el.text = check_text(result, check, full_list)
    elif check.status == FAILED:
        first = check.findings[0] if check.findings else None
        where = f"{first.table} key={json.dumps(first.key, ensure_ascii=False)}: " if first and first.key else ""
        message = (result.verdict_line if check.rule == FINAL_STATE_ONLY_ID
                   else f"{len(check.failures)} {check.rule} finding(s); replay: {result.replay_command}; first: "
                        f"{where}{check.failures[0].message if check.failures else ''}")
        el = ET.SubElement(case, "failure", type=check.rule, message=_one_line(message))
        el.text = check_text(result, check, full_list)
    ET.SubElement(case, "system-out").text = _system_out(result)


def _count(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    suite.set("errors", str(sum(c.find("error") is not None for c in cases)))
    suite.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
    suite.set("time", f"{sum(float(c.attrib['time']) for c in cases):.3f}")


def _stale_suite(root: ET.Element, judgement: Judgement) -> None:
    suite = ET.SubElement(root, "testsuite", name=EXPECTED_SUITE)
    for entry in judgement.stale:
        case = ET.SubElement(suite, "testcase", classname=EXPECTED_SUITE, name=str(entry), time="0.000")
        where = judgement.where(entry)
        el = ET.SubElement(case, "failure", type="stale-expected-failure",
                           message=_one_line(f"stale entry {where}: it matched no failure, the consumer now passes "
                                             "there"))
        el.text = (f"{where}: {entry} is listed as an expected failure, but no failure of this run matched it.\n"
                   "Remove the line (or run with --update-expected-failures) so the list names only what still "
                   "fails (docs/expected-failures.md).")
    _count(suite)


def junit_tree(checks: RunChecks, name: str,
               full_list: Callable[[EncodingResult], Sequence[Path]]) -> ET.ElementTree:
    """<testsuites> with a <testsuite> per case (and one for stale entries of the list)."""
    root = ET.Element("testsuites", name=f"ticdc-conformance.{name}")
    for result, case_checks in checks.cases:
        suite = ET.SubElement(root, "testsuite", name=result.case_id)
        props = ET.SubElement(suite, "properties")
        for key, value in (("scenario", result.scenario), ("seed", result.seed), ("encoding", result.encoding),
                           ("consumer", result.consumer), ("outcome", result.outcome),
                           ("replay", result.replay_command)):
            ET.SubElement(props, "property", name=key, value=str(value))
        # The case runs once for all its checks; its time is shared out among them so the sums hold.
        share = result.seconds / len(case_checks) if case_checks else 0.0
        for check in case_checks:
            _testcase(suite, result, check, share, full_list(result))
        _count(suite)
    judgement: Optional[Judgement] = checks.judgement
    if judgement is not None and judgement.stale:
        _stale_suite(root, judgement)
    suites = root.findall("testsuite")
    for key in COUNTED:
        root.set(key, str(sum(int(s.attrib[key]) for s in suites)))
    root.set("time", f"{sum(float(s.attrib['time']) for s in suites):.3f}")
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(path: Path, checks: RunChecks, name: str,
                full_list: Callable[[EncodingResult], Sequence[Path]]) -> None:
    junit_tree(checks, name, full_list).write(path, encoding="utf-8", xml_declaration=True)
