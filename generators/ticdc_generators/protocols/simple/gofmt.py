"""Go's text forms that the Simple protocol inherits: strconv float printing and encoding/json.

TiCDC builds Simple JSON with Go's standard `encoding/json` (TiCDC pkg/sink/codec/simple/marshaller.go:
jsonMarshaller uses json.Marshal), so its bytes carry Go's choices: map keys sorted, `<`, `>`, `&`,
U+2028 and U+2029 escaped as \\u escapes, and floats printed by strconv.FormatFloat(v, 'f', -1, bits).
"""
from __future__ import annotations

from typing import Any

import numpy
import orjson

# encoding/json's HTMLEscape set plus the two JavaScript line terminators; each only ever occurs
# inside a JSON string, so replacing bytes in the whole document cannot touch the structure.
_GO_ESCAPES = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def go_json_dumps(obj: Any) -> bytes:
    """`obj` as Go's json.Marshal writes it; dict insertion order stands for struct field order."""
    out = orjson.dumps(obj)
    # orjson already escapes control characters the way Go 1.22+ does (\b \f \n \r \t, else \u00xx)
    for raw, escaped in _GO_ESCAPES:
        if raw in out:
            out = out.replace(raw, escaped)
    return out


def sorted_map(items: dict[str, Any]) -> dict[str, Any]:
    """A Go map[string]any: encoding/json writes its keys in byte order (UTF-8 order = code point order)."""
    return {k: items[k] for k in sorted(items)}


def to_float32(v: float) -> float:
    """The nearest float32, as a Python float (TiDB keeps FLOAT columns as float32)."""
    return float(numpy.float32(v))


def format_float(v: float, bits: int) -> str:
    """strconv.FormatFloat(v, 'f', -1, bits): the shortest digits that read back to the same
    float32/float64, written without an exponent (1e20 -> "100000000000000000000", 1.0 -> "1").
    numpy's Dragon4 `unique` mode picks the same shortest, closest digits as Go's strconv."""
    value = numpy.float32(v) if bits == 32 else numpy.float64(v)
    return numpy.format_float_positional(value, unique=True, trim="-")
