"""The JSON summary: the run's verdict and every case's whole result, every finding included
(docs/reports.md).

`conformant` and the case outcomes say what the consumer did; `exit_code` is the run's exit status,
which an expected-failure list changes (its failures do not fail the run, a stale entry does). Each
result carries its checks (`checks`: id, rule, status, findings), and with a list the summary holds
its judgement (`expected_failures`).
"""
from __future__ import annotations

import json
from pathlib import Path

from ticdc_conformance.findings.outcome import NOT_APPLICABLE, overall_exit

from .checks import RunChecks


def summary(checks: RunChecks) -> dict:
    results = checks.results
    raw_exit = overall_exit(r.exit_code for r in results)
    doc = {
        "conformant": raw_exit == 0 and any(r.conformant for r in results),
        "exit_code": checks.exit_code,
        # Passes and declined encodings apart: `not applicable` fails nothing but is never a pass.
        "passed": sum(r.conformant for r in results),
        "not_applicable": sum(r.outcome == NOT_APPLICABLE for r in results),
        "checks": checks.counts(),
        "results": [r.to_json() | {"checks": [c.to_json() for c in case_checks]} for r, case_checks in checks.cases],
    }
    if checks.judgement is not None:
        doc["expected_failures"] = checks.judgement.to_json()
    return doc


def write_summary(path: Path, checks: RunChecks) -> None:
    path.write_text(json.dumps(summary(checks), indent=2, ensure_ascii=False) + "\n")
