"""Holds `ticdc-conformance check` to the same findings before and after a change to the checks.

The check's output must not move when only its speed changes. This script builds a corpus of
consumer outputs once (correct outputs of every scenario × encoding, the deliberately broken
consumers' outputs, and correct outputs altered one way each), runs `check` over every one with a
given code tree and keeps what it printed, its exit status, result.json and the JSON summary;
`compare` then says where two such captures differ. The figures that measure time (`seconds`, the
elapsed time on the progress line) are the only parts left out.

    python tests/conformance/checks/findings_identity.py corpus DIR [--tree TREE]
    python tests/conformance/checks/findings_identity.py capture DIR OUT [--tree TREE]
    python tests/conformance/checks/findings_identity.py compare OUT_A OUT_B

TREE is a checkout of the project (its generators/ and conformance/ go first on PYTHONPATH); by
default the installed one. The corpus is built with TREE too, so that it does not move with work
in progress on the consumers.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ("smoke", "types", "keys", "ddl-evolution", "multi-table", "replays", "wide-rows", "large")
SMALL_EVENTS = {"large": 3000}  # scenarios whose default size is too large for a corpus
# The deliberately broken record-file consumers (tests/consumers/), over the scenarios that show them.
BROKEN_PROGRAMS = ("ignores_deletes", "applies_ddl_twice", "reapplies_replays", "drops_replays", "final_only",
                   "extra_table", "ignores_rename", "ignores_watermarks", "enum_names", "declared_fsp",
                   "timestamp_in_utc", "widens_float", "decimal_numbers", "decimal_as_double", "iso_temporal",
                   "json_documents", "json_as_javascript", "protojson_integers", "byte_arrays")
BROKEN_PROGRAM_SCENARIOS = {"applies_ddl_twice": ("smoke", "ddl-evolution"), "ignores_rename": ("ddl-evolution",),
                            "json_documents": ("types",), "json_as_javascript": ("types",), "byte_arrays": ("types",)}
# The broken streaming consumers (tests/consumers/streaming/), fed with restarts.
BROKEN_STREAMING = ("newest_schema:NewestSchema", "partition_watermark:PartitionWatermark",
                    "drops_resends:DropsResends", "loses_buffered_rows:LosesBufferedRows",
                    "reapplies_after_restart:ReappliesAfterRestart")
STREAMING_SCHEDULE = "round-robin:batch=1-8,restarts=2,restart=crash"
MUTATED_ENCODINGS = ("canal-json", "open-protocol", "debezium", "simple-avro")
MUTATED_SCENARIOS = ("smoke", "ddl-evolution")


def _env(tree: Optional[Path]) -> dict:
    # One hash seed for both trees: an order that follows set iteration (which the seed changes)
    # must not read as a difference between them.
    env = dict(os.environ, TICDC_PROGRESS_EVERY_S="100000", PYTHONHASHSEED="0")
    if tree is not None:
        paths = [str(tree / "generators"), str(tree / "conformance"), str(tree)]
        env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _cli(tree: Optional[Path], *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ticdc_conformance", *args], cwd=cwd, env=_env(tree),
                          capture_output=True, text=True)


# --- the corpus --------------------------------------------------------------------------------
def _run(tree: Optional[Path], work: Path, scenario: str, consumer: str, *extra: str) -> None:
    if any(work.glob(f"{scenario}-seed*/*/consumer")):
        return  # built before
    events = ["--events", str(SMALL_EVENTS[scenario])] if scenario in SMALL_EVENTS else []
    done = _cli(tree, "run", "--scenario", scenario, "--protocol", "all", "--consumer", consumer,
                "--work", str(work), *events, *extra, cwd=tree or ROOT)
    print(f"run {scenario} {consumer}: exit {done.returncode}", flush=True)
    if done.returncode not in (0, 1, 4):
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def _mutate(out: Path, how: Callable[[Path], None], into: Path) -> None:
    shutil.copytree(out, into)
    how(into)


def _edit(path: Path, edit: Callable[[list[bytes]], list[bytes]]) -> None:
    path.write_bytes(b"".join(edit(_lines(path))))


def _nth(kind: bytes, n: int) -> Callable[[list[bytes]], Optional[int]]:
    def find(lines: list[bytes]) -> Optional[int]:
        hits = [i for i, line in enumerate(lines) if kind in line]
        return hits[min(n, len(hits) - 1)] if hits else None
    return find


def _drop(find):
    return lambda lines: lines if find(lines) is None else lines[:find(lines)] + lines[find(lines) + 1:]


def _twice(find):
    return lambda lines: lines if find(lines) is None else lines[:find(lines) + 1] + lines[find(lines):]


def _swap_next(find):
    def edit(lines):
        i = find(lines)
        if i is None or i + 1 >= len(lines):
            return lines
        return lines[:i] + [lines[i + 1], lines[i]] + lines[i + 2:]
    return edit


def _state_files(out: Path) -> list[Path]:
    return sorted((out / "states").glob("*.ndjson"))


def _each_state(edit):
    def how(out: Path) -> None:
        for path in _state_files(out)[:2]:
            _edit(path, edit)
    return how


def _retype_first_number(lines: list[bytes]) -> list[bytes]:
    """A faithful other spelling: the first integer value of a row as a double (5 -> 5.0)."""
    out = []
    done = False
    for line in lines:
        if not done:
            new = re.sub(rb'("row":\{"[^"]+":)(-?\d+)([,}])', rb"\1\2.0\3", line, count=1)
            done = new != line
            line = new
        out.append(line)
    return out


def _alter_value(lines: list[bytes]) -> list[bytes]:
    """A wrong value in the middle of a state file: the first digit of a row image changed."""
    if not lines:
        return lines
    i = len(lines) // 2
    m = re.search(rb'"row":\{.*?(\d)', lines[i])
    if m is None:
        return lines
    d = m.group(1)
    lines[i] = lines[i][:m.start(1)] + (b"7" if d != b"7" else b"3") + lines[i][m.end(1):]
    return lines


def _stray(lines: list[bytes]) -> list[bytes]:
    return lines + [b'{"from":1,"to":null,"row":{"x":1}}\n'] if lines else lines


def _garbage(lines: list[bytes]) -> list[bytes]:
    return lines[:1] + [b"{not json\n"] + lines[1:]


def _final_extra_column(out: Path) -> None:
    files = sorted((out / "final").glob("*.ndjson"))
    if files:
        _edit(files[0], lambda lines: [re.sub(rb"\}\s*$", b',"zz_extra":1}\n', line, count=1) for line in lines])


def _final_drop_row(out: Path) -> None:
    for path in sorted((out / "final").glob("*.ndjson"))[:2]:
        _edit(path, lambda lines: lines[1:])


APPLIED = "applied.ndjson"
MUTATIONS: dict[str, Callable[[Path], None]] = {
    "drop-txn": lambda o: _edit(o / APPLIED, _drop(_nth(b'"kind":"txn"', 3))),
    "drop-late-txn": lambda o: _edit(o / APPLIED, _drop(_nth(b'"kind":"txn"', 10**6))),
    "txn-twice": lambda o: _edit(o / APPLIED, _twice(_nth(b'"kind":"txn"', 2))),
    "ddl-twice": lambda o: _edit(o / APPLIED, _twice(_nth(b'"kind":"ddl"', 1))),
    "drop-ddl": lambda o: _edit(o / APPLIED, _drop(_nth(b'"kind":"ddl"', 2))),
    "swap-txn": lambda o: _edit(o / APPLIED, _swap_next(_nth(b'"kind":"txn"', 4))),
    "checkpoint-early": lambda o: _edit(o / APPLIED, _swap_next(_nth(b'"kind":"txn"', 5))),
    "checkpoint-twice": lambda o: _edit(o / APPLIED, _twice(_nth(b'"kind":"checkpoint"', 2))),
    "drop-checkpoint": lambda o: _edit(o / APPLIED, _drop(_nth(b'"kind":"checkpoint"', 1))),
    "applied-garbage": lambda o: _edit(o / APPLIED, _garbage),
    "state-value": _each_state(_alter_value),
    "state-drop-line": _each_state(lambda lines: lines[1:]),
    "state-twice": _each_state(lambda lines: lines[:1] + lines),
    "state-stray": _each_state(_stray),
    "state-garbage": _each_state(_garbage),
    "state-other-spelling": _each_state(_retype_first_number),
    "no-states": lambda o: shutil.rmtree(o / "states", ignore_errors=True),
    "final-extra-column": _final_extra_column,
    "final-drop-row": _final_drop_row,
}


def build_corpus(corpus: Path, tree: Optional[Path]) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        _run(tree, corpus / "correct", scenario, "local")
    consumers = (tree or ROOT) / "tests" / "consumers"
    for name in BROKEN_PROGRAMS:
        for scenario in BROKEN_PROGRAM_SCENARIOS.get(name, ("smoke",)):
            _run(tree, corpus / f"broken-{name}", scenario, f"{sys.executable} {consumers / name}.py")
    for spec in BROKEN_STREAMING:
        for scenario in ("smoke",):
            _run(tree, corpus / f"streaming-{spec.split(':')[0]}", scenario,
                 f"python:tests.consumers.streaming.{spec}", "--schedule", STREAMING_SCHEDULE)
    for scenario in MUTATED_SCENARIOS:
        for encoding in MUTATED_ENCODINGS:
            for case in sorted((corpus / "correct").glob(f"{scenario}-seed*/{encoding}")):
                for name, how in MUTATIONS.items():
                    into = corpus / "mutated" / f"{scenario}-{encoding}-{name}"
                    if not into.exists():
                        _mutate(case / "consumer", how, into)
                        (into / "case").write_text(str(case))


def pairs(corpus: Path) -> list[tuple[str, Path, Path]]:
    """(name, case, out) for every output of the corpus, in a fixed order."""
    found = []
    for out in sorted(corpus.glob("*/*-seed*/*/consumer")):
        found.append((str(out.parent.relative_to(corpus)), out.parent, out))
    for out in sorted((corpus / "mutated").glob("*")):
        found.append((f"mutated/{out.name}", Path((out / "case").read_text()), out))
    return found


# --- capture and compare -----------------------------------------------------------------------
_TIMES = re.compile(r"(│\s*)\d+\.\d+(\s*│)")


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def _printed(text: str) -> str:
    text = _TIMES.sub(lambda m: m.group(1) + "<s>" + m.group(2), text)
    return re.sub(r" in \d+s\b", " in <s>", text)


def capture(corpus: Path, into: Path, tree: Optional[Path], only: Optional[str] = None) -> None:
    """Runs the capture in one process of TREE's code (the import costs once, not per output)."""
    args = [sys.executable, __file__, "capture-here", str(corpus), str(into)] + (["--only", only] if only else [])
    subprocess.run(args, cwd=ROOT, env=_env(tree), check=True)


