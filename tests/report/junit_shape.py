"""The JUnit XML shape CI tools read (Jenkins' junit plugin, GitLab's and GitHub's test reporters): a
<testsuites> root of <testsuite>s of <testcase>s, each test case with a classname and a name and at
most one outcome element, and counts that add up: a suite's tests/failures/errors/skipped are its
test cases', the root's the sum of its suites', and the times too."""
from __future__ import annotations

import xml.etree.ElementTree as ET

OUTCOMES = ("failure", "error", "skipped")
COUNTS = {"failures": "failure", "errors": "error", "skipped": "skipped"}


def check_junit_shape(root: ET.Element) -> None:
    assert root.tag == "testsuites", root.tag
    suites = root.findall("testsuite")
    assert suites, "no testsuite"
    for suite in suites:
        assert suite.get("name"), ET.tostring(suite)[:200]
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases), suite.get("name")
        for attr, tag in COUNTS.items():
            assert int(suite.get(attr)) == sum(c.find(tag) is not None for c in cases), (suite.get("name"), attr)
        assert abs(float(suite.get("time")) - sum(float(c.get("time")) for c in cases)) < 1e-6, suite.get("name")
        for case in cases:
            assert case.get("classname") and case.get("name"), ET.tostring(case)[:200]
            float(case.get("time"))
            outcome = [child for child in case if child.tag in OUTCOMES]
            assert len(outcome) <= 1, case.get("name")
            for el in outcome:
                assert "\n" not in (el.get("message") or ""), f"{case.get('name')}: a message is one line"
    for attr in ("tests", *COUNTS):
        assert int(root.get(attr)) == sum(int(s.get(attr)) for s in suites), attr
    assert abs(float(root.get("time")) - sum(float(s.get("time")) for s in suites)) < 1e-6


def cases_by_name(root: ET.Element) -> dict[str, ET.Element]:
    """Test cases by name (check id)."""
    return {c.get("name"): c for c in root.iter("testcase")}


def outcome(case: ET.Element) -> str:
    """passed, or the tag of its outcome element."""
    return next((child.tag for child in case if child.tag in OUTCOMES), "passed")
