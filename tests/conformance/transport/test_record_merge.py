"""The batch reader of record files gives what the record-at-a-time reader gives: the same records
(ticdc_contract's records_from_batch) in the order of merge_by_timestamp's heap merge."""
import random

import numpy as np
import pyarrow as pa

from ticdc_conformance.transport.record_files import (
    BATCH_BYTES,
    RecordFiles,
    batch_records,
    file_batches,
    file_records,
    merge_batches,
    merge_by_timestamp,
)
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import RecordFileWriter, records_from_batch, records_to_table


def _batches(records, size):
    for i in range(0, len(records), size):
        chunk = records[i:i + size]
        yield chunk, np.array([r.timestamp_ms for r in chunk], np.int64)


def test_the_batch_merge_is_the_heap_merge_when_timestamps_go_back_and_tie():
    rng = random.Random(7)
    for trial in range(150):
        files = {}
        for p in range(rng.randint(1, 5)):
            tp = (rng.choice(["a", "b"]), p)
            # small timestamps: many ties across files; a restart sends lower ones again
            files[tp] = [KafkaRecord(tp[0], p, o, None, None, rng.randint(0, 12)) for o in range(rng.randint(0, 40))]
        heap = list(merge_by_timestamp([iter(rs) for rs in files.values()]))
        size = rng.randint(1, 9)
        fast = list(merge_batches([(tp, _batches(rs, size)) for tp, rs in files.items() if rs]))
        assert fast == heap, f"trial {trial}"


def test_batch_records_reads_headers_and_missing_timestamps_as_records_from_batch_does():
    records = [KafkaRecord("t", 0, 0, b"k", b"v", 5, (("h", b"x"), ("i", None))),
               KafkaRecord("t", 0, 1, None, None, 7),
               KafkaRecord("t", 0, 2, b"", b"w", -3, (("h", b""),))]
    table = records_to_table(records)
    stamps = table.column("timestamp").combine_chunks()
    for batch in table.to_batches():
        assert batch_records(batch)[0] == list(records_from_batch(batch)) == records
        # a record without a timestamp reads as timestamp 0
        nulled = batch.set_column(batch.schema.get_field_index("timestamp"), "timestamp",
                                  pa.array([None, *stamps.to_pylist()[1:]], stamps.type))
        got, millis = batch_records(nulled)
        assert got == list(records_from_batch(nulled)) and millis.tolist() == [0, 7, -3]


def test_record_files_merge_as_the_heap_merges_them(tmp_path):
    rng = random.Random(3)
    with RecordFileWriter(tmp_path) as writer:
        for p in range(3):
            for o in range(300):
                writer.write(KafkaRecord("topic", p, o, None, b"%d" % o, 1000 + o // 7 - (50 if o % 97 == 0 else 0)
                                         + rng.randint(0, 2)))
    paths = sorted(tmp_path.glob("*.parquet"))
    heap = list(merge_by_timestamp([file_records(p, 64, contiguous=True) for p in paths]))
    assert list(RecordFiles(tmp_path, 64, contiguous=True)) == heap
    assert len(heap) == 900


def test_a_batch_of_large_records_is_bounded_in_bytes_and_reads_the_same_records(tmp_path):
    # 200 records of 100 KB: the caller's 4,096 records would be 20 MB at once.
    records = [KafkaRecord("topic", 0, o, None, bytes([o % 251]) * 100_000, 1000 + o) for o in range(200)]
    with RecordFileWriter(tmp_path) as writer:
        for r in records:
            writer.write(r)
    (path,) = tmp_path.glob("*.parquet")
    batches = [rs for rs, _ in file_batches(path, 4096, contiguous=True)]
    assert max(len(rs) for rs in batches) * 100_000 <= BATCH_BYTES < 200 * 100_000
    assert [r for rs in batches for r in rs] == records
    assert list(RecordFiles(tmp_path, 4096, contiguous=True)) == records
