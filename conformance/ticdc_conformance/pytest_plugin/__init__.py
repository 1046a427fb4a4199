"""pytest plugin (registered through the `pytest11` entry point); docs/pytest.md.

Two ways to run the suite from pytest:

- Items: `pytest --ticdc-consumer=SPEC` collects one test item per case and rule (ids are check ids,
  `smoke/canal-json::CONSUMER-ORDER-1`, and `smoke/canal-json::outcome` for what failed a case as a
  whole), in any folder, no test file needed. Without `--ticdc-consumer` on the command line nothing
  is collected, so a project's own test runs are untouched.
- The fixture, in a consumer's own test suite:

    def test_my_consumer(ticdc_conformance):
        result = ticdc_conformance.run("canal-json", consumer="python my_consumer.py")
        assert result.conformant, result.render()

  `result.conformant` is `run`'s exit status 0: a consumer judged on its final state only (a stream
  with watermarks, no applied log with a checkpoint) passes only with `--ticdc-final-state-only` or
  `run(..., final_state_only=True)`; `result.outcome` is the verdict word. The fixture's consumer is
  `--ticdc-consumer`, `local` when that is not given.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ticdc_conformance.consumers.adapters.interface import DEFAULT_TIMEOUT_S
from ticdc_conformance.findings.outcome import NOTHING_JUDGED

from .harness import ConformanceHarness
from .items import COLLECTOR, EXPECTED_PROPERTY, RUNS, CheckItem, ConformanceCases, suffix_group, xdist_group
from .matrix import cases, parse_schedule, split_list
from .verdicts import CaseRuns, run_case, worker_folder

FIXTURE_CONSUMER = "local"  # the fixture's consumer when --ticdc-consumer is not given

__all__ = ["ConformanceHarness", "ticdc_conformance"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ticdc-conformance")
    group.addoption("--ticdc-consumer", default=None,
                    help="consumer under test: spark, local, MODE:… or a command (docs/consumer-protocol.md); "
                         "given, pytest collects one item per case and rule (docs/pytest.md). The "
                         f"ticdc_conformance fixture's default consumer ({FIXTURE_CONSUMER} without it)")
    group.addoption("--ticdc-protocol", default="all",
                    help="the encodings of the items: open-protocol, canal-json, debezium, simple, simple-json, "
                         "simple-avro or all (default all)")
    group.addoption("--ticdc-scenario", default="smoke",
                    help="scenario(s) of the items, comma-separated (default smoke); the fixture's is the first")
    group.addoption("--ticdc-changefeed", action="append", default=[], type=Path, metavar="FILE",
                    help="a TiCDC changefeed TOML; each one given is a variant of every case (repeatable)")
    group.addoption("--ticdc-time-zone", action="append", default=[], metavar="TZ",
                    help="a time zone; each one given is a variant of every case (repeatable; default UTC)")
    group.addoption("--ticdc-seed", default=1, type=int, help="seed of the items and the fixture (default 1)")
    group.addoption("--ticdc-schedule", default=None, metavar="KIND[:OPTION=VALUE,…]",
                    help="delivery schedule of a fed consumer (docs/delivery-schedules.md)")
    group.addoption("--ticdc-expected-failures", default=None, type=Path, metavar="FILE",
                    help="expected-failure list (docs/expected-failures.md): a listed failure is xfail, a listed "
                         "item that passes fails (strict)")
    group.addoption("--ticdc-work", default=None, type=Path, metavar="DIR",
                    help="folder of the items' case folders (default: a pytest temporary folder)")
    group.addoption("--ticdc-final-state-only", action="store_true", default=False,
                    help="accept a consumer judged on its final state only (ordering not verified)")
    group.addoption("--ticdc-consumer-timeout", type=float, default=DEFAULT_TIMEOUT_S,
                    help=f"seconds a consumer command may run (default {DEFAULT_TIMEOUT_S})")


def pytest_configure(config: pytest.Config) -> None:
    """Reads and checks the items' options before anything runs; a bad one is a usage error."""
    spec = config.getoption("--ticdc-consumer")
    if spec is None:
        return
    from ticdc_conformance.consumers.adapters import adapter_for
    from ticdc_conformance.findings.expected import ExpectedFailures, ExpectedFailuresError

    opt = config.getoption
    seed = opt("--ticdc-seed")
    schedule = parse_schedule(opt("--ticdc-schedule"), seed)
    matrix = cases(split_list([opt("--ticdc-scenario")]), opt("--ticdc-protocol"), opt("--ticdc-changefeed"),
                   split_list(opt("--ticdc-time-zone")), schedule)
    try:
        adapter = adapter_for(spec)
    except ValueError as e:
        raise pytest.UsageError(f"--ticdc-consumer {spec!r}: {e}") from None
    expected = None
    if opt("--ticdc-expected-failures") is not None:
        if not opt("--ticdc-expected-failures").exists():  # a typo, not an empty list: the items only read it
            raise pytest.UsageError(f"--ticdc-expected-failures {opt('--ticdc-expected-failures')}: no such file")
        try:
            expected = ExpectedFailures.load(opt("--ticdc-expected-failures"))
        except ExpectedFailuresError as e:
            raise pytest.UsageError(f"--ticdc-expected-failures: {e}") from None
    work: list[Path] = []

    def run(case):
        if not work:  # made when the first case runs, so collecting alone writes nothing
            given = opt("--ticdc-work")
            work.append(worker_folder(given) if given is not None
                        else config._tmp_path_factory.mktemp("ticdc-conformance", numbered=False))
        return run_case(case, adapter, seed, work[0], schedule, opt("--ticdc-final-state-only"),
                        opt("--ticdc-consumer-timeout"))

    config.stash[RUNS] = runs = CaseRuns(matrix, run, expected)
    config.pluginmanager.register(_StaleRuleEntries(runs, config), "ticdc-conformance-stale-rule-entries")
    if getattr(config.option, "dist", None) == "loadgroup" and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_CheckIds(runs), "ticdc-conformance-check-ids")


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """Adds the items' collector to what the session collects (the folders and files of its
    arguments), so the items need no test file and are collected wherever pytest runs."""
    report = yield
    if isinstance(collector, pytest.Session) and RUNS in collector.config.stash and report.passed:
        report.result.append(ConformanceCases.from_parent(collector, name=COLLECTOR, nodeid=COLLECTOR))
    return report


