"""The bench commands at a small size, so that they keep working; figures are printed, not judged."""
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.bench import inputs as bench_inputs
from ticdc_conformance.bench.calibration import calibration_seconds
from ticdc_conformance.bench.consume import ConsumeFigures, judge
from ticdc_conformance.bench.decode import _frames, bare_parser, measure_decode, record_batches
from ticdc_conformance.bench.floor import FloorFigures, _counting_decoder
from ticdc_conformance.bench.inputs import cache_key, cached_inputs, variant_config, variant_names
from ticdc_conformance.bench.sampling import TreeFigures, TreeSampler, _role
from ticdc_conformance.consumers.rules.decode_stage import decode_records
from ticdc_conformance.consumers.rules.decoder_options import decoder_options
from ticdc_conformance.consumers.spark.job import OUT_OF_ORDER
from ticdc_conformance.protocols.open_protocol.wire import split_frames
from ticdc_contract.record_files import iter_record_files, records_to_table

EVENTS = 300


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("bench")


def test_variants_cover_the_matrix_and_debezium_without_schema():
    assert variant_names() == ["open-protocol", "canal-json", "debezium", "debezium-no-schema", "simple-json",
                               "simple-avro"]
    assert variant_config("debezium-no-schema").debezium_disable_schema is True
    assert variant_config("debezium").debezium_disable_schema is False
    assert variant_config("simple-avro").encoding == "simple-avro"


def test_cache_key_follows_scenario_seed_events_and_config():
    base = cache_key("large", 1, 1000, variant_config("debezium"))
    assert base == cache_key("large", 1, 1000, variant_config("debezium"))
    others = {cache_key("large", 2, 1000, variant_config("debezium")),
              cache_key("large", 1, 1001, variant_config("debezium")),
              cache_key("large", 1, 1000, variant_config("debezium-no-schema")),
              cache_key("smoke", 1, 1000, variant_config("debezium"))}
    assert base not in others and len(others) == 4


def test_inputs_are_generated_once_and_reused(work):
    first = cached_inputs(work, "canal-json", EVENTS, echo=lambda s: None)
    assert not first.reused and first.manifest["events"] == EVENTS
    stamp = (first.records / "ticdc-large-0.parquet").stat().st_mtime_ns
    messages = []
    again = cached_inputs(work, "canal-json", EVENTS, echo=messages.append)
    assert again.reused and again.directory == first.directory and messages == []
    assert (again.records / "ticdc-large-0.parquet").stat().st_mtime_ns == stamp
    assert again.generated_seconds == first.generated_seconds


def test_an_interrupted_generation_is_not_taken_for_a_finished_one(work):
    config = variant_config("simple-json")
    name = f"large-simple-json-{EVENTS}-seed1-{cache_key('large', 1, EVENTS, config)}"
    partial = work / "inputs" / f"{name}.partial"
    (partial / "records").mkdir(parents=True)
    (partial / "records" / "junk.parquet").write_bytes(b"not parquet")
    half_done = work / "inputs" / name  # renamed but without cache.json: not complete either
    half_done.mkdir(parents=True)
    got = cached_inputs(work, "simple-json", EVENTS, echo=lambda s: None)
    assert not got.reused and not partial.exists()
    assert sorted(p.name for p in got.records.iterdir()) == [f"ticdc-large-{p}.parquet" for p in range(3)]
    assert json.loads((got.directory / "cache.json").read_text())["events"] == EVENTS


def test_reused_inputs_from_other_generator_code_are_pointed_out(work, monkeypatch):
    cached_inputs(work, "canal-json", EVENTS, echo=lambda s: None)
    monkeypatch.setattr(bench_inputs, "generator_digest", lambda: "0" * 16)
    messages = []
    assert cached_inputs(work, "canal-json", EVENTS, echo=messages.append).reused
    assert len(messages) == 1 and "different version of the generators' code" in messages[0]


