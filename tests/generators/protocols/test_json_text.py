"""The Go-compatible JSON writer: dialect escaping, exact-type fast path against subclasses, key cache."""
from collections import OrderedDict
from enum import IntEnum

import pytest

from ticdc_generators.protocols.golang import json_text
from ticdc_generators.protocols.golang.json_text import B64, EASYJSON, ENCODING_JSON, F32, JSONITER, Raw, dumps


@pytest.mark.parametrize("dialect, expected", [
    # json-iterator without EscapeHTML: only '"', '\\' and control bytes; \b and \f as \u escapes
    (JSONITER, '{"k<":"a\\"\\\\\\n\\u0008\\u000c\\u001f<>&\u2028"}'),
    # encoding/json: HTML characters and U+2028 escaped, \b and \f short
    (ENCODING_JSON, '{"k\\u003c":"a\\"\\\\\\n\\b\\f\\u001f\\u003c\\u003e\\u0026\\u2028"}'),
    # easyjson: HTML escaped like encoding/json, \b and \f long like json-iterator
    (EASYJSON, '{"k\\u003c":"a\\"\\\\\\n\\u0008\\u000c\\u001f\\u003c\\u003e\\u0026\\u2028"}'),
])
def test_each_dialect_escapes_keys_and_values_as_its_go_writer(dialect, expected):
    assert dumps({"k<": 'a"\\\n\b\f\x1f<>&\u2028'}, dialect) == expected.encode("utf-8")


def test_bytes_that_are_not_utf8_go_out_as_is_or_as_replacement_characters():
    value = b"\xff\xc3\xa9"
    assert dumps(value, JSONITER) == b'"\xff\xc3\xa9"'
    assert dumps(value, ENCODING_JSON) == '"\\ufffdé"'.encode("utf-8")


class _Code(IntEnum):
    SEVEN = 7


def test_subclasses_of_the_common_types_write_as_their_base_types():
    plain = dumps({"a": [1, "x", None, {"b": (2, 3)}], "c": {}}, JSONITER)
    subclassed = dumps(OrderedDict([("a", (_Code.SEVEN - 6, "x", None, OrderedDict(b=[2, 3]))), ("c", OrderedDict())]),
                       JSONITER)
    assert plain == subclassed == b'{"a":[1,"x",null,{"b":[2,3]}],"c":{}}'


def test_booleans_floats_and_wrappers():
    doc = {"t": True, "f": False, "e": [], "d": 0.1, "s": F32(0.1), "b": B64(b"\x00\xff"), "r": Raw(b'{"x":1}')}
    assert dumps(doc, JSONITER) == b'{"t":true,"f":false,"e":[],"d":0.1,"s":0.1,"b":"AP8=","r":{"x":1}}'
    with pytest.raises(TypeError, match="set"):
        dumps({"x": {1}}, JSONITER)
    with pytest.raises(TypeError, match="no float numbers"):
        dumps(1.5, EASYJSON)


def test_the_key_cache_is_bounded_and_never_changes_the_output(monkeypatch):
    monkeypatch.setattr(json_text, "_KEY_CACHE_ENTRIES", 4)
    json_text._writer.cache_clear()
    try:
        docs = [{f"k{i}": i, "k<": i} for i in range(10)]
        first = [dumps(d, ENCODING_JSON) for d in docs]
        assert [dumps(d, ENCODING_JSON) for d in docs] == first
        assert first[9] == b'{"k9":9,"k\\u003c":9}'
        assert len(json_text._writer(ENCODING_JSON).quoted_keys) == 4
    finally:
        json_text._writer.cache_clear()