class _LoadGroup:
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        for item in items:
            if isinstance(item, CheckItem):
                suffix_group(item)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    # pytest-xdist sets `loadgroup` on a worker under --dist loadgroup.
    if RUNS in session.config.stash and getattr(session.config.option, "loadgroup", False):
        session.config.pluginmanager.register(_LoadGroup(), "ticdc-conformance-loadgroup")


class _CheckIds:
    """On the controller of --dist loadgroup: a report of an item speaks its check id again, without
    the `@<group>` the grouping added, so JUnit, the terminal and the lists name it as without xdist."""

    def __init__(self, runs: CaseRuns) -> None:
        self.runs = runs

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        check, at, group = report.nodeid.rpartition("@")
        case = check.rsplit("::", 1)[0]
        if at and case in self.runs.cases and group == xdist_group(case):
            report.nodeid = check


class _StaleRuleEntries:
    """A bare rule id in the list expects that rule wherever it fails, so no single passing item
    makes it stale: the session is judged instead, from every item's report (a worker's too). An
    entry whose rule was judged in some case but matched no failure fails the session (exit 1)."""

    def __init__(self, runs: CaseRuns, config: pytest.Config) -> None:
        self.runs, self.config = runs, config
        self.matched: set[int] = set()
        self.judged: set[str] = set()
        self.reported = False  # an item of a case reported at all

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" or "::" not in report.nodeid:
            return
        case, rule = report.nodeid.rsplit("::", 1)
        rule = rule.split("@", 1)[0]  # the xdist group suffix
        if case not in self.runs.cases:
            return
        self.reported = True
        if report.outcome != "skipped" or hasattr(report, "wasxfail"):
            self.judged.add(rule)
        for name, value in report.user_properties:
            if name == EXPECTED_PROPERTY:
                self.matched.update(int(line) for line in str(value).split(","))

    def stale(self) -> list:
        if self.runs.expected is None or hasattr(self.config, "workerinput"):  # the controller judges
            return []
        return [e for e in self.runs.expected.entries
                if e.case_glob is None and e.line not in self.matched and e.rule in self.judged]

    def nothing_judged(self) -> bool:
        """Every item that ran was skipped because the consumer declined its case: as `run`'s exit 5,
        a session that checked nothing must not end green (findings/outcome.py)."""
        return self.reported and not self.judged and not hasattr(self.config, "workerinput")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.stale() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif self.nothing_judged() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.nothing_judged():
            terminalreporter.section("nothing judged", red=True)
            terminalreporter.write_line(f"{NOTHING_JUDGED}: exit {int(pytest.ExitCode.NO_TESTS_COLLECTED)}")
        stale = self.stale()
        if stale:
            terminalreporter.section("stale expected failures", red=True)
            for e in stale:
                terminalreporter.write_line(f"{self.runs.expected.path}:{e.line} ({e}): no item of rule {e.rule} "
                                            "failed: the entry is stale; remove that line")


@pytest.fixture
def ticdc_conformance(request: pytest.FixtureRequest, tmp_path: Path) -> ConformanceHarness:
    opt = request.config.getoption
    scenario = (split_list([opt("--ticdc-scenario")]) or ["smoke"])[0]
    return ConformanceHarness(scenario, opt("--ticdc-seed"), opt("--ticdc-consumer") or FIXTURE_CONSUMER, tmp_path,
                              opt("--ticdc-final-state-only"), opt("--ticdc-consumer-timeout"))