def capture_here(corpus: Path, into: Path, only: Optional[str] = None) -> None:
    from click.testing import CliRunner

    from ticdc_conformance.cli import main as cli

    into.mkdir(parents=True, exist_ok=True)
    for name, case, out in pairs(corpus):
        if only and only not in name:
            continue
        report = into / "reports" / name
        shutil.rmtree(report, ignore_errors=True)
        (case / "result.json").unlink(missing_ok=True)
        done = CliRunner().invoke(cli, ["check", "--case", str(case), "--out", str(out), "--report", str(report)],
                                  catch_exceptions=True)
        error = "".join(__import__("traceback").format_exception(done.exception)) \
            if done.exception is not None and not isinstance(done.exception, SystemExit) else None
        record = {"exit": done.exit_code, "output": _printed(done.output), "exception": error}
        result = case / "result.json"
        record["result"] = _without_times(json.loads(result.read_text())) if result.exists() else None
        summaries = sorted(report.glob("*.summary.json"))
        record["summary"] = [_without_times(json.loads(p.read_text())) for p in summaries]
        junit = sorted(report.glob("*.junit.xml"))
        record["junit"] = [re.sub(r'time="[0-9.]+"', 'time=""', p.read_text()) for p in junit]
        target = into / (name.replace("/", "__") + ".json")
        target.write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        print(f"{name}: exit {done.exit_code}", flush=True)


