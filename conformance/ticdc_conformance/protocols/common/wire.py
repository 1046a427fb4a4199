"""What the reference decoders share: their failure signal, JSON parsing and option reading.

Parsing helpers know what is wrong but not which Kafka record they are looking at; they raise
`Malformed(reason)`, and `decode_errors` turns it into a DecodeError carrying the record's topic,
partition and offset.
"""
from __future__ import annotations

import binascii
import functools
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Optional, TypeGuard, overload

import orjson

from ticdc_conformance.errors import DecodeError
from ticdc_conformance.protocols.common import exact_json
from ticdc_contract.record import KafkaRecord


class Malformed(Exception):
    """A message that breaks its protocol's spec; `reason` says how."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)

    def within(self, where: str) -> "Malformed":
        """The same failure, prefixed with the part of the message it was found in."""
        return Malformed(f"{where}: {self.reason}")


@contextmanager
def decode_errors(record: KafkaRecord, unexpected: Optional[str]) -> Iterator[None]:
    """Re-raise what decoding `record` fails with as a DecodeError with the record's coordinates.

    The decoder contract allows no other exception. Anything but Malformed means a check is
    missing: with `unexpected` set it becomes a DecodeError whose reason starts with that label (each
    decoder's tests look for its label to tell a named check from a crash); with None it propagates.
    """
    try:
        yield
    except DecodeError:
        raise
    except Malformed as e:
        raise DecodeError(record.topic, record.partition, record.offset, e.reason) from None
    except Exception as e:  # noqa: BLE001 - see the docstring
        if unexpected is None:
            raise
        raise DecodeError(record.topic, record.partition, record.offset,
                          f"{unexpected} ({type(e).__name__}: {e})") from e


def is_json_int(value: Any) -> TypeGuard[int]:
    """A JSON integer: JSON true/false arrive as Python bools, which are ints to isinstance."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_json_int64(value: Any) -> TypeGuard[int]:
    """A JSON integer a signed 64-bit field holds (a TSO, a SQLite INTEGER): JSON integers have no
    bound, and a reader that keeps every digit (exact_json.py) gives back any length."""
    return is_json_int(value) and -(2**63) <= value < 2**63


def json_object(data: bytes, what: str, exact: bool = False) -> dict[str, Any]:
    """The JSON object `data` holds; `what` names the part of the message in the reason. `exact`:
    its numbers with every digit they were written with (exact_json: a consumer's output)."""
    try:
        obj = exact_json.loads(data) if exact else orjson.loads(data)
    except (orjson.JSONDecodeError, exact_json.NotJSON) as e:
        raise Malformed(f"{what}: not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise Malformed(f"{what}: must be a JSON object, got {type(obj).__name__}")
    return obj


def remembers_last(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`parse` (an options parser) that gives back its last result for the same options mapping
    still equal to what it held then: the fidelity projections parse the options for every value."""
    last: list = [None, None, None]  # the mapping, a copy of it, what parse made of it

    def parsed(options):
        seen, copy, result = last
        if options is not None and options is seen and options == copy:
            return result
        result = parse(options)
        last[:] = [options, dict(options) if isinstance(options, Mapping) else None, result]
        return result
    return functools.wraps(parse)(parsed)


def bool_option(options: Mapping[str, Any], name: str, default: bool) -> bool:
    """A boolean sink option; missing or null takes TiCDC's default."""
    value = options.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    # Sink URIs carry options as text ("?enable-tidb-extension=true"), so a manifest may too.
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"option {name!r} must be a boolean, got {value!r}")


# A text's shape: the text with every ASCII digit read as 0 ("2028-05-01 04:28:12.748" is
# "0000-00-00 00:00:00.000"). A pattern that names digits only as [0-9] takes a text exactly when it
# takes the text's shape, and a column's values have few shapes: the fast paths remember the shapes
# that matched and decide most values by a bytes.translate and a set lookup instead of a regex.
DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)


def bounded_put(cache: dict, key: Any, value: Any, limit: int) -> None:
    """Stores `value` under `key`, emptying `cache` first when it holds `limit` entries.

    The decoders' caches are keyed by what a stream says (schemas, type codes and flags, values), so
    a hostile stream could name endlessly many keys: a full cache starts over rather than grows."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value


@overload
def compact(data: bytes) -> bytes: ...


@overload
def compact(data: None) -> None: ...


def compact(data: Optional[bytes]) -> Optional[bytes]:
    """A copy of `data` in a block of its own size. orjson.dumps returns its output in the buffer it
    wrote it into, 4 KB at least (64 KB for an output past 4 KB), so bytes it made that are kept (a
    table's rows, a cache's keys, row images counted until a checkpoint) would hold that each: 65,536
    cached keys were a quarter of a gigabyte. `b"%b" %` makes the copy in a quarter of the time
    `bytes(memoryview(data))` takes."""
    return data if data is None else b"%b" % data


def is_canonical_base64(text: str) -> bool:
    """Whether `text` is exactly the standard, padded base64 TiCDC prints for some bytes.

    Such text is its own canonical form, so decoders can keep it without decoding and re-encoding it;
    text that is not (padding bits set, characters outside the alphabet, not base64 at all) gets False
    and goes through the decoder's strict reading, which says what is wrong with it.
    """
    try:
        return binascii.b2a_base64(binascii.a2b_base64(text), newline=False) == text.encode()
    except (binascii.Error, ValueError):  # ValueError: a str with non-ASCII characters
        return False