def test_bare_open_protocol_split_finds_the_decoders_frames(work):
    inp = cached_inputs(work, "open-protocol", EVENTS, echo=lambda s: None)
    batched = 0
    for records in record_batches(inp.records):
        for r in records:
            assert [bytes(f) for f in _frames(r.key, 8)] == split_frames(r.key[8:], "key")
            assert [bytes(f) for f in _frames(r.value, 0)] == split_frames(r.value, "value")
            batched += len(split_frames(r.key[8:], "key")) > 1
    assert batched > 0  # the inputs do exercise batch frames


def test_floor_decode_pass_counts_every_event_and_refuses_offsets_going_back(work):
    inp = cached_inputs(work, "canal-json", EVENTS, echo=lambda s: None)
    path = sorted(inp.records.glob("*.parquet"))[0]
    records = list(iter_record_files(inp.records))
    mine = [r for r in records if (r.topic, r.partition) == (records[0].topic, records[0].partition)]
    protocol, options = inp.manifest["protocol"], decoder_options(inp.manifest, inp.directory)
    count = _counting_decoder(protocol, options)
    [out] = list(count(iter(pq.ParquetFile(path).iter_batches(batch_size=64))))
    expected = len(list(decode_records(mine, protocol, options)))
    assert out.column("rows").to_pylist() == [expected] and expected > len(mine) // 2
    backwards = records_to_table(mine[:3] + mine[1:2]).to_batches()
    with pytest.raises(ValueError, match=f"{OUT_OF_ORDER}: .* goes from offset"):
        list(count(iter(backwards)))


@pytest.mark.parametrize("variant", variant_names())
def test_measure_decode_covers_every_message(work, variant):
    inp = cached_inputs(work, variant, EVENTS, echo=lambda s: None)
    f = measure_decode(inp)
    assert f.messages == inp.manifest["records"]
    # Every row event arrives (plus DDL, watermarks and, for Simple, bootstraps).
    assert f.events > EVENTS
    assert f.decoder_seconds > 0 and f.bare_seconds > 0 and f.ratio > 0
    assert f.bare_name == bare_parser(inp.manifest)[0]


def test_record_batches_honours_the_limit(work):
    inp = cached_inputs(work, "canal-json", EVENTS, echo=lambda s: None)
    assert sum(len(b) for b in record_batches(inp.records, limit=123)) == 123


def test_cli_bench_decode_prints_rates_ratio_and_profile(work):
    proc = subprocess.run(CLI + ["bench", "decode", "--work", str(work), "--events", str(EVENTS), "--encoding",
                                 "canal-json", "--encoding", "simple-avro", "--profile", "50"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for variant, bare in (("canal-json", "orjson.loads"), ("simple-avro", "fastavro.schemaless_reader")):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(variant))
        assert re.search(r"decoder +[\d,]+ msg/s", line) and f"{bare} " in line
        assert re.search(r"ratio \d+\.\d\dx (ok|below target)", line)
    assert out.count("where the decoder's time goes") == 2
    assert "protocols/canal_json/" in out and "protocols/simple/" in out


_ALLOCATE = ("import subprocess, sys, time\n"
             "child = subprocess.Popen([sys.executable, '-c', 'import time; b = bytearray(96 << 20); time.sleep(1.5)'])\n"
             "a = bytearray(160 << 20)\n"
             "time.sleep(1.5)\n"
             "child.wait()\n")


def test_tree_sampler_separates_the_driver_from_its_children():
    proc = subprocess.Popen([sys.executable, "-c", _ALLOCATE])
    with TreeSampler(proc.pid, interval=0.05) as sampler:
        proc.wait()
        time.sleep(0.1)
    p = sampler.tree
    assert p.python >= 160 << 20
    assert p.workers >= 96 << 20 and p.workers < 160 << 20  # the child only, not the parent
    assert p.jvm == 0  # no java process in this tree
    assert p.total >= p.python + (96 << 20) - (8 << 20)  # both alive at one instant (less sampling noise)
    assert p.samples > 5
    assert 0 < p.cpu_seconds < 30 and p.load_mean >= 0
    assert p.probes == 0 and p.calibration is None  # not asked to probe


def test_tree_sampler_probes_the_machine_while_the_child_runs():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.2)"])
    with TreeSampler(proc.pid, interval=0.05, probe_every=0.2) as sampler:
        proc.wait()
    p = sampler.tree
    assert p.probes >= 4  # at once, then about every 0.2 s of 1.2 s
    # The probes are in the calibration's unit: the whole work's CPU time, within what this
    # machine's moments of contention spread it by.
    whole = calibration_seconds(rounds=3)
    assert whole / 4 < p.calibration < whole * 4


