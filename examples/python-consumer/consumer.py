"""A consumer of TiCDC's Open Protocol that speaks the streaming testee protocol v1.

Written from the documents alone (docs/testee-protocol.md, docs/consumer-protocol.md "Output",
docs/consumer-rules.md and the Open Protocol spec), standard library only. The suite writes Kafka
records to stdin, one JSON line each; this program writes what it applied to stdout.

    python examples/python-consumer/consumer.py        (the suite starts it: --consumer 'cmd:python …')

The rules it follows: a watermark per partition that never moves back; the global watermark is
their minimum over every partition of every topic; row events and DDLs wait until the global
watermark reaches their commit ts and are then applied in commit-ts order (a DDL between the
transactions below and above it); anything at or below the applied watermark is a re-send and is
dropped, and so is a copy of an event still waiting.
"""
import base64
import decimal
import json
import os
import re
import struct
import sys

PROTOCOL_VERSION = 1
ROW, DDL, RESOLVED = 1, 2, 3  # the event types of an Open Protocol key ("t")
BINARY_FLAG = 0x01
HANDLE_KEY_FLAG = 0x02
TEXT_TYPES = {15, 253, 254}  # VARCHAR/VARBINARY, CHAR/BINARY: UTF-8 text, a binary one with escapes
BLOB_TYPES = {249, 250, 251, 252}  # TEXT/BLOB: base64 of the bytes
INT_TYPES = ("tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit")
GO_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39}


def unsupported_reason(header: dict) -> str | None:
    """Why this consumer cannot consume the run the header describes, or None."""
    sink = header.get("sink", {})
    if header.get("protocol") != "open-protocol":
        return f"only open-protocol is implemented, not {header.get('protocol')}"
    if sink.get("large-message-handle-option", "none") != "none":
        return "large-message handling (claim-check, handle-key-only) is not implemented"
    if sink.get("output-old-value", True) is not True or sink.get("only-output-updated-columns", False):
        return "an update without its whole old image (output-old-value=false, only-output-updated-columns) is not implemented"
    return None


# ---- decoding one Kafka record into events


def frames(data: bytes) -> list[bytes]:
    """The length-prefixed parts of a key or value (each length a big-endian int64)."""
    out, i = [], 0
    while i < len(data):
        (n,) = struct.unpack(">q", data[i:i + 8])
        out.append(data[i + 8:i + 8 + n])
        i += 8 + n
    return out


def decode_record(record: dict) -> list[tuple[dict, dict | None]]:
    """(key, value) of every event in a record; a resolved event has no value."""
    key = base64.b64decode(record["key"] or "")
    value = base64.b64decode(record["value"] or "")
    (version,) = struct.unpack(">q", key[:8])
    if version != 1:
        raise ValueError(f"{record['topic']}/{record['partition']}@{record['offset']}: Open Protocol version {version}")
    keys, values = frames(key[8:]), frames(value)
    return [(json.loads(k), json.loads(values[i]) if i < len(values) and values[i] else None)
            for i, k in enumerate(keys)]


def unescape_binary(text: str) -> bytes:
    """A binary string as TiCDC writes it: UTF-8 with Go-style escapes (\\x00, \\n, \\u0091, ...)."""
    out, i = bytearray(), 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = text[i + 1]
        if e in GO_ESCAPES:
            out.append(GO_ESCAPES[e])
            i += 2
        elif e == "x":
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        elif e in "uU":
            n = 4 if e == "u" else 8
            out += chr(int(text[i + 2:i + 2 + n], 16)).encode("utf-8")
            i += 2 + n
        else:  # octal \ooo
            out.append(int(text[i + 1:i + 4], 8))
            i += 4
    return bytes(out)


def column_value(column: dict):
    """A column's value in the canonical form: binary as base64, text as text, the rest as carried."""
    v, t, flag = column.get("v"), column["t"], column.get("f", 0)
    if v is None:
        return None
    if t in BLOB_TYPES:
        return v if flag & BINARY_FLAG else base64.b64decode(v).decode("utf-8")
    if t in TEXT_TYPES and flag & BINARY_FLAG:
        return base64.b64encode(unescape_binary(v)).decode("ascii")
    return v


def image(columns: dict | None) -> dict | None:
    return None if columns is None else {name: column_value(c) for name, c in columns.items()}


