"""Schedule spec strings: parse/spec round trip, JSON, what a schedule needs, and clear errors."""
import pytest

from ticdc_conformance.delivery import LATE_JOIN, MERGES, RESTARTS, Schedule

ROUND_TRIPS = [
    "timestamp", "round-robin:seed=3,batch=1-64,restarts=2,restart=crash", "random:seed=7,batch=5",
    "lagging:seed=1,lag=100", "watermark-first:seed=2,skew=250", "ddl-first:seed=9,commit-every=2,restarts=1",
    "timestamp:late-join", "round-robin:late-join=true,restarts=3,restart=stop",
]


@pytest.mark.parametrize("text", ROUND_TRIPS)
def test_spec_round_trips(text):
    schedule = Schedule.parse(text)
    assert Schedule.parse(schedule.spec()) == schedule
    assert Schedule.from_json(schedule.to_json()) == schedule


def test_parse_reads_every_option():
    s = Schedule.parse("round-robin:seed=3,batch=2-9,lag=4,skew=100,restarts=2,restart=crash,commit-every=3,late-join")
    assert s == Schedule("round-robin", 3, (2, 9), 4, 100, 2, "crash", 3, True)
    assert Schedule.parse("random:batch=5").batch == (5, 5)
    assert Schedule.parse("timestamp") == Schedule()
    assert Schedule.parse("timestamp:late-join=no").late_join is False


def test_spec_names_the_kind_the_seed_and_what_differs_from_the_defaults():
    assert Schedule().spec() == "timestamp:seed=0"
    assert Schedule("lagging", seed=5, lag=7).spec() == "lagging:seed=5,lag=7"
    assert str(Schedule("random", late_join=True)) == "random:seed=0,late-join"


@pytest.mark.parametrize("merge", MERGES)
def test_every_kind_parses(merge):
    assert Schedule.parse(f"{merge}:seed=1").merge == merge


def test_needs_and_without():
    s = Schedule.parse("random:seed=4,restarts=2,restart=crash,commit-every=2,late-join")
    assert s.needs == {RESTARTS, LATE_JOIN}
    assert s.without(restarts=True) == Schedule("random", seed=4, late_join=True)
    assert s.without(restarts=True).needs == {LATE_JOIN}
    assert s.without(late_join=True).needs == {RESTARTS}
    assert s.without(restarts=True, late_join=True).needs == frozenset()
    assert s.without() == s
    assert Schedule().needs == frozenset()


@pytest.mark.parametrize("text, named", [
    ("sideways", "unknown delivery schedule kind 'sideways'"),
    ("sideways:seed=1", "unknown delivery schedule kind 'sideways'"),
    ("random:speed=3", "unknown schedule option 'speed'"),
    ("random:seed", "schedule option 'seed'"),
    ("random:seed=x", "seed='x'"),
    ("random:seed=-1", "seed=-1"),
    ("random:batch=0-3", "batch=0-3"),
    ("random:batch=9-3", "batch=9-3"),
    ("random:batch=a-b", "batch='a-b'"),
    ("random:restart=politely", "restart='politely'"),
    ("random:commit-every=0", "commit-every=0"),
    ("random:late-join=maybe", "late-join='maybe'"),
    ("random:seed=1,seed=2", "'seed' given twice"),
    ("lagging:lag=-5", "lag=-5"),
    ("random:skew=-1", "skew=-1"),
])
def test_a_bad_spec_is_a_value_error_naming_the_kind_or_option(text, named):
    with pytest.raises(ValueError) as raised:
        Schedule.parse(text)
    assert named in str(raised.value)


def test_bad_json_is_a_value_error_naming_the_field():
    with pytest.raises(ValueError, match="unknown field.*speed"):
        Schedule.from_json({"merge": "random", "speed": 3})
    with pytest.raises(ValueError, match="batch"):
        Schedule.from_json({"merge": "random", "batch": [1]})
    with pytest.raises(ValueError, match="seed"):
        Schedule.from_json({"merge": "random", "seed": "3"})