_TWO_PHASES = ("import sys, time\n"
               "def burn(seconds):\n"
               "    end = time.process_time() + seconds\n"
               "    while time.process_time() < end: pass\n"
               "burn(0.4)\n"
               "a = bytearray(64 << 20)\n"
               "print('first done', flush=True)\n"
               "sys.stdin.readline()\n"
               "b = bytearray(256 << 20)\n"
               "burn(1.2)\n")


def test_a_snapshot_holds_the_figures_up_to_its_moment_only():
    """bench consume takes the consumer's figures this way before the floor runs in the same child."""
    proc = subprocess.Popen([sys.executable, "-c", _TWO_PHASES], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    with TreeSampler(proc.pid, interval=0.05) as sampler:
        assert proc.stdout.readline() == "first done\n"
        first = sampler.snapshot()
        proc.stdin.write("go\n")
        proc.stdin.close()
        proc.wait()
    whole = sampler.tree
    assert 0.4 <= first.cpu_seconds < 1.2  # the first phase's CPU time, none of the second's
    assert whole.cpu_seconds >= first.cpu_seconds + 1.2
    assert 64 << 20 <= first.python < 256 << 20 <= whole.python  # the second phase's peak came later
    assert first.samples < whole.samples


def test_a_jvms_fork_is_not_counted_as_a_second_jvm():
    java = {10, 11, 30}
    assert _role(10, 1, java) == "jvm"  # the driver JVM, child of the Python driver
    assert _role(11, 10, java) is None  # its fork before exec: the parent's pages, reported again
    assert _role(30, 2, java) == "jvm"  # another JVM that no java process started
    assert _role(20, 10, java) == "workers"  # a Python worker the JVM started


def _run(events, seconds, python_rss, jvm_rss, floor=None):
    tree = TreeFigures(python=python_rss, jvm=jvm_rss, workers=0, total=python_rss + jvm_rss, samples=10,
                       cpu_seconds=2 * seconds)
    return ConsumeFigures("canal-json", events, events, events, 1.0, seconds, tree, Path("unused"), {}, floor)


def test_consume_verdicts_compare_the_target_with_the_floor():
    lines = []
    judge("canal-json", [_run(1_000_000, 200.0, 1, 1, FloorFigures(scan_seconds=4.0, parse_seconds=25.0,
                                                                    decode_seconds=40.0))], lines.append)
    text = "\n".join(lines)
    assert "out of reach on this master: a Spark job only parsing every message in the JVM and writing it once " \
           "(the fastest way it has) reaches 40,000 events/s" in text
    lines.clear()
    judge("open-protocol", [_run(1_000_000, 200.0, 1, 1, FloorFigures(scan_seconds=4.0, parse_seconds=None,
                                                                       decode_seconds=8.0))], lines.append)
    text = "\n".join(lines)
    assert "a Spark job only decoding every message with the suite's decoder (the fastest way it has) reaches " \
           "125,000 events/s here" in text
    assert "out of reach" not in text


def test_consume_verdicts_follow_the_targets():
    lines = []
    judge("canal-json", [_run(1_000_000, 5.0, 300 << 20, 1500 << 20), _run(10_000_000, 54.0, 310 << 20, 1900 << 20)],
          lines.append)
    text = "\n".join(lines)
    assert "200,000 events/s at 1,000,000 events" in text and "below target" not in text
    assert "time ratio 10,000,000/1,000,000 events 10.80x" in text and "above target" not in text
    assert "CPU time ratio 10.80x" in text
    lines.clear()
    judge("canal-json", [_run(1_000_000, 20.0, 300 << 20, 1500 << 20), _run(10_000_000, 250.0, 2100 << 20, 3000 << 20)],
          lines.append)
    text = "\n".join(lines)
    assert "50,000 events/s at 1,000,000 events" in text and text.count("below target") == 1
    assert "time ratio 10,000,000/1,000,000 events 12.50x" in text
    assert text.count("above target") == 3  # the ratio, the Python process and the JVM


@pytest.mark.spark
def test_cli_bench_consume_prints_rates_memory_and_cpu(work):
    proc = subprocess.run(CLI + ["bench", "consume", "--work", str(work), "--events", str(EVENTS), "--encoding",
                                 "canal-json", "--driver-memory", "1g"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = proc.stdout
    run = [ln for ln in out.splitlines() if ln.strip().startswith("canal-json ") and "events/s" in ln]
    assert len(run) == 1, out
    cpu = re.search(r"CPU ([\d,]+) s", run[0])
    assert cpu and int(cpu.group(1).replace(",", "")) > 0
    peaks = re.search(r"peak RSS: driver Python ([\d,]+) MiB, driver JVM ([\d,]+) MiB", out)
    assert peaks and int(peaks.group(1).replace(",", "")) > 0 and int(peaks.group(2).replace(",", "")) > 100
    assert f"events/s at {EVENTS:,} events" in out
    stages = dict(re.findall(r"(decode|admit|replay|write) ([\d.]+) s", out.split("stages: ", 1)[1].splitlines()[0]))
    assert set(stages) == {"decode", "admit", "replay", "write"} and all(float(v) > 0 for v in stages.values())
    floor = re.search(r"floor: scan ([\d.]+) s \(([\d,]+) records/s\), parse ([\d.]+) s .*, decode ([\d.]+) s .*"
                      r"the consumer takes ([\d.]+)x the (parse|decode) pass", out)
    assert floor and all(float(floor.group(i)) > 0 for i in (1, 3, 4, 5)), out
    assert re.search(r"a Spark job only (parsing|decoding) every message .* reaches [\d,]+ events/s here", out), out
    # The run's decoded intermediate data is removed; its final tables stay for inspection.
    out_dir = work / "consume" / f"canal-json-{EVENTS}"
    assert not (out_dir / "work").exists()
    assert sorted(p.name for p in (out_dir / "final").iterdir()) == [f"large.t{i}.ndjson" for i in range(4)]


def test_a_failed_child_is_reported_by_its_cause_not_only_its_tail(tmp_path):
    """A dying Spark job prints its cause and then pages of shutdown traces; the error quotes the
    cause and points at the whole stderr, kept in a file."""
    from ticdc_conformance.bench.child_failure import child_failure

    script = ("import sys\n"
              "print('WARNING: Using incubator modules', file=sys.stderr)\n"
              "print('java.lang.OutOfMemoryError: Java heap space', file=sys.stderr)\n"
              "print('\\tat org.apache.spark.sql.execution.arrow.ArrowWriter.write(ArrowWriter.scala:109)', file=sys.stderr)\n"
              "for i in range(2000):\n"
              "    print(f'\\tat org.apache.spark.util.SparkShutdownHook.run(ShutdownHookManager.scala:{i})', file=sys.stderr)\n"
              "sys.exit(1)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    log = tmp_path / "consume" / "debezium-10000000.stderr.log"
    error = child_failure("consumer run over records", proc.returncode, proc.stderr, log)
    message = str(error)
    assert "failed with exit code 1" in message and str(log) in message
    first, _, tail = message.partition("last lines:")
    assert "java.lang.OutOfMemoryError: Java heap space" in first
    assert "ArrowWriter" not in first and "incubator" not in first
    assert "ShutdownHookManager.scala:1999" in tail
    assert log.read_text() == proc.stderr
