"""A delivery over input that is not a stream says what is wrong, naming the folder or file."""
import pytest

from ticdc_conformance.delivery import Delivery, Schedule

from .helpers import manifest_of


def test_a_folder_without_record_files_is_named(case, tmp_path):
    manifest = manifest_of(case("smoke", "canal-json"))
    with pytest.raises(ValueError, match=f"{tmp_path}: no record files"):
        Delivery(Schedule(), tmp_path, manifest)


def test_a_record_file_of_a_partition_the_manifest_does_not_name_is_named(case):
    folder = case("smoke", "canal-json")
    manifest = {**manifest_of(folder), "topics": {"ticdc-smoke": 2}}
    with pytest.raises(ValueError, match="ticdc-smoke-2.parquet: holds ticdc-smoke/2"):
        Delivery(Schedule(), folder / "records", manifest)


def test_a_damaged_record_file_is_named(case, tmp_path):
    folder = case("smoke", "canal-json")
    records = tmp_path / "records"
    records.mkdir()
    for path in (folder / "records").glob("*.parquet"):
        (records / path.name).write_bytes(path.read_bytes())
    (records / "ticdc-smoke-1.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="ticdc-smoke-1.parquet: not a readable Parquet file"):
        Delivery(Schedule(), records, manifest_of(folder))
