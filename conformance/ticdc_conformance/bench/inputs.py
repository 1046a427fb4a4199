"""Benchmark inputs: record files generated once per (scenario, seed, events, sink config) and kept.

Generating 10 million events takes most of an hour, so `bench decode` and `bench consume` share a
cache under WORK/inputs/. An entry is usable only once complete: it is generated into a
`.partial` folder by a child process and renamed into place after its `cache.json` is written, so
an interrupted run leaves nothing that a later run would take for a finished entry. A lock file
per entry makes two concurrent runs wait for one generation instead of racing.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Callable, Iterator

import ticdc_contract
import ticdc_generators
from ticdc_generators.pipeline import GENERATOR_VERSION, MANIFEST_FORMAT, config_for
from ticdc_generators.sink.config import SinkConfig

SCENARIO = "large"
CACHE_FORMAT = "ticdc-conformance/bench-inputs-v1"

# The encodings benchmarked: the default matrix plus Debezium without its schema half
# (TiCDC's debezium-disable-schema), whose messages are much smaller.
VARIANTS: dict[str, tuple[str, dict]] = {
    "open-protocol": ("open-protocol", {}),
    "canal-json": ("canal-json", {}),
    "debezium": ("debezium", {}),
    "debezium-no-schema": ("debezium", {"debezium_disable_schema": True}),
    "simple-json": ("simple-json", {}),
    "simple-avro": ("simple-avro", {}),
}


def variant_names() -> list[str]:
    return list(VARIANTS)


def variant_config(variant: str, scenario: str = SCENARIO) -> SinkConfig:
    try:
        encoding, overrides = VARIANTS[variant]
    except KeyError:
        raise ValueError(f"unknown benchmark encoding {variant!r}; expected one of {', '.join(VARIANTS)}") from None
    return config_for(scenario, encoding, **overrides)


def config_identity(config: SinkConfig) -> dict:
    """The sink options that differ from their defaults, as a changefeed would spell them out.

    Options added later with a default leave existing entries valid, which keying by every field
    would not; the full config is still written into each entry's cache.json.
    """
    full = asdict(config)
    return {f.name: full[f.name] for f in fields(config)
            if f.default is MISSING or getattr(config, f.name) != f.default}


def cache_key(scenario: str, seed: int, events: int, config: SinkConfig) -> str:
    """What the records depend on besides the generator's code, which is deterministic in these."""
    blob = json.dumps({"format": CACHE_FORMAT, "records": MANIFEST_FORMAT, "generator": GENERATOR_VERSION,
                       "scenario": scenario, "seed": seed, "events": events, "config": config_identity(config)},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def generator_digest() -> str:
    """A digest of the generators' and the contract's source: not part of the key (any edit would void every entry),
    but recorded, so that a reused entry made by other code is pointed out."""
    h = hashlib.sha256()
    for package in (ticdc_contract, ticdc_generators):
        # The package's folder: ticdc_contract may be a namespace package, which has no __file__.
        root = Path(next(iter(package.__path__)))
        for path in sorted(root.rglob("*.py")):
            h.update(path.relative_to(root.parent).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Inputs:
    variant: str
    directory: Path
    manifest: dict
    generated_seconds: float  # how long the generation took (when it ran, possibly earlier)
    reused: bool

    @property
    def records(self) -> Path:
        return self.directory / "records"


# Generation runs in a child process so that the benchmark process itself stays small (its own
# memory is not what is measured, but it shares the machine with what is).
_GENERATE_CHILD = r"""
import sys
from ticdc_conformance.bench.inputs import variant_config
from ticdc_generators.pipeline import generate
scenario, variant, seed, events, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
generate(scenario, seed, variant_config(variant, scenario), out, events=events)
"""


def cached_inputs(work: Path, variant: str, events: int, seed: int = 1, scenario: str = SCENARIO,
                  echo: Callable[[str], None] = print) -> Inputs:
    """The entry for these parameters, generating it first if no complete one exists."""
    config = variant_config(variant, scenario)
    key = cache_key(scenario, seed, events, config)
    root = Path(work) / "inputs"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{scenario}-{variant}-{events}-seed{seed}-{key}"
    with _locked(root / f"{final.name}.lock"):
        meta = _complete(final, key)
        if meta is not None:
            if meta.get("generator_digest") != generator_digest():
                echo(f"  note: {final.name} was generated by a different version of the generators' code; "
                     "delete it to regenerate")
            return Inputs(variant, final, json.loads((final / "manifest.json").read_text()),
                          meta["generated_seconds"], reused=True)
        partial = root / f"{final.name}.partial"
        for leftover in (partial, final):  # an interrupted generation, or an entry of another format
            if leftover.exists():
                shutil.rmtree(leftover)
        echo(f"  generating {events:,} events of scenario {scenario} as {variant} into {final} …")
        digest = generator_digest()  # before generating: the code the child is about to import
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", _GENERATE_CHILD, scenario, variant, str(seed), str(events),
                        str(partial)], check=True)
        seconds = time.perf_counter() - started
        (partial / "cache.json").write_text(json.dumps(
            {"format": CACHE_FORMAT, "key": key, "scenario": scenario, "variant": variant, "seed": seed,
             "events": events, "generated_seconds": seconds, "generator_digest": digest,
             "config": asdict(config)}, indent=2) + "\n")
        os.rename(partial, final)
        echo(f"  generated in {seconds:.0f} s")
        return Inputs(variant, final, json.loads((final / "manifest.json").read_text()), seconds, reused=False)


def _complete(entry: Path, key: str) -> dict | None:
    try:
        meta = json.loads((entry / "cache.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    if meta.get("format") != CACHE_FORMAT or meta.get("key") != key or not (entry / "manifest.json").exists():
        return None
    return meta


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
