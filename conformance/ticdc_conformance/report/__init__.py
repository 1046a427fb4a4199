"""Run reports (docs/reports.md): a JUnit XML file (a test case per case and rule), a JSON summary and
a static HTML page, written side by side as NAME.junit.xml, NAME.summary.json and NAME.html.

They render what runner.py's EncodingResult holds, so they sit beside the runner in the entry-point
layer (the verdict layer below may not import the runner). The checks they show are computed once
(checks.py), against an expected-failure list when the run has one (findings/expected.py).

The JSON summary keeps every finding; the JUnit text shows the first findings of each rule, as `run`
prints them, and names the files with the rest. A final-state-only outcome is a failure unless
--final-state-only accepted it; then no check fails and the output says so.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from ticdc_conformance.findings.expected import Judgement
from ticdc_conformance.runner import EncodingResult

from .checks import RunChecks
from .html import write_html
from .junit import write_junit
from .summary import write_summary

__all__ = ["full_list_files", "report_paths", "write_reports", "RunChecks"]


def report_paths(directory: Path, name: str) -> dict[str, Path]:
    directory = Path(directory)
    return {"junit": directory / f"{name}.junit.xml", "summary": directory / f"{name}.summary.json",
            "html": directory / f"{name}.html"}


def full_list_files(result: EncodingResult, report: dict[str, Path] | None) -> list[Path]:
    """The JSON files that hold every finding of a result: its case's result.json, the summary."""
    return ([result.result_file] if result.result_file is not None and result.result_file.exists() else []) \
        + ([report["summary"]] if report is not None else [])


def write_reports(results: Sequence[EncodingResult], directory: Path, name: str = "conformance",
                  judgement: Optional[Judgement] = None, exit_code: Optional[int] = None) -> dict[str, Path]:
    """Writes the three reports of `results` into `directory`; `judgement` is the run's failures measured
    against its expected-failure list, if it has one; `exit_code` the run's exit status where the caller
    decided it (`--update-expected-failures` exits 0), by default the one `results` and `judgement` give.
    Returns their paths by kind."""
    paths = report_paths(directory, name)
    paths["junit"].parent.mkdir(parents=True, exist_ok=True)
    checks = RunChecks(results, judgement, exit_code)

    def full_list(result: EncodingResult) -> list[Path]:
        return full_list_files(result, paths)

    write_junit(paths["junit"], checks, name, full_list)
    write_summary(paths["summary"], checks)
    write_html(paths["html"], checks, name, full_list)
    return paths
