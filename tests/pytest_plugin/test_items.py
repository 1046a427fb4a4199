"""`pytest --ticdc-consumer=SPEC`: one item per case and rule, ids are check ids, a case runs once; failing
items show their findings and the replay command; expected-failure lists give xfail and strict XPASS."""
import re
import sys
import xml.etree.ElementTree as ET

import pytest

# Imported here, before pytester snapshots sys.modules: an in-process run that imported them itself
# would have them removed after it, and numpy cannot be loaded twice in one process.
import ticdc_conformance.findings.expected  # noqa: F401
import ticdc_conformance.runner  # noqa: F401
import ticdc_generators.pipeline  # noqa: F401
from tests.conftest import ROOT
from ticdc_conformance.findings.case_ids import run_rules

BROKEN = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'ignores_deletes.py'}"
FINAL_ONLY = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'final_only.py'}"
CRASHES = f"{sys.executable} -c 'import sys; print(\"crashing on purpose\"); sys.exit(3)'"
ITEMS_PER_CASE = len(run_rules()) + 1  # the run rules and the outcome item


def collected(result) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith(("=", "_"))]


def test_items_are_the_check_ids_of_every_case_and_need_no_test_file(pytester):
    result = pytester.runpytest("--ticdc-consumer=local", "--ticdc-time-zone=UTC",
                                "--ticdc-time-zone=Asia/Shanghai", "--collect-only", "-q")
    ids = collected(result)
    assert len(ids) == 5 * 2 * ITEMS_PER_CASE, result.outlines
    assert "smoke/canal-json::CONSUMER-ORDER-1" in ids and "smoke/canal-json::outcome" in ids
    assert "smoke/debezium@tz=Asia/Shanghai::CONSUMER-DELETE-1" in ids
    result.stdout.fnmatch_lines([f"{len(ids)} tests collected in *"])  # pytest counts them as collected
    assert result.ret == pytest.ExitCode.OK


def test_without_the_consumer_option_nothing_is_collected(pytester):
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED and collected(result) == []


def test_k_selects_by_rule_and_encoding(pytester):
    result = pytester.runpytest("--ticdc-consumer=local", "--collect-only", "-q", "-k", "CONSUMER-ORDER-1")
    assert sorted(collected(result)) == sorted(f"smoke/{e}::CONSUMER-ORDER-1" for e in
                                               ("open-protocol", "canal-json", "debezium", "simple-json",
                                                "simple-avro"))
    result = pytester.runpytest("--ticdc-consumer=local", "--collect-only", "-q", "-k", "canal-json")
    assert len(collected(result)) == ITEMS_PER_CASE and all(i.startswith("smoke/canal-json::")
                                                            for i in collected(result))


def test_a_bad_option_is_a_usage_error_naming_it(pytester):
    result = pytester.runpytest("--ticdc-consumer=local", "--ticdc-scenario=nosuch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ticdc-scenario: unknown scenario 'nosuch'*"])
    result = pytester.runpytest("--ticdc-consumer=local", "--ticdc-protocol=avro-json")
    result.stderr.fnmatch_lines(["*--ticdc-protocol: unknown protocol 'avro-json'*"])
    result = pytester.runpytest("--ticdc-consumer=local", "--ticdc-time-zone=Mars/Base")
    result.stderr.fnmatch_lines(["*--ticdc-time-zone 'Mars/Base': not a time zone name*"])
    result = pytester.runpytest("--ticdc-consumer=local", "--ticdc-expected-failures=nosuch.txt")
    result.stderr.fnmatch_lines(["*--ticdc-expected-failures nosuch.txt: no such file*"])
    (pytester.path / "bad.txt").write_text("smoke/canal-json::NO-SUCH-RULE\n")
    result = pytester.runpytest("--ticdc-consumer=local", "--ticdc-expected-failures=bad.txt")
    result.stderr.fnmatch_lines(["*--ticdc-expected-failures: bad.txt:1: unknown rule id 'NO-SUCH-RULE'*"])
    result = pytester.runpytest("--ticdc-consumer=python:nosuch:Consumer")
    result.stderr.fnmatch_lines(["*--ticdc-consumer 'python:nosuch:Consumer': *No module named 'nosuch'*"])


def test_the_fixture_takes_the_consumer_option_and_is_local_without_it(pytester):
    pytester.makepyfile(test_mine="def test_consumer(ticdc_conformance, request):\n"
                                  "    assert ticdc_conformance.consumer == request.config.getoption('expect')\n",
                        conftest="def pytest_addoption(parser):\n    parser.addoption('--expect')\n")
    pytester.runpytest("--expect=local").assert_outcomes(passed=1)
    # Given, the option is the fixture's consumer too, and the items are collected beside the tests.
    given = pytester.runpytest(f"--ticdc-consumer={CRASHES}", f"--expect={CRASHES}", "-k", "test_consumer")
    given.assert_outcomes(passed=1, deselected=5 * ITEMS_PER_CASE)


def test_a_conformant_consumer_passes_every_item_with_one_junit_testcase_each(pytester):
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest("--ticdc-consumer=local", "--ticdc-protocol=canal-json", f"--junitxml={junit}")
    result.assert_outcomes(passed=ITEMS_PER_CASE)
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == ITEMS_PER_CASE
    assert {(c.get("classname"), c.get("name")) for c in cases} == \
        {("smoke.canal-json", rule) for rule in run_rules() + ("outcome",)}


