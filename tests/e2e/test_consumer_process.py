"""A consumer program under the suite's control (consumers/adapters/program.py): its own process group, a
timeout and SIGTERM that end the whole group, its output in a log file the verdict names, and an
exit 0 without final/ that is an error, never a pass."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.consumers.adapters.program import Interrupted, consumer_argv, signals_interrupt
from ticdc_conformance.runner import run_encoding

# A consumer that starts a grandchild, writes both pids, says something on stdout and stderr, then
# waits far longer than any test.
SLEEPER = textwrap.dedent("""
    import subprocess, sys, time
    pids = sys.argv[1]
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    print("sleeper on stdout", flush=True)
    print("sleeper on stderr", file=sys.stderr, flush=True)
    with open(pids + ".tmp", "w") as f:
        f.write(f"{__import__('os').getpid()} {grandchild.pid}")
    __import__('os').replace(pids + ".tmp", pids)
    time.sleep(600)
""")


def _sleeper(tmp_path):
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    pids = tmp_path / "pids"
    return f"{sys.executable} {script} {pids}", pids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def _all_ended(pids, within_s=10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def _pids(path):
    return [int(p) for p in path.read_text().split()]


def test_a_consumer_past_its_timeout_is_killed_with_its_children(tmp_path):
    command, pids = _sleeper(tmp_path)
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "open-protocol", "--consumer", command,
                                 "--consumer-timeout", "3", "--work", str(tmp_path / "w"),
                                 "--report", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "did not finish within 3s (--consumer-timeout); its process group was killed" in proc.stdout
    consumer, grandchild = _pids(pids)
    assert _all_ended([consumer, grandchild]), "the consumer or its child outlived the timeout"
    log = tmp_path / "w" / "smoke-seed1" / "open-protocol" / "consumer.log"
    assert f"its output: {log}" in proc.stdout
    assert "sleeper on stdout" in log.read_text() and "sleeper on stderr" in log.read_text()
    summary = json.loads((tmp_path / "r" / "smoke-seed1-open-protocol.summary.json").read_text())
    [result] = summary["results"]
    assert (result["outcome"], result["exit_code"], result["consumer_log"]) == ("consumer error", 3, str(log))
    assert summary["exit_code"] == 3 and summary["conformant"] is False
    junit = ET.parse(tmp_path / "r" / "smoke-seed1-open-protocol.junit.xml").getroot()
    case = junit.find(".//testcase[@name='smoke/open-protocol::consumer-error']")
    assert junit.get("errors") == "1" and case.find("error") is not None and str(log) in case.find("error").text
    assert f"consumer log: {log}" in case.find("system-out").text


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_run_kills_the_consumers_process_group(tmp_path, sig):
    command, pids = _sleeper(tmp_path)
    run = subprocess.Popen(CLI + ["run", "--scenario", "smoke", "--protocol", "open-protocol", "--consumer", command,
                                  "--work", str(tmp_path / "w")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while not pids.exists():
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.1)
        consumer, grandchild = _pids(pids)
        run.send_signal(sig)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 128 + sig, err
    assert f"run stopped by {signal.Signals(sig).name}" in err and "process group" in err
    assert _all_ended([consumer, grandchild]), "the consumer or its child outlived the run"


def test_the_log_holds_what_a_failing_consumer_printed(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('reading records', flush=True)\n"
                      "sys.exit('cannot decode record ticdc-smoke/0@7')\n")
    result = run_encoding("smoke", 1, "open-protocol", tmp_path, consumer=f"{sys.executable} {script}")
    assert result.outcome == "consumer error" and result.exit_code == 3
    log = tmp_path / "smoke-seed1" / "open-protocol" / "consumer.log"
    assert result.consumer_log == log and result.to_json()["consumer_log"] == str(log)
    assert log.read_text() == "reading records\ncannot decode record ticdc-smoke/0@7\n"
    assert f"exited with 1; its output: {log}; last lines:" in result.error
    assert "cannot decode record ticdc-smoke/0@7" in result.error


def test_exit_0_without_final_is_a_consumer_error(tmp_path):
    proc = subprocess.run(CLI + ["run", "--scenario", "smoke", "--protocol", "canal-json", "--consumer", "true",
                                 "--work", str(tmp_path / "w")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "consumer error" in proc.stdout and "conformant" not in proc.stdout
    assert "the consumer wrote no" in proc.stdout and "final folder: nothing to judge" in proc.stdout


def test_the_consumer_command_is_split_by_shell_rules_without_a_shell(tmp_path):
    """Quotes keep an argument with a space whole; `$HOME` and `;` reach the program as text."""
    script = tmp_path / "args.py"
    script.write_text("import json, sys\nprint(json.dumps(sys.argv[1:4]))\nsys.exit(5)\n")
    assert consumer_argv(f"python '{script}' 'a b' \"$HOME;x\"") == ["python", str(script), "a b", "$HOME;x"]
    result = run_encoding("smoke", 1, "open-protocol", tmp_path,
                          consumer=f"{sys.executable} '{script}' 'a b' '$HOME;x'")
    assert json.loads(result.consumer_log.read_text().splitlines()[0]) == ["a b", "$HOME;x", "--records"]


def test_an_unsplittable_or_empty_consumer_command_is_a_usage_error(tmp_path):
    for command in ("python 'unclosed", "  "):
        proc = subprocess.run(CLI + ["run", "--protocol", "canal-json", "--consumer", command,
                                     "--work", str(tmp_path / "w")], capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 2 and "--consumer" in proc.stderr, proc.stderr
    assert not (tmp_path / "w").exists()


def test_signals_interrupt_raises_and_restores_the_handlers():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as stop:
        with signals_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises long before
    assert stop.value.signum == signal.SIGTERM and str(stop.value) == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before
