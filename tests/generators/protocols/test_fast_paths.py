"""The encoders' fast paths write exactly the bytes of their reference paths.

Each fast path (Canal-JSON's generated row code, Debezium's orjson rows, the orjson leaves, the
str.translate escaping, Open Protocol's one-pass Quote, the float64 text from repr, record files
from buffers) is compared with the slower code it stands for, over the `types` scenario's rows
(every type's edge values and NULLs) or over random input.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import random
import re
import struct
import types
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from ticdc_contract.model import Op, RowChange, Transaction
from ticdc_contract.record import KafkaRecord
from ticdc_contract.record_files import RecordFileWriter, records_to_table
from ticdc_generators.pipeline import config_for
from ticdc_generators.protocols.canal_json.message import CanalJSONOptions, dml_value
from ticdc_generators.protocols.canal_json.rowcode import DMLWriter
from ticdc_generators.protocols.debezium import temporal as debezium_temporal
from ticdc_generators.protocols.debezium import values as debezium_values
from ticdc_generators.protocols.debezium.columns import table_view
from ticdc_generators.protocols.debezium.encoder import DebeziumOptions
from ticdc_generators.protocols.debezium.message import RowEnvelope
from ticdc_generators.protocols.golang import codegen, floats, json_text
from ticdc_generators.protocols.open_protocol import goquote
from ticdc_generators.protocols.open_protocol import values as open_protocol_values
from ticdc_generators.protocols.simple import avro_dml as avro_dml_writer
from ticdc_generators.protocols.simple.avro_dml import encode_dml
from ticdc_generators.protocols.simple.avro_schema import encode_avro
from ticdc_generators.protocols.simple.message import Style, avro_dml, json_dml, json_dml_bytes
from ticdc_generators.scenarios import get_scenario
from ticdc_generators.simulator import cdc_visible

DIALECTS = (json_text.JSONITER, json_text.ENCODING_JSON, json_text.EASYJSON)


def _small(change) -> bool:
    # the types scenario's megabyte values test escaping speed, not the fast paths: left out
    return all(len(v) <= 4096 for image in (change.before, change.after) if image
               for v in image.values() if isinstance(v, (str, bytes)))


@functools.lru_cache(maxsize=None)
def _changes(scenario: str = "types") -> list:
    out = []
    for event in get_scenario(scenario).history(1, None):
        if isinstance(event, Transaction):
            out.extend((cdc_visible(ch), event.commit_ts, event.start_ts) for ch in event.changes if _small(ch))
    return out


@pytest.mark.parametrize("overrides", [{}, {"enable_tidb_extension": True, "version_profile": "tiflow"}])
@pytest.mark.parametrize("scenario", ["types", "keys", "ddl-evolution"])
def test_canal_json_row_code_writes_dml_value_bytes(scenario, overrides):
    opts = CanalJSONOptions.from_sink_config(config_for(scenario, "canal-json", **overrides))
    writer = DMLWriter(opts.enable_tidb_extension, opts.content_compatible, opts.tiflow)
    for change, commit_ts, _ in _changes(scenario):
        for selected in (None, frozenset(c.name for c in change.table.columns[::2])):
            fast = writer.value(change, commit_ts, selected)
            if fast is not None:
                assert fast == dml_value(change, commit_ts, opts, selected=selected), change


@pytest.mark.parametrize("overrides", [{}, {"debezium_disable_schema": True, "version_profile": "tiflow"},
                                       {"time_zone": "Asia/Shanghai", "debezium_include_start_ts": True,
                                        "output_old_value": False, "enable_tidb_extension": False}])
@pytest.mark.parametrize("scenario", ["types", "keys", "ddl-evolution"])
def test_debezium_orjson_rows_write_the_reference_bytes(scenario, overrides):
    options = DebeziumOptions.from_sink_config(config_for(scenario, "debezium", **overrides))
    envelopes: dict = {}
    for change, commit_ts, start_ts in _changes(scenario):
        t = change.table
        if id(t) not in envelopes:
            fast = RowEnvelope(table_view(t, options.time_zone), options.envelope())
            reference = RowEnvelope(table_view(t, options.time_zone), options.envelope())
            reference._fast = None
            envelopes[id(t)] = (t, fast, reference)
        _, fast, reference = envelopes[id(t)]
        for env in (fast, reference):
            try:
                result = (env.key(change), env.value(change, commit_ts, start_ts))
            except Exception as e:  # a row TiCDC cannot encode fails alike on both paths
                result = (type(e), str(e))
            if env is fast:
                got = result
        assert got == result, change


@pytest.mark.parametrize("style", [Style(), Style(time_zone="Asia/Shanghai", tiflow=True, row_checksum=True)])
@pytest.mark.parametrize("scenario", ["types", "keys", "ddl-evolution"])
def test_simple_avro_dml_writer_writes_the_fastavro_bytes(scenario, style):
    written = 0
    for change, commit_ts, _ in _changes(scenario):
        for only_handle_key, location in ((False, ""), (True, "file:///cc/1")):
            if only_handle_key and not change.table.handle_key:
                continue
            body = avro_dml(change, commit_ts, commit_ts >> 18, style, only_handle_key, location)
            fast = encode_dml(body)
            if fast is not None:
                written += 1
                assert fast == encode_avro(body), change
    assert written > len(_changes(scenario))


@pytest.mark.parametrize("style", [Style(), Style(time_zone="Asia/Shanghai", tiflow=True),
                                   Style(tiflow=True, row_checksum=True)])
@pytest.mark.parametrize("scenario", ["types", "keys", "ddl-evolution"])
def test_simple_avro_dml_bytes_equal_the_written_message(scenario, style):
    """The message written from the row change against message.avro_dml written by fastavro, also
    with column selectors, a table with names beyond ASCII, and values the writer must decline
    (a long beyond 64 bits, text that is not UTF-8)."""
    written = 0
    for i, (change, commit_ts, _) in enumerate(_changes(scenario)):
        t = change.table
        if i % 5 == 0:
            t = dataclasses.replace(t, schema=t.schema + "é中" * 40, table_id=2**40 + i, schema_version=0)
        images = [change.before, change.after]
        if i % 11 == 0:  # the first value of each image out of range or not encodable
            bad = (2**64, "\udc80", b"x", None)[i // 11 % 4]
            images = [None if image is None else {k: (bad if j == 0 else v) for j, (k, v) in enumerate(image.items())}
                      for image in images]
        change = RowChange(t, change.op, *images)
        for selected in (None, frozenset(c.name for c in t.columns[::2])):
            for ts in (commit_ts, commit_ts + 1, 2**63):  # the last varint pair is reused only for the same two
                fast = avro_dml_writer.dml_bytes(change, ts, ts >> 18, style, selected)
                try:
                    expected = encode_avro(avro_dml(change, ts, ts >> 18, style, selected=selected))
                except Exception as e:  # a value the reference refuses: the fast path declined it too
                    assert fast is None, (change, e)
                    continue
                if fast is not None:
                    written += 1
                    assert fast == expected, change
    # a message with a checksum is always avro_dml's
    assert written == 0 if style.row_checksum else written > len(_changes(scenario))


@pytest.mark.parametrize("style", [Style(), Style(time_zone="Asia/Shanghai", tiflow=True, row_checksum=True)])
@pytest.mark.parametrize("scenario", ["types", "keys", "ddl-evolution"])
def test_simple_json_dml_bytes_equal_the_written_message(scenario, style):
    """The joined DML message against json_dml written by the Go writer, also for a table whose
    names the Go writer escapes and rows holding text orjson writes otherwise (the fast path must
    then decline)."""
    texts = list(_texts(500, seed=9))
    joined = 0
    for i, (change, commit_ts, _) in enumerate(_changes(scenario)):
        t = change.table
        if i % 5 == 0:
            t = dataclasses.replace(t, schema=t.schema + "<&\u2028", table_id=0, schema_version=0)
        images = [change.before, change.after]
        if i % 7 == 0:  # the text columns' values replaced
            text = {c.name for c in t.columns if c.type.base in ("char", "varchar", "text") and c.type.charset != "binary"}
            images = [None if image is None else {k: (texts[(i + j) % len(texts)] if k in text and v is not None else v)
                                                  for j, (k, v) in enumerate(image.items())} for image in images]
        change = RowChange(t, change.op, *images)
        for selected in (None, frozenset(c.name for c in t.columns[::2])):
            fast = json_dml_bytes(change, commit_ts, commit_ts >> 18, style, selected)
            if fast is not None:
                joined += 1
                expected = json_text.dumps(json_dml(change, commit_ts, commit_ts >> 18, style, selected=selected),
                                           json_text.ENCODING_JSON)
                assert fast == expected, change
    # a message with a checksum is always json_dml's
    assert joined == 0 if style.row_checksum else joined > len(_changes(scenario))


def test_simple_avro_longs_and_texts_equal_the_zigzag_varint():
    def varint(n: int) -> bytes:
        n, out = (n << 1) ^ (n >> 63), bytearray()
        while n > 0x7F:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out)

    edges = [b + d for b in (0, 64, 128, 2**13, 2**31, 2**62, 2**63 - 64) for d in range(-70, 70)]
    for n in edges + [-n for n in edges]:
        if -(2**63) <= n < 2**63:
            out = bytearray()
            avro_dml_writer._long(out, n)
            assert out == varint(n), n
    for text in list(_texts(300)) + ["é" * 40, "a" * 63, "a" * 64, "中" * 22]:
        try:
            data = text.encode()
        except UnicodeEncodeError:
            continue
        out = bytearray()
        avro_dml_writer._text(out, text)
        assert out == varint(len(data)) + data, text
        assert avro_dml_writer._name(text) == bytes(out)


def test_the_scenarios_give_the_fast_paths_rows_to_write():
    assert {ch.op for ch, _, _ in _changes()} == {Op.INSERT, Op.UPDATE, Op.DELETE}


_POOL = [chr(i) for i in range(0x30)] + list("<>&\u2028\u2029\ud800\udc80\udcff\udfff é中😀a\x7f\\\"")


def _texts(n: int, seed: int = 1):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(_POOL) for _ in range(rng.randint(0, 10)))


@pytest.mark.parametrize("dialect", DIALECTS, ids=["jsoniter", "encoding-json", "easyjson"])
def test_translate_escaping_equals_the_per_match_substitution(dialect):
    special = '\\x00-\\x1f"\\\\' + ("<>&\u2028\u2029" if dialect.escape_html else "") + \
        ("\ud800-\udfff" if dialect.replace_invalid else "")
    substitute = functools.partial(re.compile(f"[{special}]").sub, functools.partial(json_text._escape, dialect))
    escape = json_text._escaper(dialect)
    for s in _texts(5000):
        assert escape(s) == substitute(s), repr(s)
    every_byte = bytes(range(256)).decode("latin-1")
    assert escape(every_byte) == substitute(every_byte)


@pytest.mark.parametrize("dialect", DIALECTS, ids=["jsoniter", "encoding-json", "easyjson"])
def test_orjson_leaves_write_what_the_go_writer_writes(dialect):
    leaf, safe = json_text.orjson_leaf(dialect), json_text.safe_for_orjson(dialect)
    values = [2**63, -(2**63) - 1, 2**64, 2**64 - 1, -(2**63), 1.5, 1e21, 1e-7, True, None, b"\xff\x00<",
              json_text.F32(0.1), json_text.B64(b"\x00\xff"), json_text.Raw(b'{"x":1}'), [1, "<"], {"a<": "&"}]
    for v in values + list(_texts(2000, seed=2)):
        try:
            expected = json_text.dumps(v, dialect)
        except (UnicodeEncodeError, TypeError) as e:  # the reference refuses it: so does the leaf
            with pytest.raises(type(e)):
                leaf(v)
            continue
        assert orjson.dumps(leaf(v)) == expected, repr(v)
        if type(v) is str and safe(v):
            assert orjson.dumps({v: 1}) == json_text.dumps({v: 1}, dialect), repr(v)


def _utf8_length(lead: int) -> int:
    """Length of the UTF-8 sequence a lead byte announces, 0 when it cannot lead one."""
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def _quote_rune_by_rune(data: bytes) -> str:
    """strconv.Quote's body one rune at a time, as Go's loop reads the bytes."""
    out: list[str] = []
    i = 0
    while i < len(data):
        b = data[i]
        if b < 0x80:
            goquote._escape_rune(b, out)
            i += 1
            continue
        width, rune = _utf8_length(b), None
        if width and i + width <= len(data):
            try:
                rune = ord(data[i:i + width].decode("utf-8"))
            except UnicodeDecodeError:
                rune = None
        if rune is None:
            out.append(f"\\x{b:02x}")
            i += 1
        else:
            goquote._escape_rune(rune, out)
            i += width
    return "".join(out)


def test_open_protocol_quote_by_translation_equals_the_rune_loop():
    rng = random.Random(3)
    pieces = [bytes([b]) for b in range(256)] + [s.encode() for s in ("é", "中", "😀", "\u00ad")] + \
        [b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc2\x85", b"\xc2\xa0", b"\xee\x80\x80", b"\xf3\xa0\x80\x81", b"\xc0\xaf", b"\xe0\x80", b"\xe2\x82", b"\xf0\x9f\x98"]
    for i in range(5000):
        data = rng.randbytes(rng.randint(0, 64)) if i % 2 else \
            b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert goquote.go_quote_body(data) == _quote_rune_by_rune(data), data


@pytest.mark.parametrize("dialect", DIALECTS, ids=["jsoniter", "encoding-json", "easyjson"])
def test_open_protocol_json_quoter_equals_quote_of_go_quote(dialect):
    rng = random.Random(8)
    pieces = [bytes([b]) for b in range(256)] + [s.encode() for s in ("é", "中", "😀", "\u00ad", "\u2028", "<&>")]
    quote_bytes = goquote.json_quoter(dialect)
    for i in range(5000):
        data = rng.randbytes(rng.randint(0, 64)) if i % 2 else \
            b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert quote_bytes(data) == json_text.quote(goquote.go_quote_body(data), dialect), data


@pytest.mark.parametrize("limit", [4, 1000])
def test_memoized_renderer_returns_the_render_of_each_value(limit):
    calls: list = []

    def render(v):
        calls.append(v)
        return f"{type(v).__name__}:{v!r}"

    cached = json_text.memoized(render, limit=limit)
    # equal values of other types (1 == 1.0 == True) and unhashable ones are rendered each time
    values = ["a", b"a", "a", 1, 1.0, True, bytearray(b"a"), None, "b", "c", "d", "e", "a", b"a", "", b""]
    for _ in range(3):
        for v in values:
            text = cached(v)
            assert text == f"{type(v).__name__}:{v!r}"
    assert sum(type(v) not in (str, bytes) for v in calls) == 5 * 3
    keys = [v for v in calls if type(v) in (str, bytes)]
    if limit > len(values):
        assert sorted(map(repr, keys)) == sorted(map(repr, {(type(v), v): v for v in values
                                                            if type(v) in (str, bytes)}.values()))
    else:
        assert len(keys) < 11 * 3  # texts dropped when full, and kept between


@pytest.mark.parametrize("dialect", DIALECTS, ids=["jsoniter", "encoding-json", "easyjson"])
def test_open_protocol_memoized_renderers_equal_the_renderers(dialect, monkeypatch):
    memoized = open_protocol_values._quoted_renderers(dialect)
    monkeypatch.setattr(json_text, "memoized", lambda render: render)
    plain = open_protocol_values._quoted_renderers.__wrapped__(dialect)
    values = [v for ch, _, _ in _changes() for image in (ch.before, ch.after) if image for v in image.values()]
    values += [v for event in get_scenario("large").history(1, 3000) if isinstance(event, Transaction)
               for ch in event.changes for image in (ch.before, ch.after) if image for v in image.values()]
    for fast, reference in zip(memoized, plain):
        _assert_memo_renders_as(fast, reference, values)


def _assert_memo_renders_as(fast, reference, values) -> None:
    """fast(v) is reference(v), or raises what it raises, for each value, twice over (the second
    time from the memo)."""
    for _ in range(2):
        for v in values:
            try:
                expected = reference(v)
            except Exception as e:  # noqa: BLE001 - the memo must raise what the renderer raises
                with pytest.raises(type(e)):
                    fast(v)
                continue
            assert fast(v) == expected, v


def test_open_protocol_is_print_beyond_ascii_is_str_isprintable():
    assert all(goquote._is_print(r) == chr(r).isprintable()
               for r in range(0x80, 0x110000) if not 0xD800 <= r <= 0xDFFF)


def test_float64_text_from_repr_equals_the_digit_layout():
    rng = random.Random(4)
    cases = [1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 1.0, -1.0, 0.1, 123.0, -0.0, 0.0, 5e-324]
    for i in range(10000):
        kind = i % 3
        if kind == 0:
            x = struct.unpack("<d", rng.randbytes(8))[0]
        elif kind == 1:
            x = rng.uniform(-1, 1) * 10 ** rng.randint(-6, 18)
        else:
            x = float(f"{rng.randint(-10**13, 10**13)}.{rng.randint(0, 9999):04d}")
        cases.append(x)
    for x in cases:
        if math.isnan(x) or math.isinf(x):
            continue
        for short in (False, True):
            assert floats.json_float64(x, short) == floats._json_float(x, 64, short), x
        assert floats.format_float64(x) == floats._format_f(x, 64), x


def test_generated_code_holds_only_declared_constants_and_reaches_no_builtins():
    source = "def f(row):\n    return K0 + row.get(N0)\n"
    f = codegen.compile_function(source, "f", {"K0": '"a":', "N0": "x"})
    assert f({"x": "1"}) == '"a":1'
    with pytest.raises(codegen.GeneratedCodeError, match="undeclared constant"):
        codegen.compile_function("def g(row):\n    return 'name' + row\n", "g", {})
    with pytest.raises(codegen.GeneratedCodeError, match="attribute"):
        codegen.compile_function("def h(row):\n    return row.__class__\n", "h", {})
    leaky = codegen.compile_function("def k(row):\n    return open(row)\n", "k", {})
    with pytest.raises(NameError):
        leaky("/etc/passwd")


def test_record_files_from_buffers_equal_pyarrows_list_conversion(tmp_path):
    records = [KafkaRecord("t-é", 1, i, None if i % 3 == 0 else b"k%d" % i, b"v" * (i % 50) if i % 5 else None,
                           1_700_000_000_000 + i, (("a", b"x"), ("b", None)) if i % 4 == 0 else ())
               for i in range(9000)]
    with RecordFileWriter(tmp_path / "new") as writer:
        writer.write_all(records)
    old = pq.ParquetWriter(tmp_path / "old.parquet", records_to_table(records[:1]).schema, compression="zstd")
    for i in range(0, len(records), 8192):
        old.write_table(records_to_table(records[i:i + 8192]))
    old.close()
    assert Path(tmp_path / "new" / "t-é-1.parquet").read_bytes() == (tmp_path / "old.parquet").read_bytes()


@pytest.mark.parametrize("code", sorted(debezium_values._INT_MIN))
@pytest.mark.parametrize("unsigned", [False, True])
def test_debezium_int_renderer_equals_int(code, unsigned):
    col = types.SimpleNamespace(code=code, unsigned=unsigned)
    render = debezium_values._int_renderer(col)
    edges = [0, 1, -1, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]
    for bound in (debezium_values._INT_MIN[code], debezium_values._INT_MAX[(code, False)],
                  debezium_values._INT_MAX[(code, True)]):
        edges += [bound - 1, bound, bound + 1]
    assert render(None) is None
    for v in edges:
        assert render(v) == debezium_values._int(col, v), v


@pytest.mark.parametrize("decimal", [-1, 0, 3, 6])
@pytest.mark.parametrize("not_null", [False, True])
def test_debezium_memoized_datetime_renderer_equals_the_renderer(decimal, not_null, monkeypatch):
    memoized = debezium_values._datetime_renderer(decimal, not_null)
    monkeypatch.setattr(debezium_values, "memoized", lambda render: render)
    plain = debezium_values._datetime_renderer.__wrapped__(decimal, not_null)
    rng = random.Random(decimal)
    values = [v for ch, _, _ in _changes() for image in (ch.before, ch.after) if image
              for v in image.values() if isinstance(v, str) and len(v) < 40]
    values += [f"{rng.randint(0, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 31):02d} "
               f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999)}"
               for _ in range(2000)] + [None, "0000-00-00 00:00:00"]
    _assert_memo_renders_as(memoized, plain, values)


def test_debezium_datetime_epoch_equals_the_civil_arithmetic():
    rng = random.Random(5)
    for i in range(5000):
        text = (f"{rng.randint(0, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 31):02d}"
                f" {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}")
        if i % 3:
            text += "." + str(rng.randint(0, 999999)).zfill(6)[:rng.randint(1, 6)]
        for fsp in (0, 3, 6):
            c = debezium_temporal.parse_datetime(text)
            expected = None
            if debezium_temporal.is_go_valid(c):
                c = debezium_temporal._shift_two_digit_year(c)
                secs = debezium_temporal._unix_seconds(c)
                expected = secs * 1000 + c.micro // 1000 if fsp <= 3 else secs * 1_000_000 + c.micro
            assert debezium_temporal.datetime_epoch(text, fsp) == expected, text


def _epoch_or_error(f, text, fsp):
    try:
        return f(text, fsp)
    except debezium_temporal.TemporalError:
        return "error"


def test_debezium_datetime_epoch_by_fromisoformat_equals_the_parsed_path():
    """The fromisoformat path against the pattern's: texts of TiDB's DATETIME shape with every
    position replaced, in turn, by characters fromisoformat or the pattern read otherwise."""
    rng = random.Random(8)
    base = ["2023-11-30 12:34:56", "2023-11-30 12:34:56.1", "2023-11-30 12:34:56.123456", "0099-02-28 23:59:59.5",
            "0100-01-01 00:00:00", "2024-02-29 24:00:00", "2023-02-29 01:02:03", "2023-00-10 01:02:03.000",
            "9999-12-31 23:59:60.999"]
    odd = list("0123456789-: T.,+Z\u0663\u00e9") + ["+01:00", "Z", "1234567", " ", "-05", "W"]
    texts = list(base)
    for _ in range(20000):
        text = rng.choice(base)
        for _ in range(rng.randint(1, 2)):
            i = rng.randint(0, len(text))
            text = text[:i] + rng.choice(odd) + text[i + rng.randint(0, 1):]
        texts.append(text)
    for _ in range(5000):
        texts.append(f"{rng.randint(0, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 31):02d} "
                     f"{rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}:{rng.randint(0, 61):02d}"
                     + ("." + str(rng.randint(0, 10**7)).zfill(7)[:rng.randint(0, 7)]) * rng.randint(0, 1))
    fast = 0
    for text in texts:
        for fsp in (0, 3, 6):
            expected = _epoch_or_error(debezium_temporal._datetime_epoch_parsed, text, fsp)
            assert _epoch_or_error(debezium_temporal.datetime_epoch, text, fsp) == expected, (text, fsp)
            fast += expected != "error"
    assert fast > 10000


def test_encoding_json_by_orjson_writes_dumps_bytes_or_declines():
    rng = random.Random(6)
    texts = list(_texts(3000, seed=7))
    scalars = [None, True, False, 0, -1, 2**63 - 1, 2**64 - 1, 2**64, -(2**63) - 1, "x\ud800"]
    taken = 0
    for i in range(3000):
        row = {texts[(i + j) % len(texts)]: rng.choice(texts + scalars) for j in range(rng.randint(0, 6))}
        doc = {"version": 1, "database": texts[i], "commitTs": rng.choice(scalars[3:8]), "data": row,
               "old": None if i % 3 else [texts[i - 1], {"location": "UTC", "value": texts[i - 2]}]}
        fast = json_text.encoding_json_by_orjson(doc)
        try:
            expected = json_text.dumps(doc, json_text.ENCODING_JSON)
        except (UnicodeEncodeError, TypeError):
            assert fast is None
            continue
        if fast is not None:
            taken += 1
            assert fast == expected, doc
    assert taken > 100  # documents without a character orjson writes otherwise


def test_encoding_json_escape_check_by_byte_values_equals_the_substring_tests():
    rng = random.Random(8)
    pieces = [b"<", b">", b"&", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xe2\x80\xa7", b"\xe2\x80", b"\xe2",
              b"\x80\xa8", b"a", b"\xc3\xa9", b"\xe4\xb8\xad", b'"', b"\\"]
    found = 0
    for _ in range(20000):
        out = b"".join(rng.choices(pieces, k=rng.randint(0, 6)))
        expected = any(s in out for s in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()))
        assert json_text._unlike_encoding_json(out) is expected, out
        found += expected
    assert 1000 < found < 19000


@pytest.mark.parametrize("code", ["newdecimal", "double"])
def test_debezium_float_renderer_writes_the_reference_bytes(code):
    """The fast renderer hands orjson some floats as they are: what orjson then writes must be the
    reference writer's bytes, over decimal texts, random bit patterns and the range's edges."""
    col = types.SimpleNamespace(code=code, default=None)
    leaf = json_text.orjson_leaf(json_text.JSONITER)
    fast = debezium_values.fast_renderer(col, None, leaf)
    rng = random.Random(10)
    values: list = [0.0, -0.0, 5e-324, 1.5, -1.5, 123.0, 2.0**53, 2.0**53 + 2, 1e15 + 0.5, 1e21, 1e-7,
                    float("nan"), float("inf"), "-0.0001", "12.3400", "-9999999999999.9999"]
    for edge in (1e-4, 1e16):
        values += [edge, -edge, math.nextafter(edge, 0), math.nextafter(edge, math.inf)]
    for _ in range(100000):
        values.append(f"{rng.randint(-10**13, 10**13)}.{rng.randint(0, 9999):04d}")
        values.append(struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])
        values.append(rng.random() * 10.0 ** rng.randint(-6, 18))
    taken = 0
    for v in values:
        results = []
        for render_one in (fast, lambda v: leaf(debezium_values.render(col, v, None))):
            try:
                rendered = render_one(v)
            except Exception as e:  # NaN and infinities fail alike
                results.append(type(e))
                continue
            taken += render_one is fast and type(rendered) is float
            results.append(orjson.dumps({"v": rendered}))
        assert results[0] == results[1], v
    assert taken > 100000
