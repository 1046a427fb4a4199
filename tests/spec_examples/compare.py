"""Comparing an encoded message with a spec example, as the example files describe it.

Paths are lists of object keys / array indexes; "*" stands for every key or index at that level.

Elision: the specs shorten some examples with "..." (spec 001's value schema, spec 003's
UPDATE/DELETE/mysqlType examples). A transcription keeps that as data:
- an object holding the key "..." is matched on its other keys only (more keys may follow);
- an array whose last element is "..." is matched on the elements before it, which must appear in
  that order, with other elements possibly around them (spec 001 lists before, after and op and
  elides the rest, source included).
"""
from __future__ import annotations

import base64
import copy
import json
import re
from typing import Any, Iterator

ELLIPSIS = "..."
Path = list  # of str | int


def render_path(path: Path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "<root>"


def parse_part(raw: bytes | None) -> Any:
    """A message part as a consumer reads it: JSON, or "" for an empty value (an Open Protocol
    resolved event's value frame), or None for no part at all."""
    if raw is None:
        return None
    if raw == b"":
        return ""
    return json.loads(raw)


def _children(node: Any, step: Any) -> Iterator[tuple[Any, Any]]:
    if step == "*":
        if isinstance(node, dict):
            yield from node.items()
        elif isinstance(node, list):
            yield from enumerate(node)
        return
    if isinstance(node, dict) and step in node:
        yield step, node[step]
    elif isinstance(node, list) and isinstance(step, int) and -len(node) <= step < len(node):
        yield step, node[step]


def select(doc: Any, path: Path) -> Any:
    node = doc
    for step in path:
        found = list(_children(node, step))
        if len(found) != 1:
            raise KeyError(f"{render_path(path)}: no single element at {step!r}")
        node = found[0][1]
    return node


def drop(doc: Any, path: Path) -> tuple[Any, list[str]]:
    """A copy of `doc` without the elements at `path`, and the concrete paths removed."""
    out = copy.deepcopy(doc)
    removed: list[str] = []

    def walk(node: Any, rest: Path, here: Path) -> None:
        if not rest:
            return
        step, tail = rest[0], rest[1:]
        for k, child in list(_children(node, step)):
            if tail:
                walk(child, tail, here + [k])
            else:
                removed.append(render_path(here + [k]))
                if isinstance(node, dict):
                    del node[k]
                else:
                    node[k] = None  # keep positions stable; a dropped array slot compares as null

    walk(out, list(path), [])
    return out, removed


def decode_legacy(doc: Any, path: Path, how: str) -> tuple[Any, list[str]]:
    """Rewrites the values at `path` from an older TiCDC's rendering into today's."""
    if how != "base64-utf8":
        raise ValueError(f"unknown legacy rendering {how!r}")
    out = copy.deepcopy(doc)
    done: list[str] = []

    def walk(node: Any, rest: Path, here: Path) -> None:
        step, tail = rest[0], rest[1:]
        for k, child in list(_children(node, step)):
            if tail:
                walk(child, tail, here + [k])
            elif isinstance(child, str):
                node[k] = base64.b64decode(child, validate=True).decode("utf-8")
                done.append(render_path(here + [k]))

    walk(out, list(path), [])
    return out, done


def differences(expected: Any, actual: Any, path: Path | None = None) -> list[str]:
    """Every place where `actual` departs from `expected` (elision-aware), as readable lines."""
    path = path or []
    here = render_path(path)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{here}: expected an object, got {json.dumps(actual)[:200]}"]
        open_ended = ELLIPSIS in expected
        out = []
        for k, v in expected.items():
            if k == ELLIPSIS:
                continue
            if k not in actual:
                out.append(f"{render_path(path + [k])}: missing (expected {json.dumps(v)[:200]})")
            else:
                out += differences(v, actual[k], path + [k])
        if not open_ended:
            out += [f"{render_path(path + [k])}: unexpected field {json.dumps(actual[k])[:200]}"
                    for k in actual if k not in expected]
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{here}: expected an array, got {json.dumps(actual)[:200]}"]
        if expected and expected[-1] == ELLIPSIS:
            return _in_order(expected[:-1], actual, path)
        if len(actual) != len(expected):
            return [f"{here}: expected {len(expected)} elements, got {len(actual)}"]
        out = []
        for i, v in enumerate(expected):
            out += differences(v, actual[i], path + [i])
        return out
    # bool is an int in Python: compare types too, so true never equals 1.
    if type(expected) is not type(actual) or expected != actual:
        if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) \
                and not isinstance(expected, bool) and not isinstance(actual, bool) and expected == actual:
            return []
        return [f"{here}: expected {json.dumps(expected)}, got {json.dumps(actual)}"]
    return []


def _in_order(items: list, actual: list, path: Path) -> list[str]:
    """An elided array: each listed element matches a later element of `actual` than the one before."""
    j = 0
    for i, item in enumerate(items):
        while j < len(actual) and differences(item, actual[j], path + [j]):
            j += 1
        if j == len(actual):
            return [f"{render_path(path)}: listed element {i} ({json.dumps(item)[:200]}) has no match in order"]
        j += 1
    return []


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\btrue\b|\bfalse\b|\bnull\b')


def scalar_tokens(text: str) -> set[str]:
    """The JSON string/number/literal tokens of a text, each decoded and re-dumped, so a
    transcription can be checked against the verbatim spec text it came from."""
    out = set()
    for tok in _TOKEN.findall(text):
        try:
            out.add(json.dumps(json.loads(tok), ensure_ascii=False))
        except ValueError:
            continue
    return out


def leaves(doc: Any, path: Path | None = None) -> Iterator[tuple[Path, Any]]:
    """Every object key and scalar of a document (elision marks excluded), with its path."""
    path = path or []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == ELLIPSIS:
                continue
            yield path + [k], k
            yield from leaves(v, path + [k])
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            if v == ELLIPSIS and i == len(doc) - 1:
                continue
            yield from leaves(v, path + [i])
    else:
        yield path, doc
