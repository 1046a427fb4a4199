"""The HTML report as written: one static page (no script, nothing fetched, everything escaped) with the
header, the rule × case grid linked to the failures, the divergence plot, each failure's minimal diff and
replay command, the list's judgement and the fidelity matrix. tests/report/test_html_chromium.py renders
a real run's page in a browser."""
import re

import pytest

from tests.report.builders import delete_finding, judge, result, state_finding
from tests.report.dom import parse
from ticdc_conformance.fidelity.matrix import LEVELS
from ticdc_conformance.report import write_reports
from ticdc_conformance.report.html import anchor, fidelity


@pytest.fixture
def no_fidelity_matrix(monkeypatch):
    # The fidelity table is computed from the protocols (about a second a column); its own test below.
    monkeypatch.setattr("ticdc_conformance.report.html.fidelity", lambda encodings: {"columns": [], "rows": []})


def _results():
    return [result("canal-json", (state_finding(1), state_finding(2, "<script>alert(1)</script>", "x")),
                   divergence=[0, 1, 3], checkpoint_findings=(delete_finding("C-1"),)),
            result("debezium", divergence=[0, 0, 0]),
            result("open-protocol", error="consumer exited with 3 <stderr follows>"),
            result("simple-avro", not_applicable="reads no Avro")]


def _page(tmp_path, results, judgement=None) -> str:
    return write_reports(results, tmp_path / "r", "smoke-seed1-all", judgement)["html"].read_text()


def test_the_grid_links_every_failure_to_its_diff_and_replay_command(tmp_path, no_fidelity_matrix):
    results = _results()
    page = parse(_page(tmp_path, results))
    assert page.by_id("verdict").text() == "consumer error" and page.by_id("exit-code").text() == "3"
    [grid] = page.find_all("table", "grid")
    header = [th for th in grid.find_all("th") if th.parent.parent.tag == "thead"]
    assert [th.children[0].strip() for th in header] == ["rule", "canal-json", "debezium", "open-protocol",
                                                         "simple-avro"]
    assert header[3].find_all("span")[0].text() == "consumer error"
    rows = {tr.find_all("th")[0].text(): tr.find_all("td") for tr in grid.find_all("tr")[1:]}
    assert [td.attrs["data-status"] for td in rows["CONSUMER-STATE-1"]] == \
        ["failed", "passed", "not-applicable", "not-applicable"]
    assert rows["consumer-error"][2].attrs["data-status"] == "failed"
    [link] = rows["CONSUMER-STATE-1"][0].find_all("a")
    assert link.text().strip() == "✗ 2" and link.attrs["href"] == "#" + anchor("smoke/canal-json::CONSUMER-STATE-1")
    failure = page.by_id(link.attrs["href"][1:])
    assert failure is not None and "smoke/canal-json::CONSUMER-STATE-1" in failure.find_all("h4")[0].text()
    [diff, _] = failure.find_all("table", "diff")
    assert [[td.text() for td in tr.find_all("td")] for tr in diff.find_all("tr")[1:]] == \
        [["root['amount']", '"1.50"', '"1.5"']]
    assert "ticdc-conformance run --scenario smoke --seed 1 --protocol canal-json" in failure.find_all("pre")[0].text()
    # Every link of the grid leads to a section of the page.
    for a in grid.find_all("a"):
        assert page.by_id(a.attrs["href"][1:]) is not None, a.attrs["href"]
    # A row only one side has shows that row against <absent>.
    delete = page.by_id(anchor("smoke/canal-json::CONSUMER-DELETE-1"))
    [rows_table] = delete.find_all("table", "diff")
    assert "the consumer has this row, upstream has none" in rows_table.text()
    assert ["name", "<absent>", '"Zoë <b>bold</b>"'] in \
        [[td.text() for td in tr.find_all("td")] for tr in rows_table.find_all("tr")]


def test_the_divergence_plot_draws_each_case_that_showed_its_tables_at_checkpoints(tmp_path, no_fidelity_matrix):
    page = parse(_page(tmp_path, _results()))
    [svg] = page.by_id("divergence").find_all("svg")
    lines = svg.find_all("polyline")
    assert len(lines) == 2  # canal-json and debezium; the errored and declined cases showed nothing
    points = [[tuple(map(float, p.split(","))) for p in line.attrs["points"].split()] for line in lines]
    assert [len(p) for p in points] == [3, 3]
    canal, debezium = points
    assert canal[0][1] == debezium[0][1] == debezium[2][1] and canal[2][1] < canal[1][1] < canal[0][1]  # y grows up
    assert [c.find_all("title")[0].text() for c in svg.find_all("circle")][2].endswith("3 row(s) differ")
    assert "smoke/canal-json (peak 3, 3 checkpoints)" in page.by_id("divergence").text()


def test_the_page_is_static_and_escapes_what_it_shows(tmp_path, no_fidelity_matrix):
    html = _page(tmp_path, _results())
    page = parse(html)
    assert not page.find_all("script") and "<script>alert(1)</script>" in page.text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;stderr follows&gt;" in html
    assert not page.find_all("link") and not page.find_all("img") and not page.find_all("iframe")
    for el in page.iter():
        for attr in ("src", "href", "action"):
            assert not re.match(r"\w+:", el.attrs.get(attr, "")), (el.tag, attr, el.attrs[attr])
    [style] = page.find_all("style")
    assert "url(" not in style.text() and "@import" not in style.text()
    assert _page(tmp_path, _results()) == html  # nothing in it changes from one rendering to the next


def test_expected_failures_stale_entries_and_the_gate_verdict(tmp_path, no_fidelity_matrix):
    results = [result("canal-json", (state_finding(1),)), result("debezium")]
    judgement = judge(tmp_path, "smoke/canal-json::CONSUMER-STATE-1\nsmoke/debezium::CONSUMER-ORDER-1\n", results)
    page = parse(_page(tmp_path, results, judgement))
    assert page.by_id("verdict").text() == "the expected-failure list is stale" and page.by_id("exit-code").text() == "6"
    cell = next(td for td in page.iter("td") if td.attrs.get("data-status") == "expected")
    section = page.by_id(cell.find_all("a")[0].attrs["href"][1:])
    assert f"expected: {tmp_path / 'expected-failures.txt'}:1" in section.text()
    # The passing check the stale entry names is marked in the grid, and leads to the list's section.
    [stale] = [td for td in page.iter("td") if "stale" in td.classes()]
    assert stale.attrs["data-status"] == "passed" and "smoke/debezium::CONSUMER-ORDER-1" in stale.attrs["title"]
    assert stale.find_all("a")[0].attrs["href"] == "#expected-failures"
    listed = page.by_id("expected-failures").text()
    assert "smoke/debezium::CONSUMER-ORDER-1" in listed and "Stale entries" in listed


def test_the_fidelity_matrix_of_the_runs_encodings():
    table = fidelity(["open-protocol"])
    assert [c["name"] for c in table["columns"]] == ["open-protocol"]
    assert len(table["rows"]) > 50 and {c["level"] for r in table["rows"] for c in r["cells"]} <= set(LEVELS)
    lossy = [c for r in table["rows"] for c in r["cells"] if c["level"] == "lossy"]
    assert lossy and all(c["why"] for c in lossy) and any("→" in c["example"] for c in lossy)
