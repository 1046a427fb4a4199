"""What `run` prints into a CI log: progress lines on a non-terminal at a set interval (however long a
step takes), findings counted per rule, the consumer's own output kept in CASE/consumer.log, and none
of Spark's log lines."""
import io
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from tests.conftest import CLI, ROOT
from ticdc_conformance.cli import main
from ticdc_conformance.progress import EVERY_ENV, Progress, ProgressSettingError, line_every_s
from ticdc_conformance.runner import run_encoding
from ticdc_generators.pipeline import encoding_names

# A record-file consumer that takes its time and then writes nothing: a consumer error after 3 s.
SLOW = "sh -c 'sleep 3'"


def test_progress_lines_come_from_a_heartbeat_while_a_step_runs():
    out = io.StringIO()
    p = Progress("run", out, terminal=False, every_s=0.2)
    p.start("smoke seed 1", total=1)
    p.update("canal-json 1/1: consume, 306 records", announce=True)
    time.sleep(0.9)  # no update meanwhile: only the heartbeat can print
    p.stop("1 encoding(s) in 1s")
    lines = out.getvalue().splitlines()
    assert lines[0] == "run smoke seed 1: started"
    assert lines[1] == "run smoke seed 1: canal-json 1/1: consume, 306 records, 0s"
    beats = [line for line in lines[2:-1] if line.startswith("run smoke seed 1: canal-json 1/1: consume, 306 records, ")]
    assert len(beats) >= 2 and beats == lines[2:-1]
    assert lines[-1] == "run smoke seed 1: 1 encoding(s) in 1s"
    time.sleep(0.3)
    assert out.getvalue().splitlines()[-1] == lines[-1]  # stopped: the heartbeat is gone


def test_on_a_terminal_a_bar_and_no_heartbeat():
    out = io.StringIO()
    p = Progress("run", out, terminal=True, every_s=0.1)
    p.start("smoke seed 1", total=2)
    p.update("canal-json 1/2: consume, 306 records", completed=0, announce=True)
    time.sleep(0.3)
    p.update("canal-json 1/2: NOT conformant", completed=1)
    p.stop("2 encoding(s) in 1s")
    text = out.getvalue()
    assert "smoke seed 1" in text and "canal-json 1/2: NOT conformant" in text  # the bar's last state
    assert text.rstrip().endswith("run smoke seed 1: 2 encoding(s) in 1s")
    assert "consume, 306 records, 0s" not in text  # no plain status lines beside the bar


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(EVERY_ENV, raising=False)
    assert line_every_s() == 30
    monkeypatch.setenv(EVERY_ENV, "2.5")
    assert line_every_s() == 2.5
    for bad in ("0", "-1", "soon", "inf"):
        monkeypatch.setenv(EVERY_ENV, bad)
        with pytest.raises(ProgressSettingError, match=f"{EVERY_ENV}='{bad}': expected a number of seconds"):
            line_every_s()


def test_a_run_in_a_log_prints_a_line_every_interval_while_the_consumer_runs(tmp_path):
    env = dict(os.environ, **{EVERY_ENV: "1"})
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", SLOW,
                                 "--work", str(tmp_path / "w")], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "run smoke seed 1: 1 encoding(s)"
    assert re.fullmatch(r"run smoke seed 1: canal-json 1/1: generate, \d+s", lines[1])
    consuming = [int(m.group(1)) for line in lines
                 if (m := re.fullmatch(r"run smoke seed 1: canal-json 1/1: consume, 306 records, (\d+)s", line))]
    # The phase's own line, then one a second while the consumer sleeps.
    assert len(consuming) >= 3 and consuming == sorted(consuming), proc.stderr
    assert re.fullmatch(r"run smoke seed 1: 1 encoding\(s\) in \d+s", lines[-1])
    # The verdict names the file holding the consumer's output.
    log = tmp_path / "w" / "smoke-seed1" / "canal-json" / "consumer.log"
    assert f"its output: {log}" in proc.stdout or f"consumer output: {log}" in proc.stdout, proc.stdout


