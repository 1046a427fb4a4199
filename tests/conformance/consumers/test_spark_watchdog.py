"""The Spark consumer's watchdog (consumers/spark/watchdog.py) on a real local Spark session: a job
whose Python worker waits and uses no CPU is named and cancelled, and fails the block with the
consumer's error instead of hanging; a job that works is left alone; a mistyped limit is named."""
from __future__ import annotations

import time

import pytest

from ticdc_conformance.consumers.spark import watchdog
from ticdc_conformance.errors import ConsumerError

pytestmark = pytest.mark.spark


def _waits(_):  # a Python worker that waits on nothing, as the hung admit stage's did
    time.sleep(120)
    return 1


def test_a_stage_that_makes_no_progress_is_named_and_cancelled(spark):
    start = time.monotonic()
    with pytest.raises(watchdog.Stalled) as raised:
        with watchdog.watched(spark, lambda: "admit", limit=4, poll=0.5):
            spark.sparkContext.parallelize([1], 1).map(_waits).count()
    elapsed = time.monotonic() - start
    message = str(raised.value)
    assert "admit stage made no progress" in message and "stage " in message and "1 tasks" in message, message
    assert watchdog.STALL_ENV in message, message
    assert elapsed < 60, elapsed  # cancelled, not waited out
    # The session still works after the cancelled job.
    assert spark.sparkContext.parallelize(range(10), 2).sum() == 45


def _works(n):  # five CPU seconds, in a stage that runs longer than the limit
    end = time.process_time() + 5
    while time.process_time() < end:
        n += 1
    return n


def test_a_stage_that_works_is_left_alone(spark):
    start = time.monotonic()
    with watchdog.watched(spark, lambda: "decode", limit=2, poll=0.5):
        total = spark.sparkContext.parallelize(range(2), 2).map(_works).count()
    assert total == 2 and time.monotonic() - start > 4


@pytest.mark.parametrize("text,words", [("ten", "no number of seconds"), ("-5", "cannot be negative")])
def test_a_mistyped_limit_is_named(monkeypatch, text, words):
    monkeypatch.setenv(watchdog.STALL_ENV, text)
    with pytest.raises(ConsumerError, match=words):
        watchdog.stall_seconds()


def test_the_limit_defaults_and_zero_turns_it_off(monkeypatch):
    monkeypatch.delenv(watchdog.STALL_ENV, raising=False)
    assert watchdog.stall_seconds() == watchdog.STALL_SECONDS
    monkeypatch.setenv(watchdog.STALL_ENV, "0")
    assert watchdog.stall_seconds() == 0
