"""The type each simulated changefeed option takes, and how a changefeed TOML or sink URI value is
checked against it, so a value of the wrong type is refused when the config is loaded, naming the
option, where it was given and what it should be.

The types are `SinkConfig`'s own field types (bool, int, str) and, for the options that take one
of a few words, `config.ENUMERATIONS`. A TOML value must already have the type (TOML has booleans
and integers: `enable-tidb-extension = "yes"` is text, not a boolean). A sink URI carries text,
read as TiCDC reads its query parameters: a boolean as Go's strconv.ParseBool does (1, t, T, TRUE,
true, True and 0, f, F, FALSE, false, False; anything else is an error), an integer as Go's
strconv.ParseInt in base 10 does (an optional sign and ASCII digits only).
"""
from __future__ import annotations

import re
import typing
from typing import Any

from .config import ENUMERATIONS, SinkConfig

_FIELD_TYPES = typing.get_type_hints(SinkConfig)
_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")
_GO_INT = re.compile(r"[+-]?[0-9]+")  # strconv.ParseInt(s, 10, 64) before its range check
_INT64 = (-(2**63), 2**63 - 1)


class OptionTypeError(ValueError):
    """A value of the wrong type or outside its option's words; the message says what it should be."""


def expected(field_name: str) -> str:
    """What `field_name` takes, in words."""
    if field_name in ENUMERATIONS:
        return "one of " + ", ".join(repr(w) for w in ENUMERATIONS[field_name])
    kind = _FIELD_TYPES.get(field_name)
    if kind is bool:
        return "a boolean (true or false)"
    if kind is int:
        return "an integer"
    if kind is str:
        return "a string"
    raise KeyError(f"SinkConfig has no plain option field {field_name!r}")


def _enumerated(field_name: str, value: str) -> str:
    words = ENUMERATIONS.get(field_name)
    if words is not None and value not in words:
        raise OptionTypeError(f"is {value!r}, not {expected(field_name)}")
    return value


def checked_toml_value(field_name: str, value: Any) -> Any:
    """`value` as a TOML document gave it, if it is of the field's type; else OptionTypeError."""
    kind = _FIELD_TYPES[field_name]
    # bool is an int subclass in Python, never in TOML: an integer option refuses true/false.
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)) or \
            kind is not int and not isinstance(value, kind):
        raise OptionTypeError(f"is {value!r} ({_toml_type(value)}), not {expected(field_name)}")
    if kind is str:
        return _enumerated(field_name, value)
    return value


def parsed_uri_value(field_name: str, text: str) -> Any:
    """A sink URI parameter's text read as the field's type, as TiCDC reads it; else OptionTypeError."""
    kind = _FIELD_TYPES[field_name]
    if kind is bool:
        return go_bool(text)
    if kind is int:
        if not _GO_INT.fullmatch(text) or not _INT64[0] <= int(text) <= _INT64[1]:
            raise OptionTypeError(f"is {text!r}, not an integer as TiCDC reads it (Go strconv.ParseInt, base 10)")
        return int(text)
    return _enumerated(field_name, text)


def go_bool(text: str) -> bool:
    """A URI parameter's text read as Go's strconv.ParseBool reads it; else OptionTypeError."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise OptionTypeError(f"is {text!r}, not a boolean as TiCDC reads it (Go strconv.ParseBool: "
                          f"{', '.join(_GO_TRUE)} or {', '.join(_GO_FALSE)})")


# What TOML calls each value type; bool first, since a Python bool is an int too.
_TOML_TYPES = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"), (dict, "a table"),
               (list, "an array"))


def _toml_type(value: Any) -> str:
    return next((word for kind, word in _TOML_TYPES if isinstance(value, kind)), "a date or time")
