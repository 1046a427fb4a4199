"""SimpleDecoder.read: the parsed message and what the schema cache held for it, and the three
arguments the lint reads with (a shared schema cache, DMLs without schema dropped, not held; a DML
rejected for its values kept as far as it reads). Built on the spec 004 examples."""
from __future__ import annotations

import copy
from functools import partial

from tests.helpers import kafka_record
from tests.spec_examples.corpus import spec_message
from ticdc_conformance.events import DecodedBootstrap, DecodedRow
from ticdc_conformance.protocols.simple import SimpleDecoder
from ticdc_conformance.protocols.simple.decoder import SimpleRead
from ticdc_conformance.protocols.simple.message import BootstrapMessage, DMLMessage

rec = partial(kafka_record, topic="simple-topic", partition=1)
VERSION = 447984074911121426
COLUMNS = ("id", "name", "age", "score")


def bootstrap(version: int = VERSION, columns: int = 4) -> dict:
    msg = copy.deepcopy(spec_message("004-simple-bootstrap"))
    msg["tableSchema"].update(table="user", version=version)
    msg["tableSchema"]["columns"] = msg["tableSchema"]["columns"][:columns]
    return msg


def insert(version: int = VERSION, **data: str) -> dict:
    msg = copy.deepcopy(spec_message("004-simple-dml-insert"))
    msg["schemaVersion"] = version
    msg["data"].update(data)
    return msg


def test_a_dml_read_names_the_schema_it_was_read_through():
    dec = SimpleDecoder({})
    dec.read(rec(bootstrap(), offset=0))
    read = dec.read(rec(insert(), offset=1))
    assert isinstance(read, SimpleRead) and isinstance(read.message, DMLMessage)
    assert read.error is None and read.table is not None
    assert (read.table.schema, read.table.table, read.table.version) == ("simple", "user", VERSION)
    assert read.events == dec.decode(rec(insert(), offset=2))


def test_a_dml_without_schema_says_whether_its_table_is_known_at_another_version():
    dec = SimpleDecoder({}, hold_rows=False)
    unknown_table = dec.read(rec(insert(), offset=0))
    assert (unknown_table.table, unknown_table.table_known) == (None, False)
    dec.read(rec(bootstrap(version=VERSION - 1), offset=1))
    other_version = dec.read(rec(insert(), offset=2))
    assert (other_version.table, other_version.table_known) == (None, True)


def test_a_bootstrap_read_carries_its_commit_ts_and_the_schema_its_key_names():
    dec = SimpleDecoder({})
    first = dec.read(rec(bootstrap(), offset=0))
    assert isinstance(first.message, BootstrapMessage) and first.message.commit_ts == 0
    [(carried, cached)] = first.cached
    assert carried is cached
    # One (schema, table, version) names the first schema announced for it: a second, narrower
    # BOOTSTRAP of that key is read, and the cache still holds the first.
    second = dec.read(rec(bootstrap(columns=2), offset=1))
    [(carried, cached)] = second.cached
    assert carried.column_names == COLUMNS[:2] and cached.column_names == COLUMNS


def test_rows_without_schema_are_held_for_a_consumer_and_dropped_for_the_lint():
    consumer, lint = SimpleDecoder({}), SimpleDecoder({}, hold_rows=False)
    for dec in (consumer, lint):
        assert dec.read(rec(insert(), offset=0)).events == []
    assert (consumer.held_count, lint.held_count) == (1, 0)
    assert [type(e) for e in consumer.read(rec(bootstrap(), offset=1)).events] == [DecodedBootstrap, DecodedRow]
    assert [type(e) for e in lint.read(rec(bootstrap(), offset=1)).events] == [DecodedBootstrap]


def test_decoders_given_one_schema_cache_read_each_others_schemas():
    tables: dict = {}
    first, second = SimpleDecoder({}, tables=tables), SimpleDecoder({}, tables=tables)
    first.read(rec(bootstrap(), offset=0))
    [row] = second.read(kafka_record(insert(), topic="simple-topic", partition=2, offset=0)).events
    assert isinstance(row, DecodedRow) and row.after == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}


def test_a_dml_rejected_for_a_value_keeps_the_values_that_read_only_when_asked():
    bad = insert(age="twenty-five", extra="x")
    consumer, lint = SimpleDecoder({}), SimpleDecoder({}, keep_faulty_rows=True)
    for dec in (consumer, lint):
        dec.read(rec(bootstrap(), offset=0))
    rejected = consumer.read(rec(bad, offset=1))
    assert rejected.error is not None and rejected.events == []
    kept = lint.read(rec(bad, offset=1))
    assert kept.error is not None and kept.error.reason == rejected.error.reason
    [row] = kept.events
    assert isinstance(row, DecodedRow)
    assert (row.op, row.after, row.key_columns) == ("insert", {"id": 1, "name": "John Doe", "score": 90.5}, ("id",))
