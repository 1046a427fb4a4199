"""A check that a change to the sequential consumer leaves its outputs byte-identical.

It runs `consume_local` (what `ticdc-conformance consume --engine local` runs) of two code trees over
the same inputs and compares every file they write: NDJSON and JSON byte for byte, Parquet by schema
and content (the same rows in the same order; a writer's row-group boundaries are not content).

    # once: the inputs (the golden corpus as record files, plus generated runs the corpus lacks)
    .venv/bin/python -m tests.helpers.local_outputs inputs --work /tmp/outputs-check
    # the old code's outputs, then the current code's, then the comparison
    PYTHONPATH=/tmp/before/generators:/tmp/before/conformance .venv/bin/python -m tests.helpers.local_outputs \\
        produce --work /tmp/outputs-check --side before
    .venv/bin/python -m tests.helpers.local_outputs produce --work /tmp/outputs-check --side after
    .venv/bin/python -m tests.helpers.local_outputs compare --work /tmp/outputs-check

`--extra DIR` (repeatable, with `inputs`) adds a `generate` output folder (records/ + manifest.json),
e.g. the bench input cache's entries. Run from the checkout's root; `produce` imports only what both
trees have (consume_local, the golden corpus reader), so the old tree runs it unchanged.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Generated runs beside the golden corpus: large messages (claim-check files, snapshot lookups),
# more restarts, the classic TiCDC profile, and a larger `large`.
_LARGE_MESSAGES = {
    "claim-check": 'large-message-handle-compression = "snappy"\nlarge-message-handle-option = "claim-check"\n'
                   'claim-check-storage-uri = "file:///tmp/ticdc-claim-check"\n',
    "handle-key-only": 'large-message-handle-compression = "lz4"\nlarge-message-handle-option = "handle-key-only"\n',
}
_ENCODINGS = ["open-protocol", "canal-json", "debezium", "simple-json", "simple-avro"]


def _generated() -> list[tuple[str, list[str]]]:
    runs = []
    for option in _LARGE_MESSAGES:
        for enc in ["open-protocol", "canal-json", "simple-json", "simple-avro"]:
            runs.append((f"wide-rows-{option}-{enc}", ["--scenario", "wide-rows", "--protocol", enc,
                                                        "--changefeed", f"@{option}"]))
    for enc in _ENCODINGS:
        runs.append((f"replays-failovers6-{enc}", ["--scenario", "replays", "--protocol", enc, "--failovers", "6",
                                                    "--seed", "3"]))
        runs.append((f"ddl-evolution-tiflow-{enc}", ["--scenario", "ddl-evolution", "--protocol", enc,
                                                      "--version-profile", "tiflow"]))
        runs.append((f"large-20000-{enc}", ["--scenario", "large", "--protocol", enc, "--events", "20000"]))
    return runs


def make_inputs(work: Path, extra: list[Path]) -> None:
    from ticdc_conformance.golden.corpus import iter_case_dirs
    from ticdc_conformance.golden.verify import write_record_files

    inputs = work / "inputs"
    golden = ROOT / "golden"
    for case_dir in iter_case_dirs(golden):
        name = "golden-" + case_dir.relative_to(golden).as_posix().replace("/", "-")
        target = inputs / name
        if (target / "manifest.json").exists():
            continue
        write_record_files(case_dir, target / "records")
        shutil.copyfile(case_dir / "case.json", target / "manifest.json")  # case.json is the run's manifest
    for name, args in _generated():
        target = inputs / name
        if (target / "manifest.json").exists():
            continue
        if target.exists():
            shutil.rmtree(target)
        args = list(args)
        if "--changefeed" in args:
            at = args.index("--changefeed") + 1
            toml = work / f"{args[at][1:]}.toml"
            toml.write_text("[sink.kafka-config]\nmax-message-bytes = 65536\n"
                            f"[sink.kafka-config.large-message-handle]\n{_LARGE_MESSAGES[args[at][1:]]}")
            args[at] = str(toml)
        subprocess.run([sys.executable, "-m", "ticdc_conformance", "generate", *args, "--out", str(target)],
                       check=True, cwd=ROOT)
    for path in extra:
        link = inputs / f"extra-{Path(path).name}"
        if not link.exists():
            link.symlink_to(Path(path).resolve())
    print(f"{len(list(inputs.iterdir()))} inputs in {inputs}")


def produce(work: Path, side: str, only: list[str]) -> None:
    from ticdc_conformance.consumers.sequential.consumer import consume_local
    from ticdc_conformance.errors import ConsumerError

    outputs = work / side
    for case in sorted((work / "inputs").iterdir()):
        if only and not any(o in case.name for o in only):
            continue
        out = outputs / case.name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        manifest = json.loads((case / "manifest.json").read_text())
        started = time.process_time()
        try:
            consume_local(case / "records", manifest, out)
        except ConsumerError as e:  # the error is an output too: it must stay the same
            (out / "error.txt").write_text(str(e))
        print(f"{side} {case.name}: {time.process_time() - started:.2f} s CPU", flush=True)


def _parquet_rows(path: Path) -> tuple:
    import pyarrow.parquet as pq
    table = pq.read_table(path)
    return table.schema, table.to_pylist()


def compare(work: Path) -> int:
    before, after = work / "before", work / "after"
    problems = []
    cases = sorted(p.name for p in before.iterdir())
    for name in cases:
        a, b = before / name, after / name
        if not b.exists():
            problems.append(f"{name}: no output of the current code")
            continue
        files_a = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
        files_b = sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
        if files_a != files_b:
            problems.append(f"{name}: files differ: only before {sorted(set(files_a) - set(files_b))}, "
                            f"only after {sorted(set(files_b) - set(files_a))}")
        for rel in sorted(set(files_a) & set(files_b)):
            fa, fb = a / rel, b / rel
            if rel.endswith(".parquet"):
                if _parquet_rows(fa) != _parquet_rows(fb):
                    problems.append(f"{name}/{rel}: Parquet content differs")
            elif fa.read_bytes() != fb.read_bytes():
                problems.append(f"{name}/{rel}: bytes differ")
    for p in problems:
        print(p)
    print(f"{len(cases)} cases compared, {len(problems)} difference(s)")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["inputs", "produce", "compare"])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--side", choices=["before", "after"], default="after")
    ap.add_argument("--extra", type=Path, action="append", default=[])
    ap.add_argument("--only", action="append", default=[], help="cases whose name contains this (repeatable)")
    a = ap.parse_args()
    if a.step == "inputs":
        make_inputs(a.work, a.extra)
    elif a.step == "produce":
        produce(a.work, a.side, a.only)
    else:
        return compare(a.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