def key_columns(columns: dict) -> list[str]:
    """The handle key the message names; none for a table without key (its rows are matched whole)."""
    return sorted(n for n, c in columns.items() if c.get("h") or c.get("f", 0) & HANDLE_KEY_FLAG)


def row_event(key: dict, value: dict) -> dict:
    if "d" in value:
        op, before, after, cols = "delete", value["d"], None, value["d"]
    elif "p" in value:
        op, before, after, cols = "update", value["p"], value["u"], value["u"]
    else:
        op, before, after, cols = "insert", None, value["u"], value["u"]
    return {"kind": "row", "ts": key["ts"], "schema": key.get("scm", ""), "table": key.get("tbl", ""), "op": op,
            "before": image(before), "after": image(after), "key": key_columns(cols)}


# ---- DDL: what a statement does to the rows (docs/consumer-rules.md, "What a DDL does to rows")

NAME = r"`((?:[^`]|``)+)`"
QUALIFIED = rf"(?:{NAME}\.)?{NAME}"


def split_top_level(text: str) -> list[str]:
    """Comma-separated clauses, ignoring commas inside parentheses and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"`":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()]


def added_column_value(definition: str):
    """The value ADD COLUMN gives existing rows: its DEFAULT, NULL without one, the type's zero
    value for NOT NULL without one."""
    default = re.search(r"\bDEFAULT\s+('(?:[^']|'')*'|-?[\d.]+|NULL)", definition, re.I)
    kind = re.match(r"\s*(\w+)", definition).group(1).lower()
    scale = re.match(r"\s*\w+\s*\(\s*\d+\s*,\s*(\d+)\s*\)", definition)
    if default and default.group(1).upper() != "NULL":
        literal = default.group(1)
        text = literal[1:-1].replace("''", "'") if literal.startswith("'") else literal
    elif default or not re.search(r"\bNOT\s+NULL\b", definition, re.I):
        return None
    elif kind in ("decimal", "numeric") or kind in INT_TYPES or kind in ("float", "double"):
        text = "0"
    elif kind in ("char", "varchar", "text", "tinytext", "mediumtext", "longtext"):
        text = ""
    else:
        print(f"note: no zero value known for NOT NULL {kind}; existing rows get NULL", file=sys.stderr)
        return None
    if kind in INT_TYPES:
        return int(text)
    if kind in ("float", "double"):
        return float(text)
    if kind in ("decimal", "numeric"):
        digits = int(scale.group(1)) if scale else 0
        return format(decimal.Decimal(text), f".{digits}f")  # exact, with the column's scale
    return text


class Tables:
    """Every table this consumer holds: "schema.table" -> list of rows (a list, so a table without
    key may hold the same row twice)."""

    def __init__(self, tables: dict | None = None) -> None:
        self.tables: dict[str, list[dict]] = tables or {}

    def apply_rows(self, events: list[dict]) -> None:
        """One transaction: every old image goes before the new ones are added, so rows that trade
        keys end where upstream put them."""
        for e in events:
            rows = self.tables.setdefault(f"{e['schema']}.{e['table']}", [])
            if e["before"] is not None:
                found = self.find(rows, e["before"], e["key"])
                if found is not None:
                    del rows[found]
        for e in events:
            if e["after"] is not None:
                rows = self.tables[f"{e['schema']}.{e['table']}"]
                found = self.find(rows, e["after"], e["key"]) if e["key"] else None
                if found is not None:
                    del rows[found]
                rows.append(e["after"])

    @staticmethod
    def find(rows: list[dict], row: dict, key: list[str]) -> int | None:
        names = key or list(row)
        for i, r in enumerate(rows):
            if all(r.get(n) == row.get(n) for n in names):
                return i
        return None

    def apply_ddl(self, schema: str, table: str, query: str) -> None:
        name = f"{schema}.{table}"
        q = " ".join(query.split())
        if m := re.match(rf"DROP DATABASE (?:IF EXISTS )?{NAME}", q, re.I):
            for t in [t for t in self.tables if t.split(".", 1)[0] == m.group(1)]:
                del self.tables[t]
        elif re.match(r"CREATE TABLE ", q, re.I):
            self.tables.setdefault(name, [])
        elif re.match(r"DROP TABLE ", q, re.I):
            self.tables.pop(name, None)
        elif re.match(r"TRUNCATE (TABLE )?", q, re.I) and not re.search(r"PARTITION", q, re.I):
            self.tables[name] = []
        elif m := re.match(rf"RENAME TABLE {QUALIFIED} TO {QUALIFIED}", q, re.I):
            old = f"{m.group(1) or schema}.{m.group(2)}"
            self.tables[name] = self.tables.pop(old, [])
        elif m := re.match(rf"ALTER TABLE {QUALIFIED} (.*)", q, re.I):
            for clause in split_top_level(m.group(3)):
                self.alter(f"{m.group(1) or schema}.{m.group(2)}", clause)
        # Anything else (indexes, comments, charsets, MODIFY COLUMN, SET DEFAULT, CREATE DATABASE, ...)
        # changes no row.

    def alter(self, name: str, clause: str) -> None:
        rows = self.tables.setdefault(name, [])
        if m := re.match(rf"ADD (?:COLUMN )?{NAME} (.*)", clause, re.I):
            value = added_column_value(m.group(2))
            for r in rows:
                r[m.group(1)] = value
        elif m := re.match(rf"DROP (?:COLUMN )?{NAME}", clause, re.I):
            for r in rows:
                r.pop(m.group(1), None)
        elif m := (re.match(rf"RENAME COLUMN {NAME} TO {NAME}", clause, re.I)
                   or re.match(rf"CHANGE (?:COLUMN )?{NAME} {NAME}", clause, re.I)):
            for r in rows:
                r[m.group(2)] = r.pop(m.group(1), None)
        elif m := re.match(rf"RENAME (?:TO |AS )?{QUALIFIED}", clause, re.I):
            self.tables[f"{m.group(1) or name.split('.')[0]}.{m.group(2)}"] = self.tables.pop(name, [])
        elif re.search(r"\bPARTITION", clause, re.I):
            print(f"note: partition DDL not implemented, no row changed: {clause}", file=sys.stderr)


# ---- ordering: watermarks, re-sends, copies, commit-ts order


class Consumer:
    def __init__(self, header: dict) -> None:
        self.topics = header["topics"]
        self.state_path = os.path.join(header["state_dir"], "state.json")
        state = {}
        if os.path.exists(self.state_path):  # a restart: go on from what the last commit made durable
            with open(self.state_path, encoding="utf-8") as f:
                state = json.load(f)
        self.tables = Tables(state.get("tables"))
        self.watermarks: dict[str, int] = state.get("watermarks", {})  # "topic/partition" -> resolved ts
        self.generations: dict[str, int] = state.get("generations", {})  # bumped when a partition re-sends
        self.last_ts: dict[str, int] = state.get("last_ts", {})  # "topic/partition/schema.table" -> ts
        self.pending: list[dict] = state.get("pending", [])  # events waiting for the global watermark
        self.checkpoint: int | None = state.get("checkpoint")  # the applied watermark
        self.next_offsets: dict[str, dict[str, int]] = state.get("next_offsets") or header["start"]["offsets"]
        self.out: list[dict] = []  # applied-log lines not yet written

    def receive(self, record: dict) -> None:
        partition = f"{record['topic']}/{record['partition']}"
        self.next_offsets.setdefault(record["topic"], {})[str(record["partition"])] = record["offset"] + 1
        for key, value in decode_record(record):
            if key["t"] == RESOLVED:
                self.on_watermark(partition, key["ts"])
            elif key["t"] in (ROW, DDL):
                event = row_event(key, value) if key["t"] == ROW else {
                    "kind": "ddl", "ts": key["ts"], "schema": key.get("scm", ""), "table": key.get("tbl", ""),
                    "query": value["q"]}  # classic TiCDC leaves an empty scm/tbl out
                self.on_event(partition, event)
        self.advance()

    def on_watermark(self, partition: str, ts: int) -> None:
        if ts <= self.watermarks.get(partition, -1):  # a restarted changefeed resends from its checkpoint
            self.generations[partition] = self.generations.get(partition, 0) + 1
            return
        self.watermarks[partition] = ts

    def on_event(self, partition: str, event: dict) -> None:
        if self.checkpoint is not None and event["ts"] <= self.checkpoint:
            return  # applied already: a re-send
        table = f"{partition}/{event['schema']}.{event['table']}"
        if event["ts"] < self.last_ts.get(table, -1) or event["ts"] <= self.watermarks.get(partition, -1):
            self.generations[partition] = self.generations.get(partition, 0) + 1
        self.last_ts[table] = max(event["ts"], self.last_ts.get(table, -1))
        event["partition"], event["generation"] = partition, self.generations.get(partition, 0)
        if any(self.is_copy(event, p) for p in self.pending):
            return
        self.pending.append(event)

    @staticmethod
    def is_copy(event: dict, waiting: dict) -> bool:
        """A DDL comes on every partition: one per (ts, schema, table, query). A row event is a copy
        when an identical one came on its partition before that partition re-sent (one transaction
        may hold the same row of a table without key twice, in the same generation)."""
        if event["kind"] == "ddl":
            return waiting["kind"] == "ddl" and all(waiting[k] == event[k] for k in ("ts", "schema", "table", "query"))
        same = ("kind", "ts", "schema", "table", "op", "before", "after", "partition")
        return all(waiting[k] == event[k] for k in same) and waiting["generation"] < event["generation"]

    def global_watermark(self) -> int | None:
        marks = [self.watermarks.get(f"{topic}/{p}") for topic, n in self.topics.items() for p in range(n)]
        return None if None in marks else min(marks)

    def advance(self) -> None:
        w = self.global_watermark()
        if w is None or (self.checkpoint is not None and w <= self.checkpoint):
            return
        ready = sorted((e for e in self.pending if e["ts"] <= w), key=lambda e: e["ts"])  # stable: DDL jobs keep order
        self.pending = [e for e in self.pending if e["ts"] > w]
        i = 0
        while i < len(ready):
            e = ready[i]
            if e["kind"] == "ddl":
                self.tables.apply_ddl(e["schema"], e["table"], e["query"])
                self.out.append({"type": "ddl", "commit_ts": e["ts"], "schema": e["schema"], "table": e["table"],
                                 "query": e["query"]})
                i += 1
                continue
            txn = [r for r in ready[i:] if r["kind"] == "row" and r["ts"] == e["ts"]]
            i += len(txn)
            self.tables.apply_rows(txn)
            self.out.append({"type": "txn", "commit_ts": e["ts"], "rows": [
                {k: r[k] for k in ("schema", "table", "op", "before", "after")} for r in txn]})
        self.checkpoint = w
        self.out.append({"type": "checkpoint", "ts": w})

    def commit(self) -> dict[str, dict[str, int]]:
        """Everything is made durable, so a restart needs only the records after the last delivered."""
        state = {"tables": self.tables.tables, "watermarks": self.watermarks, "generations": self.generations,
                 "last_ts": self.last_ts, "pending": self.pending, "checkpoint": self.checkpoint,
                 "next_offsets": self.next_offsets}
        tmp = self.state_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.state_path)
        return self.next_offsets


# ---- the session: header, ready, records and requests


def write(line: dict) -> None:
    sys.stdout.write(json.dumps(line) + "\n")  # ASCII with \u escapes: valid UTF-8 whatever the locale


def main() -> int:
    sys.stdin.reconfigure(encoding="utf-8")  # the protocol is UTF-8 whatever the locale says
    header = json.loads(sys.stdin.readline())
    reason = unsupported_reason(header)
    if reason:
        write({"type": "unsupported", "reason": reason})
        sys.stdout.flush()
        sys.stdin.read()  # exit once stdin is closed
        return 0
    write({"type": "ready", "protocol_version": PROTOCOL_VERSION, "supports": ["restarts"]})
    sys.stdout.flush()
    consumer = Consumer(header)
    for text in sys.stdin:
        message = json.loads(text)
        kind = message["type"]
        if kind == "record":
            try:
                consumer.receive(message)
            except (ValueError, KeyError, TypeError, struct.error) as e:  # stderr goes to the run's log
                sys.exit(f"record {message['topic']}/{message['partition']}@{message['offset']}: cannot decode: {e!r}")
            continue
        for line in consumer.out:
            write(line)
        consumer.out = []
        if kind == "sync":
            write({"type": "synced", "id": message["id"]})
        elif kind == "end":
            write({"type": "ended", "id": message["id"]})  # nothing is applied above the last watermark
        elif kind == "commit":
            write({"type": "committed", "id": message["id"], "offsets": consumer.commit()})
        elif kind == "tables":
            for name, rows in sorted(consumer.tables.tables.items()):
                schema, table = name.split(".", 1)
                for row in rows or [None]:
                    write({"type": "row", "schema": schema, "table": table, "row": row})
            write({"type": "tables", "id": message["id"], "checkpoint": consumer.checkpoint})
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
