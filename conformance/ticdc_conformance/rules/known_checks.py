"""The checks that existed before the registry, mapped to the rules they enforce.

They live in modules that do not import the registry (the differential and golden checks, the
fidelity projections, the reference decoders' validations), so their rules are listed here, each
with the code that enforces them (`target`, "module:qualname"); tests/conformance/rules/test_rules.py imports
every target, so an entry cannot outlive the code it names. Modules referred to:

- ticdc_conformance.checks.differential, .checkpoints, .causes; ticdc_conformance.golden.corpus; the protocols' fidelity modules
- ticdc_conformance.protocols.open_protocol.{wire, decoder, values}
- ticdc_conformance.protocols.canal_json.{decoder, rows, java_type, mysql_type, values}
- ticdc_conformance.protocols.debezium.{decoder, values}
- ticdc_conformance.protocols.simple.{wire.json, wire.avro, wire.fields, wire.table, values, decoder}

A decoder validation is listed for a rule when it rejects a record that breaks the rule (a
DecodeError naming the record); a fidelity entry when the projection the differential check
compares at encodes the rule's type mapping.
"""
from __future__ import annotations

from .registry import REGISTRY, CheckRegistry

_P = "ticdc_conformance.protocols"
_C = "ticdc_conformance.checks"

# (check name, target, rule ids, description)
KNOWN_CHECKS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    # --- checks/ ----------------------------------------------------------------------------------
    ("differential.final-state", f"{_C}.differential:check_final_state",
     ("CONSUMER-STATE-1", "CONSUMER-DEDUP-1", "CONSUMER-TABLE-1", "CONSUMER-COLUMN-1", "CONSUMER-ROW-1"),
     "a consumer's final tables equal the ground truth projected onto the protocol's fidelity; every "
     "final/ file is judged: a table upstream does not hold breaks CONSUMER-TABLE-1, a column the table "
     "lacks CONSUMER-COLUMN-1, a row under a key upstream never wrote CONSUMER-ROW-1, the same row held "
     "twice CONSUMER-DEDUP-1"),
    ("causes.surplus-rows", f"{_C}.causes:explain",
     ("CONSUMER-DELETE-1", "CONSUMER-UPDATE-1", "CONSUMER-DDL-3", "CONSUMER-DEDUP-1", "CONSUMER-ROW-1"),
     "a row the consumer holds beyond upstream's, in its final tables or at a checkpoint, named by what "
     "upstream did to it (checks/upstream_history.py): deleted, replaced by an UPDATE, removed by a DDL, "
     "held once upstream, never written"),
    ("checkpoints.applied-log", f"{_C}.checkpoints:check_checkpoints",
     ("CONSUMER-CHECKPOINT-1", "CONSUMER-DDL-1", "CONSUMER-DDL-2", "CONSUMER-DEDUP-1", "CONSUMER-LOSS-1",
      "CONSUMER-ORDER-1", "CONSUMER-WATERMARK-1", "CONSUMER-TABLE-1", "CONSUMER-COLUMN-1"),
     "a consumer's applied log and its tables at every checkpoint it recorded, against the ground truth"),
    ("differential.cross-encoding", "ticdc_conformance.cross_encoding:check_encodings_agree",
     ("CANAL-DML-1", "DBZ-MESSAGE-2", "OPEN-EVENTS-1", "SIMPLE-DML-2"),
     "the five encodings of one history, decoded and lowered to the fidelity they share, carry the same "
     "row events (per type, the protocols' type rules apply as in the fidelity entries)"),
    ("golden.corpus", "ticdc_conformance.golden.corpus:check",
     ("CONSUMER-STATE-1", "CONSUMER-CHECKPOINT-1", "CONSUMER-DDL-1", "CONSUMER-ORDER-1"),
     "each golden case's expected/final tables are the state CONSUMER-STATE-1 demands of a consumer "
     "reading the case's records; the check proves the corpus still matches the generators"),
    ("fidelity.open-protocol", f"{_P}.open_protocol.fidelity:project_value",
     ("OPEN-TYPECODE-1", "OPEN-TYPECODE-2", "OPEN-TYPECODE-4", "OPEN-TYPECODE-5", "OPEN-TYPECODE-6",
      "OPEN-TYPECODE-7", "OPEN-TYPECODE-8", "OPEN-TYPECODE-9", "OPEN-TYPECODE-10", "OPEN-TYPECODE-11",
      "OPEN-TYPECODE-12"),
     "the value a perfect Open Protocol consumer can know per type code (fidelity/matrix.py, "
     "applied by the differential check)"),
    ("fidelity.canal-json", f"{_P}.canal_json.fidelity:project_value",
     ("CANAL-SQLTYPE-2", "CANAL-SQLTYPE-6", "CANAL-SQLTYPE-7", "CANAL-SQLTYPE-12", "CANAL-BINARY-1",
      "CANAL-COMPAT-1", "CANAL-MYSQLTYPE-2"),
     "the value a perfect Canal-JSON consumer can know per type and option (fidelity/matrix.py, "
     "applied by the differential check)"),
    ("fidelity.debezium", f"{_P}.debezium.fidelity:project_column",
     ("DBZ-TYPEMAP-1", "DBZ-TYPEMAP-3", "DBZ-TYPEMAP-4", "DBZ-TYPEMAP-7", "DBZ-EXTENSION-2"),
     "the value a perfect Debezium consumer can know per column (fidelity/matrix.py, applied by "
     "the differential check)"),
    ("fidelity.simple", f"{_P}.simple.fidelity:project_value",
     ("SIMPLE-MYSQLTYPE-2", "SIMPLE-MYSQLTYPE-3", "SIMPLE-MYSQLTYPE-4", "SIMPLE-MYSQLTYPE-5",
      "SIMPLE-MYSQLTYPE-6", "SIMPLE-MYSQLTYPE-7"),
     "the value a perfect Simple consumer can know per mysqlType (fidelity/matrix.py, applied by "
     "the differential check)"),
    # --- Open Protocol decoder ----------------------------------------------------------------------
    ("decoder.open-protocol.framing", f"{_P}.open_protocol.wire:read_events",
     ("OPEN-FRAMING-1", "OPEN-FRAMING-2", "OPEN-FRAMING-3", "OPEN-VERSION-1"),
     "key and value frames: 8-byte big-endian version 1 and lengths, one value frame per key frame"),
    ("decoder.open-protocol.key", f"{_P}.open_protocol.wire:parse_key",
     ("OPEN-EVENTS-1", "OPEN-KEY-1", "OPEN-KEY-2", "OPEN-WATERMARK-3"),
     "event keys: \"t\" is 1, 2 or 3, \"ts\" a TSO, \"scm\"/\"tbl\" strings"),
    ("decoder.open-protocol.resolved", f"{_P}.open_protocol.decoder:OpenProtocolDecoder._resolved",
     ("OPEN-WATERMARK-3",),
     "a resolved event's value is empty"),
    ("decoder.open-protocol.ddl", f"{_P}.open_protocol.decoder:OpenProtocolDecoder._ddl",
     ("OPEN-DDL-2",),
     "a DDL value holds the query \"q\" and a type code \"t\""),
    ("decoder.open-protocol.row", f"{_P}.open_protocol.decoder:OpenProtocolDecoder._plain_row",
     ("OPEN-ROW-1", "OPEN-ROW-2", "OPEN-ROW-3"),
     "a row value is \"u\" (with \"p\" on updates) or \"d\", never both, never empty"),
    ("decoder.open-protocol.column", f"{_P}.open_protocol.values:decode_column",
     ("OPEN-COLUMN-1", "OPEN-TYPECODE-1", "OPEN-TYPECODE-2", "OPEN-TYPECODE-3", "OPEN-TYPECODE-4",
      "OPEN-TYPECODE-5", "OPEN-TYPECODE-6", "OPEN-TYPECODE-7", "OPEN-TYPECODE-8", "OPEN-TYPECODE-9",
      "OPEN-TYPECODE-10", "OPEN-TYPECODE-11", "OPEN-TYPECODE-12", "OPEN-TYPECODE-13", "OPEN-FLAG-1",
      "OPEN-FLAG-2", "OPEN-FLAG-6"),
     "each column is {t, h, f, v} with a known type code and a value of the JSON type and range that "
     "code, the binary flag and the unsigned flag allow"),
    # --- Canal-JSON decoder -------------------------------------------------------------------------
    ("decoder.canal-json.kind", f"{_P}.canal_json.decoder:CanalJSONDecoder._decode",
     ("CANAL-EVENTS-1", "CANAL-KIND-1", "CANAL-KIND-2", "CANAL-WATERMARK-2"),
     "isDdl and type decide the event; TIDB_WATERMARK only with the TiDB extension"),
    ("decoder.canal-json.extension", f"{_P}.canal_json.decoder:CanalJSONDecoder._extension",
     ("CANAL-EXTENSION-2", "CANAL-EXTENSION-3"),
     "with enable-tidb-extension every message has _tidb, its TSOs unsigned 64-bit"),
    ("decoder.canal-json.ddl", f"{_P}.canal_json.decoder:CanalJSONDecoder._ddl",
     ("CANAL-DDL-2",),
     "a DDL message names its database, table and statement with a Canal DDL type"),
    ("decoder.canal-json.rows", f"{_P}.canal_json.rows:decode_rows",
     ("CANAL-DML-2", "CANAL-FIELDS-3", "CANAL-OLD-1", "CANAL-OLD-5", "CANAL-OLD-6"),
     "a DML message: sqlType, mysqlType and rows name the same columns; old null on INSERT, null or a "
     "copy of data on DELETE, parallel to data on UPDATE"),
    ("decoder.canal-json.sqltype", f"{_P}.canal_json.java_type:expected_sql_type",
     ("CANAL-SQLTYPE-1", "CANAL-SQLTYPE-2", "CANAL-SQLTYPE-3", "CANAL-SQLTYPE-4", "CANAL-SQLTYPE-5",
      "CANAL-SQLTYPE-6", "CANAL-SQLTYPE-7", "CANAL-SQLTYPE-8", "CANAL-SQLTYPE-9", "CANAL-SQLTYPE-10",
      "CANAL-SQLTYPE-11", "CANAL-SQLTYPE-12", "CANAL-SQLTYPE-13"),
     "each column's sqlType is the code spec 003 gives its mysqlType and the value sent"),
    ("decoder.canal-json.mysqltype", f"{_P}.canal_json.mysql_type:parse_mysql_type",
     ("CANAL-MYSQLTYPE-1", "CANAL-MYSQLTYPE-2", "CANAL-COMPAT-1"),
     "mysqlType is a MySQL column type, bare or (content-compatible) with its parameters"),
    ("decoder.canal-json.binary", f"{_P}.canal_json.values:_binary",
     ("CANAL-BINARY-1",),
     "a binary value holds one character per byte (none above U+00FF)"),
    # --- Debezium decoder ---------------------------------------------------------------------------
    ("decoder.debezium.envelope", f"{_P}.debezium.decoder:DebeziumDecoder._envelope",
     ("DBZ-SCHEMA-1", "DBZ-SCHEMA-4"),
     "key and value carry \"schema\" exactly when debezium-disable-schema is off"),
    ("decoder.debezium.kind", f"{_P}.debezium.decoder:DebeziumDecoder._decode",
     ("DBZ-MESSAGE-2", "DBZ-DML-2", "DBZ-DML-7", "DBZ-WATERMARK-3", "DBZ-DDL-1"),
     "every record has a value; op c/r/u/d is a row, m a watermark, no op with ddl a DDL; nothing else"),
    ("decoder.debezium.row", f"{_P}.debezium.decoder:DebeziumDecoder._row",
     ("DBZ-DML-3", "DBZ-DML-4", "DBZ-DML-5", "DBZ-DML-6", "DBZ-DML-8", "DBZ-DML-9", "DBZ-SCHEMA-6"),
     "before null on c, after null on d, both images where the op has them, source names the table, "
     "every non-optional field of the schema present"),
    ("decoder.debezium.commit-ts", f"{_P}.debezium.decoder:DebeziumDecoder._commit_ts",
     ("DBZ-EXTENSION-1", "DBZ-EXTENSION-3"),
     "source.commit_ts is an unsigned 64-bit TSO, required on watermarks"),
    ("decoder.debezium.key", f"{_P}.debezium.decoder:DebeziumDecoder._key_columns",
     ("DBZ-MESSAGE-2", "DBZ-KEY-2", "DBZ-KEY-4"),
     "a row record has a key whose payload columns are exactly its schema's"),
    ("decoder.debezium.ddl", f"{_P}.debezium.decoder:DebeziumDecoder._ddl",
     ("DBZ-DDL-1", "DBZ-DDL-2", "DBZ-DDL-3"),
     "a DDL value has the statement, the database and tableChanges of type CREATE/ALTER/DROP with "
     "positioned columns"),
    ("decoder.debezium.values", f"{_P}.debezium.values:decode_typed",
     ("DBZ-TYPEMAP-1", "DBZ-TYPEMAP-3", "DBZ-TYPEMAP-13"),
     "each value has the JSON type its field schema declares; binary columns are base64"),
    # --- Simple decoder -----------------------------------------------------------------------------
    ("decoder.simple.json", f"{_P}.simple.wire.json:parse_json",
     ("SIMPLE-MESSAGE-1", "SIMPLE-VERSION-1", "SIMPLE-TYPES-1", "SIMPLE-TYPES-2", "SIMPLE-FIELDS-1",
      "SIMPLE-DDL-1", "SIMPLE-DML-1", "SIMPLE-SCHEMAVERSION-1", "SIMPLE-WATERMARK-2"),
     "one JSON message: version 1, a known type, the fields its type has"),
    ("decoder.simple.avro", f"{_P}.simple.wire.avro:parse_avro",
     ("SIMPLE-AVRO-1", "SIMPLE-FORMAT-2", "SIMPLE-MESSAGE-1", "SIMPLE-VERSION-1", "SIMPLE-TYPES-1",
      "SIMPLE-TYPES-2", "SIMPLE-SCHEMAVERSION-1"),
     "one datum of TiCDC's Avro message schema, no trailing bytes, version 1, a known type"),
    ("decoder.simple.row-maps", f"{_P}.simple.wire.fields:row_maps",
     ("SIMPLE-DML-2", "SIMPLE-DML-3", "SIMPLE-DML-4"),
     "INSERT has data only, UPDATE data and old, DELETE old only"),
    ("decoder.simple.table-schema", f"{_P}.simple.wire.table:table_from_wire",
     ("SIMPLE-TABLESCHEMA-1", "SIMPLE-TABLESCHEMA-2", "SIMPLE-COLUMN-1", "SIMPLE-COLUMN-2",
      "SIMPLE-INDEX-1", "SIMPLE-INDEX-2", "SIMPLE-BOOTSTRAP-7"),
     "a tableSchema has its fields, known mysqlTypes, unique column names and indexes over its columns"),
    ("decoder.simple.avro-values", f"{_P}.simple.values:from_avro",
     ("SIMPLE-MYSQLTYPE-2", "SIMPLE-MYSQLTYPE-3", "SIMPLE-MYSQLTYPE-4", "SIMPLE-MYSQLTYPE-5",
      "SIMPLE-MYSQLTYPE-6", "SIMPLE-MYSQLTYPE-7"),
     "each Avro value has the Avro type spec 004's table gives its mysqlType"),
    ("decoder.simple.schema-version", f"{_P}.simple.decoder:SimpleDecoder._row",
     ("SIMPLE-SCHEMACACHE-2", "SIMPLE-SCHEMAVERSION-1"),
     "a DML is read through the schema its (database, table, schemaVersion) names; a column that "
     "schema lacks is an error"),
    ("decoder.simple.schema-wait", f"{_P}.simple.decoder:SimpleDecoder._hold",
     ("SIMPLE-SCHEMACACHE-4", "SIMPLE-BOOTSTRAP-13"),
     "DML before its schema waits; a partition still without the schema after send-bootstrap-in-msg-count "
     "(10000) waiting messages is rejected"),
    ("decoder.debezium.dml-after", f"{_P}.debezium.decoder:DebeziumDecoder._row",
     ("DBZ-DML-1",),
     "an insert or update carries the row after the change ('after' object); a delete carries none"),
    ("decoder.debezium.stateless", f"{_P}.debezium.decoder:DebeziumDecoder.decode",
     ("DBZ-EVENTS-2",),
     "each Debezium record decodes on its own, so a stream of row events only, without DDL or "
     "WATERMARK events (TiCDC before v9.0.0), is read in full"),
    ("decoder.open-protocol.spec-format", f"{_P}.open_protocol.decoder:OpenProtocolDecoder.decode",
     ("OPEN-PARSING-1",),
     "the consumer-side parser of spec 002's format (TiCDC ships none): it reads the spec's events "
     "and refuses an event kind or type code the spec does not define"),
    ("decoder.simple.bootstrap-schema", f"{_P}.simple.wire.json:parse_json",
     ("SIMPLE-BOOTSTRAP-5", "SIMPLE-BOOTSTRAP-12"),
     "a BOOTSTRAP message carries the tableSchema of its table; one without it is rejected"),
    ("decoder.simple.schema-cache", f"{_P}.simple.decoder:SimpleDecoder._remember",
     ("SIMPLE-SCHEMACACHE-1", "SIMPLE-SCHEMACACHE-3"),
     "the tableSchema of each BOOTSTRAP and DDL is cached by (database, table, version); a DML before "
     "its schema waits, and read from the start every DML finds its schema at once"),
    ("consumer.local.dedup-below-watermark", "ticdc_conformance.consumers.sequential.consumer:LocalConsumer.on_row",
     ("CONSUMER-DEDUP-2",),
     "a row event at or below the watermark already applied is a re-send and is dropped; a re-sent event "
     "never applied is kept"),
    ("decoder.canal-json.kind-by-fields", f"{_P}.canal_json.decoder:CanalJSONDecoder._decode",
     ("CANAL-KIND-3",),
     "every record is parsed as the one Canal-JSON object and its event told apart by isDdl and type, "
     "whatever its topic or partition"),
    ("decoder.canal-json.bare-mysqltype", f"{_P}.canal_json.mysql_type:parse_mysql_type",
     ("CANAL-MYSQLTYPE-5",),
     "a bare mysqlType (no length, scale or members) is read as fully as a parameterised one"),
    ("decoder.simple.mysqltype-table", f"{_P}.simple.wire.table:table_from_wire",
     ("SIMPLE-MYSQLTYPE-1",),
     "a tableSchema column's mysqlType is one of spec 004's mysqlType table; values are read by it"),
)


def register_known_checks(registry: CheckRegistry = REGISTRY) -> None:
    for name, target, rule_ids, description in KNOWN_CHECKS:
        registry.register(name, rule_ids, description, target)
