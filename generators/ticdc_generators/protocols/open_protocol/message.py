"""The JSON of one Open Protocol event: its key and its value, before batch framing.

Field order and presence follow the TiCDC generation being simulated:
- "ticdc" (new TiCDC, pkg/sink/codec/open/codec.go) writes fields one by one with its jsoniter
  writer: row key ts, scm, tbl, t[, ohk][, ptn]; DDL key ts, scm, tbl, t even when scm or tbl
  is empty; columns in table order.
- "tiflow" (classic, pkg/sink/codec/open/open_protocol_message.go) marshals structs and maps
  with encoding/json: row key ts, scm, tbl, rid, t[, ohk] with empty scm/tbl and zero rid
  left out; columns sorted by name (Go sorts map keys); an empty "p" left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

from ticdc_contract.model import DDL, Op, Row, RowChange

from ..golang import json_text
from .values import ColumnLayout, EncodeError, TableLayout, value_renderer

# TiCDC pkg/sink/codec/common/message.go: MessageType.
MESSAGE_TYPE_ROW = 1
MESSAGE_TYPE_DDL = 2
MESSAGE_TYPE_RESOLVED = 3

PROFILES = ("ticdc", "tiflow")
_ROW_TYPE = ',"t":' + str(MESSAGE_TYPE_ROW)


@dataclass(frozen=True)
class RowOptions:
    """The options that shape a row event's JSON."""

    profile: str = "ticdc"
    output_old_value: bool = True
    delete_only_output_handle_key_columns: bool = False
    only_output_updated_columns: bool = False

    @property
    def dialect(self) -> json_text.Dialect:
        return json_text.JSONITER if self.profile == "ticdc" else json_text.ENCODING_JSON


def resolved_key(ts: int) -> bytes:
    """spec 002 (Open Protocol), Resolved Event: key {"ts":<TS>,"t":3}."""
    return f'{{"ts":{ts},"t":{MESSAGE_TYPE_RESOLVED}}}'.encode("ascii")


def ddl_key(ddl: DDL, profile: str) -> bytes:
    """spec 002 (Open Protocol), DDL Event key; "ts" is the DDL's commit (finished) ts."""
    dialect = _dialect(profile)
    fields = [("ts", str(ddl.commit_ts))]
    if profile == "ticdc" or ddl.schema:
        fields.append(("scm", json_text.quote(ddl.schema, dialect)))
    if profile == "ticdc" or ddl.table:
        fields.append(("tbl", json_text.quote(ddl.table, dialect)))
    fields.append(("t", str(MESSAGE_TYPE_DDL)))
    return json_text.to_bytes(json_text.obj(fields, dialect))


def ddl_value(ddl: DDL, profile: str) -> bytes:
    """spec 002 (Open Protocol), DDL Event value {"q":<query>,"t":<DDL type code>}."""
    dialect = _dialect(profile)
    return json_text.to_bytes(json_text.obj(
        [("q", json_text.quote(ddl.query, dialect)), ("t", str(int(ddl.ddl_type)))], dialect))


def row_key(change: RowChange, commit_ts: int, layout: TableLayout, opts: RowOptions,
            only_handle_key: bool, claim_check_location: str = "") -> bytes:
    """spec 002 (Open Protocol), Row Changed Event key {"ts","scm","tbl","t":1}.

    `only_handle_key` marks a message cut down to its handle key because it was too large
    (large-message-handle-option = handle-key-only), which TiCDC flags with "ohk": true.
    `claim_check_location` (large-message-handle-option = claim-check) goes in "ccl": new
    TiCDC (codec.go encodeRowChangedEvent, called with the handle-key flag and the location)
    writes "ohk":true, then "ohk":false and "ccl"; tiflow (internal/message_key.go, a struct
    with omitempty, OnlyHandleKey reset to false) writes only "ccl", after "t".
    The partition-table "ptn" field is never written: the model has no partitioned tables.
    """
    names = _key_names(layout, opts)
    if opts.profile == "ticdc":
        tail = _ROW_TYPE
        if only_handle_key:
            tail += ',"ohk":true'
        if claim_check_location:
            tail += ',"ohk":false,"ccl":' + json_text.quote(claim_check_location, opts.dialect)
    else:
        rid = _tiflow_row_id(change, layout)
        tail = (',"rid":' + str(rid) if rid else "") + _ROW_TYPE
        if claim_check_location:
            tail += ',"ccl":' + json_text.quote(claim_check_location, opts.dialect)
        elif only_handle_key:
            tail += ',"ohk":true'
    return json_text.to_bytes('{"ts":' + str(commit_ts) + names + tail + "}")


def _key_names(layout: TableLayout, opts: RowOptions) -> str:
    """The key's "scm" and "tbl" members, once per table version and profile (tiflow leaves out
    an empty one). The key's member names need no escaping in any dialect."""
    cache_key = ("key", opts.profile)
    names = layout.texts.get(cache_key)
    if names is None:
        table, quote = layout.table, json_text.quoter(opts.dialect)
        ticdc = opts.profile == "ticdc"
        names = ((',"scm":' + quote(table.schema) if ticdc or table.schema else "")
                 + (',"tbl":' + quote(table.table) if ticdc or table.table else ""))
        layout.texts[cache_key] = names
    return names


