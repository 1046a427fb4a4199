"""The table and ratios `bench pipeline` prints, from figures already measured (no process runs here).

Rows: one per step of the pipeline over one input. Ratios: issue 21's, each with its target and
`ok` / `below target` (or `above target` for a ceiling); a ratio without a target (the cluster's
scaling) is printed for information. What each ratio divides:
- Spark ÷ sequential: events/s of the Spark consumer's `consume` call (session start apart, as
  `bench consume` times it) over events/s of the whole `consume --engine local` command, both
  elapsed (the point of Spark is the second core) -- at least 2x;
- Spark ÷ decode floor: the consumer's time over the decode pass's (floor.py) on the same master --
  at most 2x;
- sequential ÷ decoder alone: records per CPU second of `consume --engine local` over the suite's
  decoder's messages per CPU second (`bench decode`'s measure) -- at least 0.3x;
- generate ÷ baseline: events per second elapsed over the recorded "before" figure (baseline.py),
  since a large case is generated in two processes for the wait -- at least 5x; the CPU ratio is
  printed beside it;
- check ÷ baseline: events per second elapsed over the recorded "before" figure, since a large
  case's upstream is replayed in a second process for the wait -- at least 5x; the CPU ratio is
  printed beside it.
With two sizes or more, the largest against the smallest: each step's time ratio (at most 1.1 × the
size ratio), the Spark driver's peak RSS (under 2 GiB) and generation's (under 1 GiB).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from . import calibration
from .baseline import entry_line
from .consume import TARGET_DRIVER_RSS, TARGET_SLACK, ConsumeFigures
from .decode import DecodeFigures
from .steps import StepFigures, Verdict

TARGET_SPARK_OVER_SEQUENTIAL = 2.0
TARGET_SPARK_OVER_FLOOR = 2.0  # a ceiling: the consumer's time at most 2x its decode floor's
TARGET_SEQUENTIAL_OVER_DECODER = 0.3
TARGET_OVER_BASELINE = 5.0
TARGET_GENERATE_RSS = 2**30
# Memory flat: a step's peak RSS at the largest size at most this many times its peak at the smallest
# (a stream ten times longer keeps the same working set; what grows with it is a leak).
TARGET_RSS_GROWTH = 1.5


@dataclass
class PipelineFigures:
    variant: str
    events: int
    records: int
    generate: StepFigures
    decoder: DecodeFigures
    local: StepFigures
    spark: ConsumeFigures  # with its floor
    checks: dict[str, tuple[StepFigures, Verdict]]  # by engine: "local", "spark", "cluster"
    same_output: dict[str, bool]  # by engine other than local: applied log and final tables byte-identical
    cluster: Optional[ConsumeFigures] = None
    master: str = "local[2]"
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after
    machine: dict = field(default_factory=dict)  # calibration.machine() at the start of this input
    baseline: Optional[dict] = None  # a baseline entry measured in this run (--baseline-code), else None

    def engines(self) -> list[str]:
        return list(self.checks)


@dataclass
class Ratio:
    """A figure held against its target: a ratio (unit "x"), a size in MiB, or an equality."""
    name: str
    value: Optional[float]  # None: not measurable (said in `note`)
    target: Optional[float]  # None: printed for information
    ceiling: bool = False  # the target is a maximum
    note: str = ""
    unit: str = "x"  # "x" or "MiB"
    equal: Optional[bool] = None  # set for an equality, which has no value
    comparable: bool = True  # False: over figures of a machine running at another speed

    @property
    def verdict(self) -> str:
        if self.equal is not None:
            return "ok" if self.equal else "DIFFERENT"
        if self.value is None:
            return "not measured"
        if not self.comparable:
            return "not comparable"
        if self.target is None:
            return ""
        if self.ceiling:
            return "ok" if self.value <= self.target else "above target"
        return "ok" if self.value >= self.target else "below target"

    def _number(self, x: float) -> str:
        return f"{x:,.0f} MiB" if self.unit == "MiB" else f"{x:.2f}x"

    def line(self) -> str:
        if self.equal is not None:
            value, target = ("same" if self.equal else "differ"), ""
        else:
            value = "—" if self.value is None else self._number(self.value)
            bound = ("under" if self.unit == "MiB" else "at most") if self.ceiling else "at least"
            target = "" if self.target is None else f"(target: {bound} {self._number(self.target)})"
        return "  ".join(s for s in (f"{self.name:<56}", f"{value:>10}", target, self.verdict, self.note) if s)


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def render(self) -> list[str]:
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]

        def fmt(row: list[str]) -> str:
            # The step name left-aligned, figures right-aligned, the notes left.
            cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1])] + [row[-1]]
            return "  ".join(cells).rstrip()

        return [fmt(self.header), "  ".join("-" * w for w in widths[:-1]) + "  " + "-" * max(5, widths[-1]),
                *(fmt(r) for r in self.rows)]


HEADER = ["step", "elapsed s", "CPU s", "events/s", "events/CPU s", "peak RSS", "notes"]


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _step_row(name: str, f: StepFigures, note: str = "") -> list[str]:
    if f.calibration is not None:
        note += f"; calibration {f.calibration:.3f} s"
    return [name, f"{f.seconds:.1f}", f"{f.cpu_seconds:.1f}", f"{f.events_per_s:,.0f}",
            f"{f.events_per_cpu_s:,.0f}", _mib(f.peak_rss), note]


def _spark_row(name: str, f: ConsumeFigures) -> list[str]:
    t = f.tree
    return [name, f"{f.consume_seconds:.1f}", f"{t.cpu_seconds:.1f}", f"{f.events_per_s:,.0f}",
            f"{f.events / t.cpu_seconds:,.0f}" if t.cpu_seconds else "—", _mib(t.total),
            f"+{f.startup_seconds:.1f} s session start; CPU and RSS of the whole run; driver Python "
            f"{_mib(t.python)}, driver JVM {_mib(t.jvm)}, Python workers {_mib(t.workers)}"]


def step_table(p: PipelineFigures) -> Table:
    d = p.decoder
    floor = p.spark.floor
    rows = [
        _step_row("generate", p.generate, f"{p.records:,} records; a fresh child process, not the input cache"),
        ["decoder alone (bench decode)", f"{d.decoder_wall:.1f}", f"{d.decoder_seconds:.1f}",
         f"{d.events / d.decoder_wall:,.0f}" if d.decoder_wall else "—", f"{d.events / d.decoder_seconds:,.0f}",
         "—", f"{d.decoder_rate:,.0f} messages/CPU s over {d.messages:,} messages ({d.events:,} events), "
              "in the bench process"],
        _step_row("consume --engine local", p.local, f"{p.local.records / p.local.cpu_seconds:,.0f} records/CPU s; "
                                                     "the whole command"),
        _spark_row(f"consume Spark {p.master}", p.spark),
    ]
    if floor is not None:
        decode = _floor_seconds(p.spark)
        rows.append([f"Spark decode floor ({decode[0]} pass)", f"{decode[1]:.1f}", "—",
                     f"{p.events / decode[1]:,.0f}", "—", "—",
                     "; ".join(f"{n} {s:.1f} s" for n, s in floor.passes())])
    if p.cluster is not None:
        rows.append(_spark_row("consume Spark standalone cluster", p.cluster))
    for engine, (f, verdict) in p.checks.items():
        rows.append(_step_row(f"check of the {engine} output", f, str(verdict)))
    return Table(HEADER, rows)


def _floor_seconds(f: ConsumeFigures) -> tuple[str, float]:
    """The decode pass (the suite's decoder in a Spark job), else the fastest pass that decodes."""
    floor = f.floor
    if floor is None:
        raise ValueError("no floor was measured")
    if floor.decode_seconds is not None:
        return "decode", floor.decode_seconds
    fastest = floor.fastest_decode()
    if fastest is None:
        raise ValueError("the floor has no pass that decodes")
    return fastest


def _over_baseline(name: str, f: StepFigures, step: str, entry: Optional[dict], elapsed: bool = False) -> Ratio:
    """The step's rate over the baseline's: events per CPU second, or (`elapsed`) per second
    elapsed, the other printed beside it. Only when the machine ran the calibration's probe
    (calibration.py) at about the same speed during both steps, within its tolerance, is the
    ratio judged."""
    if entry is None:
        return Ratio(name, None, TARGET_OVER_BASELINE, note="no baseline recorded for this encoding")
    base, at = entry[step], entry["events"]
    where = f"baseline {base['events_per_cpu_s']:,.0f} events/CPU s ({base['seconds']:.1f} s elapsed), " \
            f"commit {entry['commit']}, {entry['date']}" + \
            (f", at {at:,} events (the nearest size recorded)" if at != f.events else "")
    there = base.get("calibration_cpu_s")
    speed = calibration.relative_speed(there, f.calibration)
    if speed is None:
        where += "; how fast the machine ran " + ("during the baseline's step was not recorded" if not there else
                                                  "during this step was not measured")
    else:
        where += f"; the machine ran at {speed:.2f}x the baseline step's speed (calibration {f.calibration:.3f} s " \
                 f"here, {there:.3f} s there)"
    ok = calibration.comparable(speed)
    if not ok:
        where += f": not comparable (beyond {calibration.TOLERANCE:g}x); run again, record the baseline on this " \
                 "machine (bench baseline) or measure it in the same run (bench pipeline --baseline-code)"
    over_elapsed = (f.events / f.seconds) / (at / base["seconds"])
    over_cpu = f.events_per_cpu_s / base["events_per_cpu_s"]
    if elapsed:
        return Ratio(name, over_elapsed, TARGET_OVER_BASELINE, comparable=ok,
                     note=f"elapsed; over CPU time {over_cpu:.2f}x; {where}")
    return Ratio(name, over_cpu, TARGET_OVER_BASELINE, comparable=ok,
                 note=f"over CPU time; elapsed {over_elapsed:.2f}x; {where}")


def ratios(p: PipelineFigures, baseline: Callable[[str, int], Optional[dict]]) -> list[Ratio]:
    """Issue 21's ratios for one input. `baseline(variant, events)` gives the recorded entry
    (baseline.py) for the encoding, at that size or the nearest recorded one, or None."""
    local, spark = p.local, p.spark
    out = [Ratio(f"Spark {p.master} ÷ sequential (events/s)", spark.events_per_s / local.events_per_s,
                 TARGET_SPARK_OVER_SEQUENTIAL)]
    if spark.floor is not None:
        name, seconds = _floor_seconds(spark)
        out.append(Ratio(f"Spark time ÷ its decode floor's ({name} pass)", spark.consume_seconds / seconds,
                         TARGET_SPARK_OVER_FLOOR, ceiling=True))
    else:
        out.append(Ratio("Spark time ÷ its decode floor's", None, TARGET_SPARK_OVER_FLOOR, ceiling=True,
                         note="the floor was not run"))
    out.append(Ratio("sequential ÷ decoder alone (records/CPU s)",
                     (local.records / local.cpu_seconds) / p.decoder.decoder_rate, TARGET_SEQUENTIAL_OVER_DECODER))
    entry = p.baseline if p.baseline is not None else baseline(p.variant, p.events)
    # Generation draws the history in a second process (ticdc_generators/history_process.py), and
    # the check replays upstream in one (checks/upstream_process.py), for the wait: like Spark's,
    # their ratios are elapsed; the CPU ratio, which the second process raises by what the two pass
    # between them, is beside it.
    out.append(_over_baseline("generate ÷ baseline (events/s)", p.generate, "generate", entry, elapsed=True))
    for engine, (f, _) in p.checks.items():
        out.append(_over_baseline(f"check of the {engine} output ÷ baseline", f, "check", entry, elapsed=True))
    if p.cluster is not None:
        out.append(Ratio(f"standalone cluster ÷ Spark {p.master} (events/s)",
                         p.cluster.events_per_s / spark.events_per_s, None, note="scaling; no target"))
    local_verdict = p.checks["local"][1]
    for engine, (_, verdict) in p.checks.items():
        if engine == "local":
            continue
        same = verdict == local_verdict and p.same_output.get(engine, False)
        out.append(Ratio(f"{engine} output = sequential output", None, None, equal=same,
                         note=("same check verdict, applied log and final tables byte-identical" if same else
                               f"verdicts {verdict} / {local_verdict}; applied log and final tables "
                               f"{'identical' if p.same_output.get(engine) else 'differ'}")))
    return out


def size_ratios(runs: list[PipelineFigures]) -> list[Ratio]:
    """The largest run against the smallest: time ratios and memory (issue 21 point 6)."""
    small = min(runs, key=lambda r: r.events)
    big = max(runs, key=lambda r: r.events)
    if big.events == small.events:
        return []
    size = big.events / small.events
    limit = TARGET_SLACK * size
    # The steps measured as child processes, each at both sizes: their time and their peak RSS.
    steps = [("generate", small.generate, big.generate), ("consume --engine local", small.local, big.local)]
    steps += [(f"check of the {e} output", small.checks[e][0], big.checks[e][0]) for e in big.checks if e in small.checks]
    pairs = [(name, a.seconds, b.seconds) for name, a, b in steps]
    pairs.insert(2, (f"consume Spark {big.master}", small.spark.consume_seconds, big.spark.consume_seconds))
    span = f"{big.events:,}/{small.events:,} events"
    out = [Ratio(f"time ratio {span}: {name}", b / a, limit, ceiling=True,
                 note=f"size ratio {size:g}x") for name, a, b in pairs]
    tree = big.spark.tree
    for role, value in (("driver Python process", tree.python), ("driver JVM", tree.jvm)):
        out.append(Ratio(f"peak RSS of the Spark {role} at {big.events:,} events", value / 2**20,
                         TARGET_DRIVER_RSS / 2**20, ceiling=True, unit="MiB"))
    out.append(Ratio(f"peak RSS of generate at {big.events:,} events", big.generate.peak_rss / 2**20,
                     TARGET_GENERATE_RSS / 2**20, ceiling=True, unit="MiB"))
    for name, a, b in steps:
        growth = b.peak_rss / a.peak_rss if a.peak_rss and b.peak_rss else None
        out.append(Ratio(f"peak RSS growth {span}: {name}", growth, TARGET_RSS_GROWTH, ceiling=True,
                         note=f"{_mib(b.peak_rss)} at the largest, {_mib(a.peak_rss)} at the smallest; memory flat"
                         if growth is not None else "peak RSS not sampled"))
    return out


def render(p: PipelineFigures, baseline, echo) -> list[Ratio]:
    echo(f"  {p.variant}, {p.events:,} events ({p.records:,} records), load average {p.load[0]:.1f} → "
         f"{p.load[1]:.1f}" + (f", calibration at the start {p.machine['calibration_cpu_s']:.3f} s "
                                f"({p.machine['cpu']})" if p.machine else ""))
    if p.baseline is not None:
        echo(f"    baseline measured in this run: {entry_line(p.baseline)}")
    for line in step_table(p).render():
        echo(f"    {line}")
    got = ratios(p, baseline)
    for r in got:
        echo(f"    {r.line()}")
    return got
