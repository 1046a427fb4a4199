"""Byte identity of generated output: the sha256 of every file `generate` writes, for a matrix of
scenarios × encodings × sink options, recorded once and compared after a change to the generators.

    python tests/generators/byte_identity.py record  OUT.json [--only small|large] [--jobs N]
    python tests/generators/byte_identity.py compare OUT.json [--only small|large] [--jobs N]

`record` generates every case into a scratch folder and writes the hashes; `compare` generates them
again with the tree on the import path and names every case whose files differ (exit 1). Run the
recording with an older tree first on PYTHONPATH (`PYTHONPATH=<old>/generators`) to compare a
change against it. The cases are the default-matrix encodings plus Debezium without its schema
(the benchmark encodings) for every named scenario at its default size and `large` at 50,000 row
events, and option variants (every branch an encoder or the simulator takes on a sink option) on
the small scenarios. `--only small` leaves out `large` (seconds instead of minutes).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ticdc_conformance.bench.inputs import VARIANTS

# The six benchmark encodings: (encoding of the default matrix, option overrides), as `bench` names them.
ENCODINGS: dict[str, tuple[str, dict]] = VARIANTS
LARGE_EVENTS = 50_000
# Sink options whose branches the encoders and the simulator take, tried on the small scenarios.
_SMALL_LIMIT = {"max_message_bytes": 2048}
# Simple's DDL and BOOTSTRAP messages carry the whole table schema: a limit they fit under.
_SIMPLE_LIMIT = {"max_message_bytes": 16384}
OPTION_VARIANTS: dict[str, tuple[str, dict]] = {
    "open-protocol-no-old-value": ("open-protocol", {"output_old_value": False}),
    "open-protocol-handle-key-delete": ("open-protocol", {"delete_only_output_handle_key_columns": True}),
    "open-protocol-updated-only": ("open-protocol", {"only_output_updated_columns": True}),
    "open-protocol-batch-1": ("open-protocol", {"max_batch_size": 1}),
    "open-protocol-tiflow": ("open-protocol", {"version_profile": "tiflow"}),
    "open-protocol-handle-key-only": ("open-protocol", {"large_message_handle_option": "handle-key-only",
                                                        **_SMALL_LIMIT}),
    "open-protocol-claim-check-lz4": ("open-protocol", {"large_message_handle_option": "claim-check",
                                                       "claim_check_storage_uri": "file:///tmp/cc",
                                                       "large_message_handle_compression": "lz4",
                                                       **_SMALL_LIMIT}),
    "open-protocol-checksum-tz": ("open-protocol", {"integrity_check_level": "correctness",
                                                   "time_zone": "Asia/Shanghai"}),
    "canal-json-no-extension": ("canal-json", {"enable_tidb_extension": False}),
    "canal-json-content-compatible": ("canal-json", {"content_compatible": True}),
    "canal-json-updated-only": ("canal-json", {"only_output_updated_columns": True}),
    "canal-json-handle-key-delete": ("canal-json", {"delete_only_output_handle_key_columns": True}),
    "canal-json-tiflow": ("canal-json", {"version_profile": "tiflow"}),
    "canal-json-handle-key-only-snappy": ("canal-json", {"large_message_handle_option": "handle-key-only",
                                                        "large_message_handle_compression": "snappy",
                                                        **_SMALL_LIMIT}),
    "canal-json-claim-check-raw": ("canal-json", {"large_message_handle_option": "claim-check",
                                                 "claim_check_storage_uri": "s3://bucket/p?endpoint=x",
                                                 "claim_check_raw_value": True, **_SMALL_LIMIT}),
    "canal-json-checksum-tz": ("canal-json", {"integrity_check_level": "correctness",
                                             "time_zone": "America/New_York"}),
    "debezium-no-extension": ("debezium", {"enable_tidb_extension": False}),
    "debezium-start-ts": ("debezium", {"debezium_include_start_ts": True}),
    "debezium-tiflow": ("debezium", {"version_profile": "tiflow"}),
    "debezium-tz-cluster": ("debezium", {"time_zone": "Asia/Shanghai", "cluster_id": "c-1"}),
    "debezium-no-schema-handle-key-delete": ("debezium", {"debezium_disable_schema": True,
                                                          "delete_only_output_handle_key_columns": True}),
    "simple-json-bootstrap-partition-0": ("simple-json", {"send_bootstrap_to_all_partition": False}),
    "simple-json-bootstrap-at-start": ("simple-json", {"send_all_bootstrap_at_start": True,
                                                       "send_bootstrap_in_msg_count": 7}),
    "simple-json-raw-change": ("simple-json", {"output_raw_change_event": True}),
    "simple-json-tiflow-checksum": ("simple-json", {"version_profile": "tiflow",
                                                    "integrity_check_level": "correctness"}),
    "simple-json-handle-key-only": ("simple-json", {"large_message_handle_option": "handle-key-only",
                                                    **_SIMPLE_LIMIT}),
    "simple-avro-tiflow": ("simple-avro", {"version_profile": "tiflow"}),
    "simple-avro-claim-check": ("simple-avro", {"large_message_handle_option": "claim-check",
                                                "claim_check_storage_uri": "file:///tmp/cc", **_SIMPLE_LIMIT}),
    "simple-avro-checksum-tz": ("simple-avro", {"integrity_check_level": "correctness",
                                                "time_zone": "Europe/Berlin"}),
    "simple-avro-updated-only": ("simple-avro", {"only_output_updated_columns": True}),
}
OPTION_SCENARIOS = ("smoke", "types", "keys", "ddl-evolution")
DELIVERY_VARIANTS: dict[str, tuple[str, dict]] = {
    "canal-json-failovers-interleaved": ("canal-json", {"failovers": 3, "failover_spacing": 40,
                                                        "checkpoint_lag": 2, "interleave_tables": True}),
    "simple-json-failovers": ("simple-json", {"failovers": 2, "failover_spacing": 60}),
}


def cases(only: str | None = None) -> list[tuple[str, str, int | None, str, dict]]:
    """(case name, scenario, events, encoding, overrides) of every case."""
    from ticdc_generators.scenarios import SCENARIOS

    out = []
    for scenario in sorted(SCENARIOS):
        events = LARGE_EVENTS if scenario == "large" else None
        if (only == "small" and scenario == "large") or (only == "large" and scenario != "large"):
            continue
        for name, (encoding, overrides) in ENCODINGS.items():
            out.append((f"{scenario}/{name}", scenario, events, encoding, overrides))
    if only != "large":
        for scenario in OPTION_SCENARIOS:
            for name, (encoding, overrides) in OPTION_VARIANTS.items():
                out.append((f"{scenario}/{name}", scenario, None, encoding, overrides))
        for name, (encoding, overrides) in DELIVERY_VARIANTS.items():
            out.append((f"smoke/{name}", "smoke", None, encoding, overrides))
    return out


def digest_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def run_case(case: tuple[str, str, int | None, str, dict]) -> tuple[str, dict]:
    from ticdc_generators.errors import ChangefeedFailure
    from ticdc_generators.pipeline import config_for, generate

    name, scenario, events, encoding, overrides = case
    with tempfile.TemporaryDirectory(prefix="byte-identity-") as tmp:
        try:
            generate(scenario, 1, config_for(scenario, encoding, **overrides), Path(tmp), events=events)
        except ChangefeedFailure as e:
            # A changefeed TiCDC would fail is an outcome too: its message must stay the same.
            return name, {"changefeed_failure": str(e)}
        return name, digest_tree(Path(tmp))


def generate_all(only: str | None, jobs: int, names: list[str] = ()) -> dict[str, dict]:
    todo = [c for c in cases(only) if not names or any(n in c[0] for n in names)]
    if jobs <= 1:
        return dict(map(run_case, todo))
    with ProcessPoolExecutor(jobs) as pool:
        return dict(pool.map(run_case, todo))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("hashes", type=Path)
    parser.add_argument("--only", choices=("small", "large"), default=None)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--case", action="append", default=[],
                        help="Only cases whose name contains this text (repeatable); compare only.")
    args = parser.parse_args(argv)
    got = generate_all(args.only, args.jobs, args.case)
    if args.action == "record":
        args.hashes.write_text(json.dumps({"cases": got}, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(got)} cases, {sum(len(v) for v in got.values())} files -> {args.hashes}")
        return 0
    expected = json.loads(args.hashes.read_text())["cases"]
    differ = [name for name in got if name in expected and got[name] != expected[name]]
    missing = [name for name in got if name not in expected]
    for name in differ:
        files = sorted(k for k in set(got[name]) | set(expected[name]) if got[name].get(k) != expected[name].get(k))
        print(f"DIFFERS {name}: {', '.join(files)}")
    for name in missing:
        print(f"NOT RECORDED {name}")
    print(f"compared {len(got) - len(missing)} cases: {len(differ)} differ")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
