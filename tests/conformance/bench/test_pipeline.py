"""`bench pipeline`: the table and ratios on synthetic figures (fast), and the command end to end at
a small size (Spark). Figures are printed, never judged here: the tests check that every row and
ratio is there, with numbers, and that each verdict follows its target."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.bench.baseline import load_baseline
from ticdc_conformance.bench.child_failure import one_line
from ticdc_conformance.bench.command import _Size
from ticdc_conformance.bench.consume import ConsumeFigures
from ticdc_conformance.bench.decode import DecodeFigures
from ticdc_conformance.bench.floor import FloorFigures
from ticdc_conformance.bench.pipeline import nearest_baseline, output_digest
from ticdc_conformance.bench.pipeline_table import PipelineFigures, ratios, size_ratios, step_table
from ticdc_conformance.bench.sampling import TreeFigures
from ticdc_conformance.bench.steps import StepFigures, Verdict, run_child

MiB = 2**20
CONFORMANT = Verdict("conformant", 0, ())


def _step(name, events, seconds, cpu, rss=100 * MiB, calibration=0.100):
    return StepFigures(name, events, events, seconds, cpu, rss, calibration)


def _spark(events, seconds, floor_decode=None, jvm=1500 * MiB):
    tree = TreeFigures(python=150 * MiB, jvm=jvm, workers=600 * MiB, total=2300 * MiB, samples=10,
                       cpu_seconds=1.5 * seconds)
    floor = FloorFigures(scan_seconds=1.0, parse_seconds=None, decode_seconds=floor_decode) if floor_decode else None
    return ConsumeFigures("canal-json", events, events, events, 5.0, seconds, tree, Path("unused"), {}, floor)


def _figures(events=200_000, spark_seconds=5.0, verdict=CONFORMANT, same=True, cluster=None, baseline=None,
             calibration=0.100):
    decoder = DecodeFigures("canal-json", "orjson.loads", messages=events, events=events, decoder_seconds=1.0,
                            bare_seconds=0.5, decoder_wall=1.2, bare_wall=0.6)
    checks = {"local": (_step("check local", events, 2.5, 4.0, calibration=calibration), CONFORMANT),
              "spark": (_step("check spark", events, 2.5, 4.0, calibration=calibration), verdict)}
    return PipelineFigures("canal-json", events, events, _step("generate", events, 8.0, 14.0, calibration=calibration),
                           decoder,
                           _step("consume local", events, 20.0, 20.0), _spark(events, spark_seconds, floor_decode=4.0),
                           checks, {"spark": same}, cluster, baseline=baseline)


# A "before" entry: generation 10k events/CPU s, check 20k events/CPU s, at 200k events; the
# machine ran the calibration's probe in 0.105 s during each step (0.100 s in _figures: comparable).
BASELINE = {"entries": {"canal-json/200000": {
    "variant": "canal-json", "events": 200_000, "commit": "abc1234", "date": "2026-11-27T19:00Z",
    "generate": {"seconds": 25.0, "cpu_seconds": 20.0, "events_per_cpu_s": 10_000.0, "peak_rss": 1,
                 "calibration_cpu_s": 0.105},
    "check": {"seconds": 12.0, "cpu_seconds": 10.0, "events_per_cpu_s": 20_000.0, "peak_rss": 1,
              "calibration_cpu_s": 0.105}}}}


def _by_name(got):
    return {r.name: r for r in got}


def test_ratios_divide_what_the_targets_name_and_follow_them():
    got = _by_name(ratios(_figures(), nearest_baseline(BASELINE)))
    # Spark 40k events/s over sequential 10k; Spark 5 s over its decode floor's 4 s.
    assert got["Spark local[2] ÷ sequential (events/s)"].value == pytest.approx(4.0)
    assert got["Spark local[2] ÷ sequential (events/s)"].verdict == "ok"
    assert got["Spark time ÷ its decode floor's (decode pass)"].value == pytest.approx(1.25)
    assert got["Spark time ÷ its decode floor's (decode pass)"].verdict == "ok"
    # Sequential 10k records/CPU s over the decoder's 200k messages/CPU s.
    seq = got["sequential ÷ decoder alone (records/CPU s)"]
    assert seq.value == pytest.approx(0.05) and seq.verdict == "below target"
    # Generation (two processes: 8 s elapsed, 14 s CPU) 25k events/s over the recorded 8k (25 s
    # elapsed), held to its target; its 14.3k events/CPU s over the recorded 10k beside it.
    gen = got["generate ÷ baseline (events/s)"]
    assert gen.value == pytest.approx(3.125) and gen.verdict == "below target"
    assert "over CPU time 1.43x" in gen.note and "commit abc1234" in gen.note and "nearest" not in gen.note
    # The check (two processes: 2.5 s elapsed, 4 s CPU): 80k events/s over the recorded 16.7k (12 s
    # elapsed); its 50k events/CPU s over the recorded 20k beside it.
    check = got["check of the local output ÷ baseline"]
    assert check.value == pytest.approx(4.8) and check.verdict == "below target"
    assert "over CPU time 2.50x" in check.note
    assert got["spark output = sequential output"].verdict == "ok"

    slow = _by_name(ratios(_figures(spark_seconds=12.0), nearest_baseline(BASELINE)))
    assert slow["Spark local[2] ÷ sequential (events/s)"].verdict == "below target"
    assert slow["Spark time ÷ its decode floor's (decode pass)"].verdict == "above target"


def test_a_wrong_engine_shows_up_even_when_fast():
    for figures in (_figures(spark_seconds=1.0, verdict=Verdict("findings", 3, ("C1",))),
                    _figures(spark_seconds=1.0, same=False)):
        got = _by_name(ratios(figures, nearest_baseline(BASELINE)))
        equal = got["spark output = sequential output"]
        assert equal.verdict == "DIFFERENT" and "differ" in equal.line()


def test_the_baseline_is_the_nearest_size_recorded_and_said_so():
    find = nearest_baseline(BASELINE)
    assert find("canal-json", 2000)["events"] == 200_000 and find("simple-avro", 2000) is None
    got = _by_name(ratios(_figures(events=2000), find))
    assert "at 200,000 events (the nearest size recorded)" in got["generate ÷ baseline (events/s)"].note
    missing = _by_name(ratios(_figures(), nearest_baseline({"entries": {}})))
    assert missing["generate ÷ baseline (events/s)"].verdict == "not measured"


def test_a_baseline_from_a_machine_of_another_speed_is_not_judged():
    entry = BASELINE["entries"]["canal-json/200000"]
    faster_there = {"entries": {"canal-json/200000": dict(entry, generate=dict(entry["generate"],
                                                                               calibration_cpu_s=0.062))}}
    got = _by_name(ratios(_figures(), nearest_baseline(faster_there)))
    gen = got["generate ÷ baseline (events/s)"]
    assert gen.value == pytest.approx(3.125) and gen.verdict == "not comparable"
    assert "the machine ran at 0.62x the baseline step's speed" in gen.note and "bench baseline" in gen.note
    assert "not comparable" in gen.line()
    assert got["check of the local output ÷ baseline"].verdict == "below target"  # its step: comparable
    unrecorded = {"entries": {"canal-json/200000": dict(entry, generate={k: v for k, v in entry["generate"].items()
                                                                         if k != "calibration_cpu_s"})}}
    gen = _by_name(ratios(_figures(), nearest_baseline(unrecorded)))["generate ÷ baseline (events/s)"]
    assert gen.verdict == "not comparable" and "during the baseline's step was not recorded" in gen.note
    unmeasured = _by_name(ratios(_figures(calibration=None), nearest_baseline(BASELINE)))
    assert unmeasured["generate ÷ baseline (events/s)"].verdict == "not comparable"
    assert "during this step was not measured" in unmeasured["generate ÷ baseline (events/s)"].note
    # Within the tolerance the ratio is judged as before.
    near = _by_name(ratios(_figures(calibration=0.112), nearest_baseline(BASELINE)))
    assert near["generate ÷ baseline (events/s)"].verdict == "below target"


def test_a_baseline_measured_in_the_same_run_is_the_one_held_against():
    same_run = dict(BASELINE["entries"]["canal-json/200000"], commit="fed4321",
                    generate={"seconds": 50.0, "cpu_seconds": 40.0, "events_per_cpu_s": 5_000.0, "peak_rss": 1,
                              "calibration_cpu_s": 0.098})
    got = _by_name(ratios(_figures(baseline=same_run), nearest_baseline(BASELINE)))
    gen = got["generate ÷ baseline (events/s)"]
    assert gen.value == pytest.approx(6.25) and gen.verdict == "ok" and "commit fed4321" in gen.note


def test_the_calibration_measures_and_compares_machines():
    from ticdc_conformance.bench import calibration

    here = calibration.machine()
    assert here["calibration_cpu_s"] > 0 and here["cpu"]
    assert calibration.relative_speed(2 * here["calibration_cpu_s"], here["calibration_cpu_s"]) == pytest.approx(2)
    assert calibration.relative_speed(None, 0.1) is None and calibration.relative_speed(0.1, None) is None
    assert not calibration.comparable(None) and 0 < calibration.probe_seconds() < 60
    assert calibration.comparable(1.1) and calibration.comparable(1 / 1.1)
    assert not calibration.comparable(1.6) and not calibration.comparable(1 / 1.6)


def test_the_recorded_baseline_has_generate_and_check_for_every_encoding_at_200k():
    from ticdc_conformance.bench.inputs import variant_names

    entries = load_baseline()["entries"]
    for variant in variant_names():
        entry = entries.get(f"{variant}/200000")
        if entry is None:
            continue  # an encoding whose "before" figure was not measured (docs/performance.md says which)
        assert entry["commit"] and entry["date"] and len(entry["load_average"]) == 2
        for step in ("generate", "check"):
            assert entry[step]["events_per_cpu_s"] == pytest.approx(200_000 / entry[step]["cpu_seconds"], rel=1e-3)
            # How fast the machine ran during the step: without it no ratio over the entry is judged.
            assert entry[step]["calibration_cpu_s"] > 0
        assert entry["machine"]["calibration_cpu_s"] > 0 and entry["machine"]["calibration_cpu_s_after"] > 0
    assert "canal-json/200000" in entries


def test_the_table_has_a_row_per_step_with_numbers():
    lines = step_table(_figures()).render()
    steps = ["generate", "decoder alone (bench decode)", "consume --engine local", "consume Spark local[2]",
             "Spark decode floor (decode pass)", "check of the local output", "check of the spark output"]
    assert [ln.split("  ")[0].strip() for ln in lines[2:]] == steps
    for line in lines[2:]:
        assert re.search(r"\s\d[\d,]*\.\d\s", line), line
    assert "driver JVM 1,500 MiB" in lines[5] and "+5.0 s session start" in lines[5]


def test_size_ratios_hold_time_and_memory_against_their_targets():
    small = _figures(events=1_000_000)
    big = _figures(events=10_000_000, spark_seconds=60.0)
    big.spark.tree.jvm = 2100 * MiB
    got = _by_name(size_ratios([big, small]))
    spark = got["time ratio 10,000,000/1,000,000 events: consume Spark local[2]"]
    assert spark.value == pytest.approx(12.0) and spark.verdict == "above target" and "(target: at most 11.00x)" \
        in spark.line()
    assert got["time ratio 10,000,000/1,000,000 events: generate"].verdict == "ok"
    jvm = got["peak RSS of the Spark driver JVM at 10,000,000 events"]
    assert jvm.verdict == "above target" and "2,100 MiB" in jvm.line() and "under 2,048 MiB" in jvm.line()
    assert got["peak RSS of the Spark driver Python process at 10,000,000 events"].verdict == "ok"
    assert size_ratios([small]) == []


def test_size_ratios_show_memory_that_grows_with_the_stream():
    small = _figures(events=1_000_000)
    big = _figures(events=10_000_000)
    big.local = _step("consume local", 10_000_000, 200.0, 200.0, rss=400 * MiB)  # 4x its 100 MiB at 1M
    big.checks["spark"] = (_step("check spark", 10_000_000, 40.0, 40.0, rss=140 * MiB), CONFORMANT)
    got = _by_name(size_ratios([big, small]))
    local = got["peak RSS growth 10,000,000/1,000,000 events: consume --engine local"]
    assert local.value == pytest.approx(4.0) and local.verdict == "above target"
    assert "400 MiB at the largest, 100 MiB at the smallest" in local.line()
    assert got["peak RSS growth 10,000,000/1,000,000 events: check of the spark output"].verdict == "ok"
    assert got["peak RSS growth 10,000,000/1,000,000 events: generate"].value == pytest.approx(1.0)
    unsampled = _figures(events=10_000_000)
    unsampled.local = _step("consume local", 10_000_000, 200.0, 200.0, rss=0)
    assert _by_name(size_ratios([unsampled, small]))[
        "peak RSS growth 10,000,000/1,000,000 events: consume --engine local"].verdict == "not measured"


def test_output_digest_covers_the_applied_log_and_final_tables(tmp_path):
    for side in ("a", "b"):
        (tmp_path / side / "final").mkdir(parents=True)
        (tmp_path / side / "applied.ndjson").write_text('{"x":1}\n')
        (tmp_path / side / "final" / "t.ndjson").write_text('{"id":1}\n')
    assert output_digest(tmp_path / "a") == output_digest(tmp_path / "b")
    (tmp_path / "b" / "final" / "t.ndjson").write_text('{"id":2}\n')
    assert output_digest(tmp_path / "a") != output_digest(tmp_path / "b")


def test_sizes_read_as_numbers_of_events():
    size = _Size()
    assert [size.convert(v, None, None) for v in ("200000", "200k", "1M", "10m", "1_000")] == \
        [200_000, 200_000, 1_000_000, 10_000_000, 1000]
    with pytest.raises(Exception, match="not a number of events"):
        size.convert("1.5M", None, None)


def test_a_failed_child_is_one_line_naming_its_log(tmp_path):
    log = tmp_path / "case.generate.stderr.log"
    script = "import sys\nprint('noise', file=sys.stderr)\nraise ValueError('no scenario named x')\n"
    with pytest.raises(RuntimeError) as failed:
        run_child([sys.executable, "-c", script], "generate canal-json 2,000 events", log)
    line = one_line(failed.value)
    assert "\n" not in line
    assert line.startswith("generate canal-json 2,000 events failed with exit code 1; whole stderr in " + str(log))
    assert line.endswith("ValueError: no scenario named x") and "noise" in log.read_text()


def test_cli_bench_pipeline_refuses_a_baseline_tree_without_its_commit_or_that_is_no_checkout(tmp_path):
    alone = subprocess.run(CLI + ["bench", "pipeline", "--work", str(tmp_path), "--baseline-code", str(ROOT)],
                           capture_output=True, text=True, cwd=ROOT)
    assert alone.returncode == 2 and "--baseline-code and --baseline-commit go together" in alone.stderr
    foreign = subprocess.run(CLI + ["bench", "pipeline", "--work", str(tmp_path), "--baseline-code", str(tmp_path),
                                    "--baseline-commit", "x"], capture_output=True, text=True, cwd=ROOT)
    assert foreign.returncode == 2 and "Traceback" not in foreign.stderr
    assert "--baseline-code" in foreign.stderr and "expected a checkout of this repository" in foreign.stderr
    assert not (tmp_path / "pipeline").exists()  # refused before any step


_STEPS = ["generate", "decoder alone (bench decode)", "consume --engine local", "consume Spark local[2]",
          "Spark decode floor (decode pass)", "check of the local output", "check of the spark output"]
_RATIOS = ["Spark local[2] ÷ sequential (events/s)", "Spark time ÷ its decode floor's (decode pass)",
           "sequential ÷ decoder alone (records/CPU s)", "generate ÷ baseline (events/s)",
           "check of the local output ÷ baseline", "check of the spark output ÷ baseline"]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_cli_bench_pipeline_prints_every_step_and_ratio(tmp_path):
    # The baseline is this tree's own code, measured in the same run (--baseline-code).
    proc = subprocess.run(CLI + ["bench", "pipeline", "--work", str(tmp_path), "--events", "2000", "--encoding",
                                 "canal-json", "--baseline-code", str(ROOT), "--baseline-commit", "this-tree"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = proc.stdout
    assert f"baseline: the code of this-tree in {ROOT}, measured in this run" in out
    same_run = re.search(r"baseline measured in this run: canal-json +2,000 events +generate +[\d.]+ s .* calibration "
                         r"([\d.]+) s\) +check +[\d.]+ s .* calibration ([\d.]+) s\) +conformant", out)
    assert same_run and float(same_run[1]) > 0 and float(same_run[2]) > 0, out
    assert re.search(r"canal-json, 2,000 events .* calibration at the start [\d.]+ s \(", out), out
    assert re.search(r"load average at start: [\d.]+ / ", out) and re.search(r"load average at end: [\d.]+ / ", out)
    lines = [ln.strip() for ln in out.splitlines()]
    for step in _STEPS:
        row = next((ln for ln in lines if ln.startswith(step + "  ")), None)
        assert row is not None, f"no row {step!r} in\n{out}"
        figures = row[len(step):].split()
        # Elapsed seconds first, then rates: a step that took no measurable time still has a rate.
        assert re.fullmatch(r"[\d,]+\.\d", figures[0]) and any(re.search(r"[1-9]", f) for f in figures[:4]), row
    for name in _RATIOS:
        row = next((ln for ln in lines if ln.startswith(name)), None)
        assert row is not None, f"no ratio {name!r} in\n{out}"
        assert re.search(r"\s\d+\.\d\dx\s+\(target: at (least|most) [\d.]+x\)\s+"
                         r"(ok|below target|above target|not comparable)", row), row
        if "baseline" in name:  # held against the figures of this run, by the calibration of this machine
            assert "commit this-tree" in row and "the baseline step's speed (calibration" in row, row
    equal = next(ln for ln in lines if ln.startswith("spark output = sequential output"))
    assert re.search(r"\ssame\s+ok\s", equal), equal
    check_row = next(ln for ln in lines if ln.startswith("check of the spark output  "))
    # The notes: the verdict, then how fast the machine ran during the step.
    assert re.search(r"\sconformant; calibration \d+\.\d{3} s$", check_row), check_row
