"""The one error type a decoder raises for bad input, the one a consumer that cannot finish raises,
and SparkMissing, for Spark asked of an installation without PySpark. docs/errors.md lists their
fields, the reason each malformation yields, and how a consumer under test reports its own errors."""
from __future__ import annotations

import importlib.util
from typing import Any, Iterable

# What installs PySpark: the base install (`pip install ticdc-conformance`) gates any consumer
# without it; only the reference Spark consumer, `spark:` functions and Spark's benchmarks need it.
SPARK_EXTRA = "pip install 'ticdc-conformance[spark]'"


class DecodeError(Exception):
    """A record that is not valid for its protocol.

    Carries the record's coordinates so a failure always names topic, partition and offset.
    A decoder that decoded good events in the same call as it met a bad record (a Simple
    BOOTSTRAP releasing held rows, one of which is malformed) attaches them as `events`, in
    order, and further bad records of that call as `also`: the caller applies the events as if
    `decode` had returned them and reports every error.
    """

    def __init__(self, topic: str, partition: int, offset: int, reason: str,
                 events: Iterable[Any] = (), also: Iterable[DecodeError] = ()) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.reason = reason
        self.events = list(events)
        self.also: tuple[DecodeError, ...] = tuple(also)
        super().__init__(f"{topic}/{partition}@{offset}: {reason}")

    def every_error(self) -> list["DecodeError"]:
        """This error and the further ones of the same call, in arrival order."""
        return [self, *self.also]


class ConsumerError(Exception):
    """A stream the consumer cannot apply (e.g. a DML for a table it has no schema for)."""


class CaseError(Exception):
    """A case folder or output folder given to `check` that is not what `generate` and a consumer write."""


class SparkMissing(ValueError):
    """Something that runs on Spark was asked for where PySpark is not installed."""


def require_spark(what: str, instead: str) -> None:
    """SparkMissing saying what needs PySpark, how to install it and what to do `instead` (`or …`),
    when PySpark cannot be imported; looked up without importing it (importing PySpark takes seconds)."""
    if importlib.util.find_spec("pyspark") is None:
        raise SparkMissing(f"{what} needs PySpark, which is not installed here: {SPARK_EXTRA} "
                           f"(Spark also needs a Java 17 runtime), {instead}")