def test_a_broken_consumer_fails_its_rules_with_findings_and_replay_and_the_list_marks_expected_and_stale(pytester):
    listed = pytester.path / "expected.txt"
    listed.write_text("# known gaps\n"
                      "smoke/canal-json::CONSUMER-DELETE-1\n"   # fails: xfail
                      "*/canal-json::CONSUMER-ORDER-1\n"        # passes: strict XPASS, the item fails
                      "CONSUMER-DEDUP-1\n")                     # a bare rule that passes everywhere: stale
    result = pytester.runpytest(f"--ticdc-consumer={BROKEN}", "--ticdc-protocol=canal-json",
                                f"--ticdc-expected-failures={listed}", "-rxX")
    result.assert_outcomes(failed=4, xfailed=1, passed=ITEMS_PER_CASE - 5)
    out = result.stdout.str()
    # An unexpected failure: that rule's first findings, how many more, the replay command.
    assert "smoke/canal-json::CONSUMER-UPDATE-1: NOT conformant" in out
    assert re.search(r"\[CONSUMER-UPDATE-1\] smoke\.\w+ key=", out)
    assert re.search(r"… \d+ more CONSUMER-CHECKPOINT-1 findings; every finding is in .*result\.json", out)
    assert "replay: ticdc-conformance run --scenario smoke --seed 1 --protocol canal-json --consumer" in out
    assert f"XFAIL smoke/canal-json::CONSUMER-DELETE-1 - expected failure: {listed}:2" in out
    assert (f"[XPASS(strict)] smoke/canal-json::CONSUMER-ORDER-1 passes, but {listed}:3 "
            "(*/canal-json::CONSUMER-ORDER-1) lists it as an expected failure: the entry is stale") in out
    result.stdout.fnmatch_lines(["*stale expected failures*", f"{listed}:4 (CONSUMER-DEDUP-1): no item of rule "
                                                              "CONSUMER-DEDUP-1 failed: the entry is stale*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_consumer_error_fails_the_outcome_item_with_its_log_and_the_rules_are_not_judged(pytester):
    result = pytester.runpytest(f"--ticdc-consumer={CRASHES}", "--ticdc-protocol=open-protocol", "-x", "-rs")
    # -x stops at the first failure: the outcome item is the case's last, every rule before it skipped.
    result.assert_outcomes(failed=1, skipped=ITEMS_PER_CASE - 1)
    out = result.stdout.str()
    assert "smoke/open-protocol::outcome: consumer error" in out and "exited with 3" in out
    log = re.search(r"consumer log: (\S+)", out).group(1)
    assert "crashing on purpose" in open(log).read()
    assert "not judged: the consumer failed (see smoke/open-protocol::outcome)" in out


def test_a_final_state_only_consumer_fails_the_outcome_item_unless_accepted(pytester):
    # open-protocol carries watermarks; a consumer that shows no applied log is judged on its final state only.
    strict = pytester.runpytest(f"--ticdc-consumer={FINAL_ONLY}", "--ticdc-protocol=open-protocol")
    strict.assert_outcomes(passed=ITEMS_PER_CASE - 1, failed=1)
    strict.stdout.fnmatch_lines(["*smoke/open-protocol::outcome: final state only",
                                 "*the stream carries watermarks*; --ticdc-final-state-only accepts that",
                                 "replay: ticdc-conformance run --scenario smoke --seed 1 --protocol open-protocol *"])
    accepted = pytester.runpytest(f"--ticdc-consumer={FINAL_ONLY}", "--ticdc-protocol=open-protocol",
                                  "--ticdc-final-state-only", "-k", "outcome")
    accepted.assert_outcomes(passed=1, deselected=ITEMS_PER_CASE - 1)


@pytest.mark.slow  # two xdist workers each start an interpreter and import the suite (about 25 s)
def test_under_xdist_loadgroup_each_case_runs_once_on_one_worker(pytester):
    work = pytester.path / "work"
    listed = pytester.path / "expected.txt"
    listed.write_text("CONSUMER-DEDUP-1\n")  # the reference passes it: stale, judged from the workers' reports
    result = pytester.runpytest_subprocess("--ticdc-consumer=local", "--ticdc-protocol=canal-json",
                                           "--ticdc-time-zone=UTC", "--ticdc-time-zone=Asia/Shanghai",
                                           f"--ticdc-work={work}", f"--ticdc-expected-failures={listed}",
                                           f"--junitxml={pytester.path / 'junit.xml'}",
                                           "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2 * ITEMS_PER_CASE)
    # The reports name the items by their check ids, without the `@<group>` the grouping adds.
    names = {c.get("name") for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")}
    assert names == set(run_rules()) | {"outcome"}
    result.stdout.fnmatch_lines([f"{listed}:1 (CONSUMER-DEDUP-1): no item of rule CONSUMER-DEDUP-1 failed*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    runs = sorted(p.relative_to(work).parts for p in work.glob("*/*/*/result.json"))
    assert len(runs) == 2, runs  # two cases, each run once, in its worker's folder
    assert {parts[2] for parts in runs} == {"canal-json"} and {parts[0] for parts in runs} <= {"gw0", "gw1"}


def test_a_session_whose_consumer_declines_every_case_is_not_green(pytester):
    """Every item skipped as not applicable: nothing was judged, so the session exits 5, as `run` does."""
    declines = f"cmd:{sys.executable} {ROOT / 'tests' / 'conformance' / 'consumers' / 'streaming' / 'faulty.py'} unsupported"
    result = pytester.runpytest(f"--ticdc-consumer={declines}", "--ticdc-protocol=canal-json", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.outlines
    result.stdout.fnmatch_lines(["*nothing judged: the consumer declined every case*"])
