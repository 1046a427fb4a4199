"""The HTML report of a real run, rendered by a browser: a broken consumer (it never applies a DELETE)
on scenario smoke in two encodings, its page opened in headless Chromium (Debian's `chromium`, which
`make setup` installs). The DOM the browser built must show the rule × encoding grid and a failure's
diff; the screenshot is kept at reports/test-artifacts/html-report.png (git-ignored) for a reader
to look at."""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.report.dom import parse
from ticdc_conformance.report import write_reports
from ticdc_conformance.report.html import anchor
from ticdc_conformance.runner import run_encoding

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
BROWSER = next((path for path in map(shutil.which, BROWSERS) if path), None)
BROKEN = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'ignores_deletes.py'}"
SCREENSHOT = ROOT / "reports" / "test-artifacts" / "html-report.png"
WINDOW = (1280, 2400)
BROWSER_TIMEOUT_S = 120

pytestmark = [
    pytest.mark.skipif(BROWSER is None, reason="no chromium binary (`make setup` installs Debian's chromium as root; "
                                               "or apt-get install chromium): the HTML report is not rendered"),
    # A browser start, and two consumer runs, make it longer than a fast test.
    pytest.mark.slow,
]


def _browser(tmp_path, *args: str) -> subprocess.CompletedProcess:
    # --no-sandbox: Chromium refuses to run as root with its sandbox; a profile of our own keeps the
    # user's untouched and lets two runs not share one.
    flags = ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}"] + (["--no-sandbox"] if os.geteuid() == 0 else [])
    return subprocess.run([BROWSER, *flags, *args], capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S)


def _png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_a_browser_shows_the_grid_and_a_failures_diff(tmp_path):
    results = [run_encoding("smoke", 1, encoding, tmp_path / "work", consumer=BROKEN)
               for encoding in ("canal-json", "open-protocol")]
    paths = write_reports(results, tmp_path / "r", "smoke-seed1-broken")
    url = paths["html"].resolve().as_uri()

    dumped = _browser(tmp_path, "--dump-dom", url)
    assert dumped.returncode == 0 and "</html>" in dumped.stdout, dumped.stderr[-3000:]
    page = parse(dumped.stdout)
    [grid] = page.find_all("table", "grid")
    rows = {tr.find_all("th")[0].text(): tr.find_all("td") for tr in grid.find_all("tr")[1:]}
    assert [td.attrs["data-status"] for td in rows["CONSUMER-DELETE-1"]] == ["failed", "failed"]
    assert [td.attrs["data-status"] for td in rows["CONSUMER-ORDER-1"]] == ["passed", "passed"]

    # The grid's link leads to the failure, which shows the row the consumer kept against upstream's none.
    check = "smoke/canal-json::CONSUMER-DELETE-1"
    [link] = rows["CONSUMER-DELETE-1"][0].find_all("a")
    assert link.attrs["href"] == "#" + anchor(check)
    failure = page.by_id(anchor(check))
    summary = json.loads(paths["summary"].read_text())
    first = next(f for t in summary["results"][0]["tables"] for f in t["findings"] if f["rule"] == "CONSUMER-DELETE-1")
    diff = failure.find_all("table", "diff")[0]
    shown = [[td.text() for td in tr.find_all("td")] for tr in diff.find_all("tr")[1:]]
    key_column = next(c for c, v in first["actual"].items() if [v] == first["key"])
    assert [key_column, "<absent>", json.dumps(first["key"][0], ensure_ascii=False)] in shown
    assert "the consumer has this row, upstream has none" in diff.text()
    assert "--protocol canal-json --consumer" in failure.find_all("pre")[-1].text()
    assert page.by_id("divergence").find_all("polyline"), "no divergence line for a consumer that loses rows"

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    SCREENSHOT.unlink(missing_ok=True)
    shot = _browser(tmp_path, f"--screenshot={SCREENSHOT}", f"--window-size={WINDOW[0]},{WINDOW[1]}", url)
    assert shot.returncode == 0 and SCREENSHOT.exists(), shot.stderr[-3000:]
    assert _png_size(SCREENSHOT) == WINDOW and SCREENSHOT.stat().st_size > 50_000, "a blank page"