def _tiflow_row_id(change: RowChange, layout: TableLayout) -> int:
    """tiflow's RowChangedEvent.RowID: the int handle of the row (cdc/entry/mounter.go).

    It is knowable only when the integer primary key is the handle; other tables use TiDB's
    hidden _tidb_rowid (not in the model) or a common handle (no int), so no "rid" is written.
    """
    table = change.table
    if not table.pk_is_handle or table.primary_key is None or len(table.primary_key.columns) != 1:
        return 0
    name = table.primary_key.columns[0]
    row = change.after if change.after is not None else change.before
    value = row.get(name) if row is not None else None
    if value is None:
        return 0
    value = int(value)
    # The handle is an int64: an unsigned BIGINT above 2**63-1 wraps to a negative number.
    return value - (1 << 64) if value >= 1 << 63 else value


def row_value(change: RowChange, layout: TableLayout, opts: RowOptions, only_handle_key: bool,
              selected: Optional[frozenset[str]] = None) -> bytes:
    """spec 002 (Open Protocol), Row Changed Event value: "u" (insert/update), "p" (old
    values of an update), "d" (delete).

    TiCDC pkg/sink/codec/open/codec.go (encodeRowChangedEvent):
    - delete: "d" holds every column of the old row, or only the handle-key columns under
      delete-only-output-handle-key-columns (output-old-value does not apply to deletes);
    - insert: "u" holds the new row;
    - update: "u" holds the new row and, with output-old-value, "p" the old row, cut down to
      the columns whose value changed under only-output-updated-columns.
    """
    members = _members(layout, opts, selected)
    if change.op == Op.DELETE:
        only = only_handle_key or opts.delete_only_output_handle_key_columns
        text = '{"d":' + _columns_object(members, _need(change.before, "old", change), only)
    elif change.op == Op.INSERT:
        text = '{"u":' + _columns_object(members, _need(change.after, "new", change), only_handle_key)
    elif change.op == Op.UPDATE:
        after = _need(change.after, "new", change)
        text = '{"u":' + _columns_object(members, after, only_handle_key)
        if opts.output_old_value:
            before = _need(change.before, "old", change)
            if opts.only_output_updated_columns:
                p = _changed_columns_object(members, before, after, only_handle_key)
            else:
                p = _columns_object(members, before, only_handle_key)
            if not (opts.profile == "tiflow" and p == "{}"):
                text += ',"p":' + p
    else:
        raise EncodeError(f"unknown row operation {change.op!r}")
    # "u", "p" and "d" need no escaping in any dialect.
    return json_text.to_bytes(text + "}")


def _dialect(profile: str) -> json_text.Dialect:
    if profile not in PROFILES:
        raise ValueError(f"unknown version profile {profile!r}; expected one of {', '.join(PROFILES)}")
    return json_text.JSONITER if profile == "ticdc" else json_text.ENCODING_JSON


def _need(row: Optional[Row], which: str, change: RowChange) -> Row:
    if row is None:
        raise EncodeError(f"{change.op.value} event on {change.table.qualified_name} has no {which} row")
    return row


class _Member(NamedTuple):
    """A column as a member of a row image's JSON object."""

    name: str
    handle: bool
    head: str  # the member up to its value: "name":{"t":…,"h":true,"f":…,"v":
    render: Callable[[Any], str]  # the value's JSON text


def _members(layout: TableLayout, opts: RowOptions, selected: Optional[frozenset[str]]) -> tuple[_Member, ...]:
    """The row image's members in the profile's order, once per table version, profile and
    column selection."""
    cache_key = ("members", opts.profile, selected)
    members = layout.texts.get(cache_key)
    if members is None:
        dialect = opts.dialect
        columns = layout.columns if opts.profile == "ticdc" else layout.columns_by_name
        if selected is not None:
            # sink.column-selectors: unselected columns are skipped in every image, before the
            # handle-key cut (TiCDC open/codec.go writeColumnFieldValues); flags stay the table's.
            columns = tuple(c for c in columns if c.name in selected)
        members = tuple(_Member(c.name, c.handle, json_text.quote(c.name, dialect) + ":" + _column_head(c),
                                value_renderer(c, dialect)) for c in columns)
        layout.texts[cache_key] = members
    return members


def _column_head(col: ColumnLayout) -> str:
    # TiCDC writes "h" only for handle-key columns and "f" always (codec.go,
    # writeColumnFieldValue; tiflow's Column struct has `h,omitempty` and a plain `f`).
    # The column object of t, h, f and v, written out: those keys need no escaping in any dialect.
    return '{"t":' + str(col.code) + (',"h":true,"f":' if col.handle else ',"f":') + str(col.flag) + ',"v":'


def _columns_object(members: tuple[_Member, ...], row: Row, only_handle: bool) -> str:
    picked = tuple(m for m in members if m.handle) if only_handle else members
    if not picked:
        # TiCDC refuses the event: "not found handle key columns for the delete event".
        raise EncodeError("no handle key columns to encode")
    get = row.get
    return "{" + ",".join([m.head + m.render(get(m.name)) + "}" for m in picked]) + "}"


def _changed_columns_object(members: tuple[_Member, ...], before: Row, after: Row, only_handle: bool) -> str:
    """The old values of the columns an update changed (TiCDC codec.go, writeUpdatedColumnFieldValues).

    A column whose old and new values are both NULL, or equal, is left out; every other column
    carries its old value (NULL included). Equality is decided on the values as TiCDC holds
    them (a FLOAT as float32, an ENUM as its index), which their rendered text stands for.
    """
    texts = []
    for m in members:
        if only_handle and not m.handle:
            continue
        old = m.render(before.get(m.name))
        if old == m.render(after.get(m.name)):
            continue
        texts.append(m.head + old + "}")
    return "{" + ",".join(texts) + "}"
