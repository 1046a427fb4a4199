"""Large messages end to end: the wide-rows scenario under claim-check and handle-key-only,
consumed by the reference consumers (claim-check files fetched from the run folder, handle-key-only
rows completed from the upstream snapshot, on Spark's executors too) and found conformant at every
checkpoint."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import CLI, ROOT
from ticdc_conformance.runner import run_encoding
from ticdc_contract.record_files import iter_record_files
from ticdc_generators.pipeline import configure

LIMIT = 65536
OPTIONS = {
    "claim-check": 'large-message-handle-compression = "snappy"\nlarge-message-handle-option = "claim-check"\n'
                   'claim-check-storage-uri = "file:///tmp/ticdc-claim-check"\n',
    "handle-key-only": 'large-message-handle-compression = "lz4"\nlarge-message-handle-option = "handle-key-only"\n',
}


ENCODINGS = ["open-protocol", "canal-json", "simple-json", "simple-avro"]


def _changefeed(tmp_path, option):
    toml = tmp_path / "changefeed.toml"
    toml.write_text(f"[sink.kafka-config]\nmax-message-bytes = {LIMIT}\n"
                    f"[sink.kafka-config.large-message-handle]\n{OPTIONS[option]}")
    return toml


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_large_messages_are_conformant_with_the_reference_consumer(tmp_path, encoding, option):
    toml = _changefeed(tmp_path, option)
    work = tmp_path / "work"
    done = subprocess.run([*CLI, "run", "--scenario", "wide-rows", "--protocol", encoding, "--consumer", "local",
                           "--changefeed", str(toml), "--work", str(work)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [manifest_path] = work.rglob("manifest.json")
    manifest = json.loads(manifest_path.read_text())
    sizes = [len(r.value or b"") for r in iter_record_files(manifest_path.parent / "records")]
    # The scenario's 256 KiB values cannot travel whole: the large-message path was taken.
    assert max(sizes) < LIMIT
    if option == "claim-check":
        assert manifest["claim_check"]["files"] > 0


def spark_cases() -> list:
    """Each option × encoding on Spark. CI runs every encoding once, under one option or the other
    (the encoding at position i under the option at i modulo 2); the other half carries `nightly`.
    The decoders that resolve large messages are the sequential consumer's, which the test above
    runs under every option and encoding; on Spark the difference is where they run (the executors)."""
    options = sorted(OPTIONS)
    return [pytest.param(option, encoding, id=f"{option}-{encoding}",
                         marks=[] if options.index(option) == ENCODINGS.index(encoding) % len(options)
                         else [pytest.mark.nightly])
            for option in options for encoding in ENCODINGS]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("option", "encoding"), spark_cases())
def test_large_messages_are_conformant_with_the_spark_consumer(tmp_path, spark, option, encoding):
    config = configure("wide-rows", encoding, changefeed=_changefeed(tmp_path, option))
    result = run_encoding("wide-rows", 1, encoding, tmp_path / "work", consumer="spark", spark=spark, config=config)
    assert result.conformant, result.render()
    assert result.checkpoints.checked, result.checkpoint_summary
    figures = json.loads((result.case / "consumer" / "consumer.json").read_text())
    assert figures["rows_applied"] > 0
    if option == "claim-check":
        manifest = json.loads((result.case / "manifest.json").read_text())
        assert manifest["claim_check"]["files"] > 0
