"""Run reports: a JUnit XML file (one test case per encoding) and a JSON summary.

They render what runner.py's EncodingResult holds, so they sit beside the runner in the entry-point
layer (the verdict layer below may not import the runner).

The JSON summary keeps every finding; the JUnit text shows the first findings of each rule, as
`run` prints them, and names the files with the rest. A final-state-only outcome is a failure unless
--final-state-only accepted it; then the test case passes and its output says so.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

from ticdc_conformance.findings.outcome import (
    CONSUMER_ERROR,
    FINAL_STATE_ONLY,
    NOT_APPLICABLE,
    NOT_CONFORMANT,
    overall_exit,
)
from ticdc_conformance.runner import FINDINGS_SHOWN_PER_RULE, EncodingResult


def report_paths(directory: Path, name: str) -> dict[str, Path]:
    directory = Path(directory)
    return {"junit": directory / f"{name}.junit.xml", "summary": directory / f"{name}.summary.json"}


def full_list_files(result: EncodingResult, report: dict[str, Path] | None) -> list[Path]:
    """The JSON files that hold every finding of a result: its case's result.json, the summary."""
    return ([result.result_file] if result.result_file is not None and result.result_file.exists() else []) \
        + ([report["summary"]] if report is not None else [])


def write_reports(results: Sequence[EncodingResult], directory: Path, name: str = "conformance") -> dict[str, Path]:
    paths = report_paths(directory, name)
    paths["junit"].parent.mkdir(parents=True, exist_ok=True)
    outcomes = [r.outcome for r in results]
    suite = ET.Element("testsuite", name=f"ticdc-conformance.{name}", tests=str(len(results)),
                       failures=str(sum(o in (NOT_CONFORMANT, FINAL_STATE_ONLY) for o in outcomes)),
                       errors=str(outcomes.count(CONSUMER_ERROR)), skipped=str(outcomes.count(NOT_APPLICABLE)),
                       time=f"{sum(r.seconds for r in results):.3f}")
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=f"ticdc-conformance.{r.scenario}",
                             name=f"{r.encoding}[seed={r.seed}]", time=f"{r.seconds:.3f}")
        text = r.render(FINDINGS_SHOWN_PER_RULE, full_list_files(r, paths))
        if r.outcome == CONSUMER_ERROR:
            el = ET.SubElement(case, "error", message=f"consumer error: {r.error.splitlines()[0][:500]}")
            el.text = text
        elif r.outcome == NOT_CONFORMANT:
            el = ET.SubElement(case, "failure", message=f"{r.finding_count} finding(s); replay: {r.replay_command}")
            el.text = text
        elif r.outcome == FINAL_STATE_ONLY:
            el = ET.SubElement(case, "failure", message=r.verdict_line)
            el.text = text
        elif r.outcome == NOT_APPLICABLE:  # fails nothing, passes nothing: the consumer declined it
            el = ET.SubElement(case, "skipped", message=f"not applicable: {r.not_applicable}"[:500])
            el.text = text
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join([r.verdict_line, f"records={r.records} consumer={r.consumer} {r.checkpoint_summary}"]
                             + ([f"consumer log: {r.consumer_log}"] if r.consumer_log is not None else [])
                             + ([f"result: {r.result_file}"] if r.result_file is not None else []))
    ET.ElementTree(suite).write(paths["junit"], encoding="utf-8", xml_declaration=True)
    exit_code = overall_exit(r.exit_code for r in results)
    paths["summary"].write_text(json.dumps({
        "conformant": exit_code == 0 and any(r.conformant for r in results),
        "exit_code": exit_code,
        # Passes and declined encodings apart: `not applicable` fails nothing but is never a pass.
        "passed": sum(r.conformant for r in results),
        "not_applicable": outcomes.count(NOT_APPLICABLE),
        "results": [r.to_json() for r in results],
    }, indent=2, ensure_ascii=False) + "\n")
    return paths
