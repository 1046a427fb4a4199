"""Run reports: a JUnit XML file (one test case per encoding) and a JSON summary."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

from .runner import EncodingResult


def write_reports(results: Sequence[EncodingResult], directory: Path, name: str = "conformance") -> dict[str, Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    failures = sum(1 for r in results if r.findings and r.error is None)
    errors = sum(1 for r in results if r.error is not None)
    suite = ET.Element("testsuite", name=f"ticdc-conformance.{name}", tests=str(len(results)),
                       failures=str(failures), errors=str(errors),
                       time=f"{sum(r.seconds for r in results):.3f}")
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=f"ticdc-conformance.{r.scenario}",
                             name=f"{r.encoding}[seed={r.seed}]", time=f"{r.seconds:.3f}")
        if r.error is not None:
            el = ET.SubElement(case, "error", message=r.error.splitlines()[0][:500])
            el.text = r.render()
        elif r.findings:
            el = ET.SubElement(case, "failure", message=f"{r.finding_count} finding(s); replay: {r.replay_command}")
            el.text = r.render()
        out = ET.SubElement(case, "system-out")
        out.text = f"records={r.records} consumer={r.consumer} {r.checkpoint_summary}"
    junit = directory / f"{name}.junit.xml"
    ET.ElementTree(suite).write(junit, encoding="utf-8", xml_declaration=True)
    summary = directory / f"{name}.summary.json"
    summary.write_text(json.dumps({
        "conformant": all(r.conformant for r in results),
        "results": [r.to_json() for r in results],
    }, indent=2) + "\n")
    return {"junit": junit, "summary": summary}
