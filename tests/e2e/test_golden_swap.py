"""`golden --update` replaces the corpus in one swap and cleans up after itself: SIGTERM stops it
like Ctrl-C, a later update removes what a killed one left, and a corpus that a crash left as
`golden.old` is put back before anything else (by an update or a check)."""
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.golden import corpus as g

from .test_golden import SMOKE, _copy

ONE = SMOKE[:1]


def _corpus(at: Path, paths: list[str]) -> dict:
    """A scratch corpus of the committed cases `paths` with the hand-written parts; its files."""
    _copy(paths, at)
    shutil.copy2(ROOT / "golden" / "README.md", at / "README.md")
    return _snapshot(at)


def _snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("mode", ["update", "check"])
def test_sigterm_mid_build_leaves_the_corpus_and_no_scratch_folder(tmp_path, mode):
    golden, scratch = tmp_path / "golden", tmp_path / "tmp"
    scratch.mkdir()
    before = _corpus(golden, ONE)
    proc = subprocess.Popen(CLI + ["golden", f"--{mode}", "--dir", str(golden)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, TMPDIR=str(scratch)))
    try:
        deadline = time.monotonic() + 180
        # Stop it mid-build: once its scratch or staging folder (anywhere but golden/) holds a case.
        while not any(golden not in p.parents for p in tmp_path.rglob("case.json")):
            assert proc.poll() is None and time.monotonic() < deadline, f"--{mode} ended before it was stopped"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, out, err)
    assert f"golden --{mode} interrupted by SIGTERM" in err, err
    assert _snapshot(golden) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden", "tmp"]  # no staging folder
    assert list(scratch.iterdir()) == []  # no ground-truth scratch folder either


def test_an_update_removes_what_killed_updates_left_and_keeps_a_running_ones(tmp_path, capsys):
    golden = tmp_path / "golden"
    _corpus(golden, ONE)
    dead = tmp_path / f".golden.staging-{_dead_pid()}-k1ll3d"
    live = tmp_path / f".golden.staging-{os.getpid()}-running"
    legacy = tmp_path / ".golden-new-abc123"  # the staging name of earlier versions
    for folder in (dead, live, legacy, tmp_path / "golden.old"):
        (folder / "smoke").mkdir(parents=True)
        (folder / "smoke" / "half-written.json").write_text("{")
    g.update(golden, only=ONE)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["golden", live.name])
    err = capsys.readouterr().err
    for gone in (dead, legacy, tmp_path / "golden.old"):
        assert f"golden: removed {gone}, left by an interrupted update" in err, err
    assert g.check(golden, only=ONE) == []


def test_an_update_puts_back_a_corpus_left_as_golden_old_before_building(tmp_path, capsys):
    golden, backup = tmp_path / "golden", tmp_path / "golden.old"
    before = _corpus(backup, ONE)  # a crash between the two renames of a swap
    changes = g.update(golden, only=ONE)
    err = capsys.readouterr().err
    assert f"golden: {golden} was missing after an interrupted update; restored it from {backup}" in err
    assert changes == {"added": [g.INDEX], "changed": [], "removed": []}
    after = _snapshot(golden)
    assert {k: v for k, v in after.items() if k != g.INDEX} == before  # schema/ and README.md kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]


def test_check_puts_back_a_corpus_left_as_golden_old(tmp_path, capsys):
    golden, backup = tmp_path / "golden", tmp_path / "golden.old"
    before = _corpus(backup, ONE)
    assert g.check(golden, only=ONE) == []
    assert "restored it from" in capsys.readouterr().err
    assert _snapshot(golden) == before and not backup.exists()


def test_without_an_exchange_an_interrupt_between_the_renames_puts_the_corpus_back(tmp_path, monkeypatch):
    from ticdc_conformance.golden import swap as golden_swap

    golden = tmp_path / "golden"
    before = _corpus(golden, ONE)
    real = Path.rename

    def rename(self, target):
        if Path(target) == golden and self.name.startswith(".golden"):
            raise KeyboardInterrupt  # as SIGTERM would, between golden -> golden.old and staging -> golden
        return real(self, target)

    monkeypatch.setattr(golden_swap, "_exchange", lambda a, b: False)
    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        g.update(golden, only=ONE)
    assert _snapshot(golden) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]


def test_the_swap_is_one_exchange_where_the_filesystem_offers_it(tmp_path, monkeypatch):
    from ticdc_conformance.golden import swap as golden_swap

    golden = tmp_path / "golden"
    _corpus(golden, ONE)
    seen = []
    real = golden_swap._exchange

    def exchange(a, b):
        seen.append((Path(a).name, Path(b).name, golden.is_dir()))
        done = real(a, b)
        seen.append(done)
        return done

    monkeypatch.setattr(golden_swap, "_exchange", exchange)
    renamed = []
    real_rename = Path.rename
    monkeypatch.setattr(Path, "rename", lambda self, target: renamed.append(target) or real_rename(self, target))
    g.update(golden, only=ONE)
    if seen[-1] is False:
        pytest.skip("this filesystem cannot exchange two folders; the two-rename swap is tested above")
    [(staging, target, present), _] = seen
    assert staging.startswith(".golden.staging-") and target == "golden" and present
    assert renamed == []  # never a moment without golden/
    assert g.check(golden, only=ONE) == []
