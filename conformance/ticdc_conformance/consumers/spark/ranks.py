"""How many values of a small sorted list lie below each row's value, in Spark SQL.

The Spark consumer places every row event against short sorted lists the driver holds: the
checkpoints recorded before the event arrived (by arrival place), the first checkpoint at or above
its commit ts, the DDLs before it. Python's `bisect_left` over those lists, per row, was the
admission pass through the Python workers; a non-equi join (`value > lo AND value <= hi`) would
compare every row with every interval. Here the intervals between the list's distinct values are
cut into buckets of the value's leading number (`major >> shift`), and a row meets, by an equi-join
on its bucket with a broadcast table, only the few intervals that overlap its bucket; the bounds
then pick the one that holds it. `shift` is chosen so that the buckets number about four per
interval over the list's range, whatever the spacing; rows below or above the whole list need no
join at all.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

BUCKETS_PER_INTERVAL = 4


@dataclass
class Ladder:
    """The intervals (u_{i-1}, u_i] of a sorted list's distinct values u_i, each with the count of
    list values below its upper end and a payload; below u_0 and above the last value too."""
    points: list  # distinct values, ascending (ints, or tuples compared as Spark compares structs)
    counts: list[int]  # counts[i]: list values below points[i]; counts[-1]: all of them (above the last)
    payloads: list  # one per interval, len(points) + 1

    @classmethod
    def of(cls, values: Sequence, payload=lambda i: None) -> "Ladder":
        """`values` sorted ascending (repeats allowed); `payload(i)` for the interval below the i-th
        distinct value (i = number of distinct values: above all of them)."""
        points: list = []
        counts: list[int] = []
        for n, v in enumerate(values):
            if not points or v != points[-1]:
                points.append(v)
                counts.append(n)
        counts.append(len(values))
        return cls(points, counts, [payload(i) for i in range(len(points) + 1)])


def _major(point: Any) -> int:
    return point[0] if isinstance(point, tuple) else point


def _shift(points: list) -> int:
    span = _major(points[-1]) - _major(points[0])
    limit = BUCKETS_PER_INTERVAL * (len(points) + 1) + 16
    shift = 0
    while (span >> shift) > limit:
        shift += 1
    return shift


def with_count_below(spark, df, value, major: str, ladder: Ladder, name: str, payload: Optional[tuple[str, str]] = None):
    """`df` with column `name`: how many list values lie below `value` (a column: the row's value,
    a long or a struct ordered like the ladder's tuples), and with `payload` = (column name, Spark
    type) the interval's payload. `major` names the long column that leads `value`. A null value
    counts 0 and has a null payload."""
    from pyspark.sql import functions as F

    pay_name, pay_type = payload if payload else (None, None)
    if not ladder.points:
        df = df.withColumn(name, F.when(F.col(major).isNotNull(), F.lit(ladder.counts[-1])))
        if pay_name:
            df = df.withColumn(pay_name, F.lit(ladder.payloads[0]).cast(pay_type))
        return df
    shift = _shift(ladder.points)
    first, last = _major(ladder.points[0]) >> shift, _major(ladder.points[-1]) >> shift
    entries = []
    for i in range(len(ladder.points) + 1):
        lo = ladder.points[i - 1] if i > 0 else None
        hi = ladder.points[i] if i < len(ladder.points) else None
        b_lo = _major(lo) >> shift if lo is not None else first
        b_hi = _major(hi) >> shift if hi is not None else last
        for b in range(b_lo, b_hi + 1):
            entries.append((b, ladder.counts[i], lo, hi, ladder.payloads[i]))
    point_type = _spark_type(ladder.points[0])
    table = spark.createDataFrame(
        entries, f"`_b` bigint, `_n` int, `_lo` {point_type}, `_hi` {point_type}, `_p` {pay_type or 'int'}")
    bucket = F.shiftright(F.col(major), shift)
    v = value
    joined = df.withColumn("_bucket", bucket).join(
        F.broadcast(table),
        (F.col("_bucket") == F.col("_b")) & (F.col("_lo").isNull() | (v > F.col("_lo")))
        & (F.col("_hi").isNull() | (v <= F.col("_hi"))), "left")
    below, above = F.col("_bucket") < first, F.col("_bucket") > last
    joined = joined.withColumn(name, F.when(F.col("_bucket").isNull(), F.lit(None).cast("int"))
                               .when(below, F.lit(ladder.counts[0])).when(above, F.lit(ladder.counts[-1]))
                               .otherwise(F.col("_n")))
    if pay_name:
        joined = joined.withColumn(pay_name, F.when(F.col("_bucket").isNull(), F.lit(None).cast(pay_type))
                                   .when(below, F.lit(ladder.payloads[0]).cast(pay_type))
                                   .when(above, F.lit(ladder.payloads[-1]).cast(pay_type))
                                   .otherwise(F.col("_p")))
    return joined.drop("_bucket", "_b", "_n", "_lo", "_hi", "_p")


_POSITION_TYPE = ("struct<pos_ts: bigint, topic: string, partition: int, pos_offset: bigint, offset: bigint, "
                  "seq: int>")


def _spark_type(point: Any) -> str:
    if isinstance(point, tuple):
        if len(point) != 6:
            raise ValueError(f"a ladder of tuples holds arrival places (6 fields), not {point!r}")
        return _POSITION_TYPE
    return "bigint"