def test_a_bad_interval_is_a_bad_invocation(tmp_path):
    r = CliRunner().invoke(main, ["run", "--protocol", "canal-json", "--consumer", "local", "--work", str(tmp_path)],
                           env={EVERY_ENV: "often"})
    assert r.exit_code == 2 and f"{EVERY_ENV}='often'" in r.output


CHATTY = '''
import sys
from ticdc_conformance.consumers.streaming import StreamingConsumer


class Chatty(StreamingConsumer):
    def handle(self, message):
        print("chatty handles", message["type"])
        print("chatty complains", file=sys.stderr)
        return super().handle(message)
'''


def test_an_in_process_consumer_prints_into_its_log(tmp_path, monkeypatch, capfd):
    (tmp_path / "chatty_consumer.py").write_text(CHATTY)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = run_encoding("smoke", 1, "canal-json", tmp_path / "w", consumer="python:chatty_consumer:Chatty")
    assert result.conformant, result.render()
    printed = capfd.readouterr()
    assert "chatty" not in printed.out + printed.err
    log = (result.case / "consumer.log").read_text()
    assert "chatty handles record" in log and "chatty complains" in log
    assert result.consumer_log == result.case / "consumer.log"


def test_findings_are_counted_per_rule_before_the_first_of_each(tmp_path):
    broken = f"{sys.executable} {ROOT / 'tests' / 'consumers' / 'ignores_deletes.py'}"
    result = run_encoding("smoke", 1, "canal-json", tmp_path, consumer=broken)
    text = result.render(per_rule=2)
    counts = re.search(r"^  findings per rule: (.*)$", text, re.M).group(1)
    listed = dict(part.rsplit(" ", 1) for part in counts.split(", "))
    assert "CONSUMER-DELETE-1" in listed and int(listed["CONSUMER-DELETE-1"]) > 2
    assert text.index("findings per rule") < text.index("[CONSUMER-DELETE-1]")
    assert f"… {int(listed['CONSUMER-DELETE-1']) - 2} more CONSUMER-DELETE-1 findings" in text
    assert f"consumer output: {result.case / 'consumer.log'}" in text


# What Spark prints when its log goes to the terminal: the JVM's notes, log4j's default level, its lines.
SPARK_NOISE = re.compile(r"log4j|Setting default log level|setLogLevel|WARN |incubator modules|SparkContext|"
                         r"NativeCodeLoader|setuptools|pkg_resources")


@pytest.mark.spark
def test_a_spark_run_of_every_encoding_writes_reports_and_prints_none_of_sparks_log(tmp_path):
    env = dict(os.environ)
    env.pop("TICDC_CONFORMANCE_SPARK_LOG", None)
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "all", "--work", str(tmp_path / "w"),
                                 "--report", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for enc in encoding_names():
        assert enc in proc.stdout
    assert proc.stdout.count("conformant") >= 5 and "NOT conformant" not in proc.stdout
    junit = ET.parse(tmp_path / "r" / "smoke-seed1-all.junit.xml").getroot()
    assert [s.get("name") for s in junit.findall("testsuite")] == [f"smoke/{enc}" for enc in encoding_names()]
    assert junit.get("failures") == "0" and junit.get("errors") == "0" and int(junit.get("tests")) >= 5 * 10
    summary = json.loads((tmp_path / "r" / "smoke-seed1-all.summary.json").read_text())
    assert summary["conformant"] is True
    assert {r["encoding"] for r in summary["results"]} == set(encoding_names())
    noise = [line for line in (proc.stdout + proc.stderr).splitlines() if SPARK_NOISE.search(line)]
    assert noise == [], noise
    spark_log = (tmp_path / "w" / "spark.log").resolve()
    assert f"Spark's log (its JVM's output): {spark_log}" in proc.stdout
    assert spark_log.stat().st_size > 0  # the JVM's start-up notes went there