def _here(path: Path, capture_dir: Path) -> str:
    """A capture's text with its own folder named the same way in both (the reports are written there)."""
    text = path.read_text().replace(str(capture_dir.resolve()), "<capture>").replace(str(capture_dir), "<capture>")
    return re.sub(r"<s>\s*│", "<s> │", text)  # the seconds column's width follows the figure


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    differ = 0
    for name in names:
        left, right = a / name, b / name
        if not (left.exists() and right.exists()):
            print(f"{name}: only in {a if left.exists() else b}")
            differ += 1
        elif _here(left, a) != _here(right, b):
            print(f"{name}: DIFFERS")
            differ += 1
    print(f"{len(names)} outputs compared, {differ} differ")
    return 1 if differ else 0


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("corpus")
    p.add_argument("dir", type=Path)
    p.add_argument("--tree", type=Path)
    p = sub.add_parser("capture")
    p.add_argument("dir", type=Path)
    p.add_argument("into", type=Path)
    p.add_argument("--tree", type=Path)
    p.add_argument("--only", help="only the outputs whose name holds this text")
    p = sub.add_parser("capture-here", help="capture with the code this process imports")
    p.add_argument("dir", type=Path)
    p.add_argument("into", type=Path)
    p.add_argument("--only")
    p = sub.add_parser("compare")
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "corpus":
        build_corpus(args.dir, args.tree)
    elif args.command == "capture":
        capture(args.dir, args.into, args.tree, args.only)
    elif args.command == "capture-here":
        capture_here(args.dir, args.into, args.only)
    else:
        return compare(args.a, args.b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
