"""ENUM, SET and JSON domains.

ENUM values are member names; '' is a value only as a member or, in non-strict sql_mode, as the
error value TiDB stores for an invalid input (index 0; opt-in "invalid-enum"). SET values are
their members in definition order joined by ',' ('' = the empty set); TiDB forbids ',' inside SET
members. JSON values are TiDB's printed text of the document (ticdc_contract.json_document).
"""
from __future__ import annotations

from hypothesis import strategies as st

from ticdc_contract import json_document as jsondoc
from ticdc_contract.tidb_types import TiDBType
from ticdc_contract.type_catalogue import TXN_ENTRY_SIZE_LIMIT

from . import gen as g
from .domain import Edge, Family


def enum_family(t: TiDBType) -> Family:
    members = list(t.elements)
    edges = [Edge(m, f"member {i + 1}") for i, m in enumerate(members[:64])]
    if len(members) > 64:
        edges.append(Edge(members[-1], f"last member ({len(members)})"))
    if "" not in members:
        edges.append(Edge("", "the error value (index 0) of an invalid input", frozenset({"invalid-enum"})))
    gen = g.sampled_from(members)
    member_set = set(members)

    def check(v) -> None:
        if not isinstance(v, str):
            raise ValueError(f"expected str, got {type(v).__name__}")
        if v not in member_set:
            raise ValueError(f"{v!r} is not a member")

    return Family(gen, edges, check, members[:8])


def enum_family_allowing_error(t: TiDBType) -> Family:
    """enum_family under non-strict sql_mode: the error value '' is a value too."""
    base = enum_family(t)
    members = set(t.elements) | {""}

    def check(v) -> None:
        if not isinstance(v, str):
            raise ValueError(f"expected str, got {type(v).__name__}")
        if v not in members:
            raise ValueError(f"{v!r} is not a member")

    gen = g.weighted((0.95, base.gen), (0.05, g.just("")))
    return Family(gen, base.edges, check, base.defaults)


def set_family(t: TiDBType) -> Family:
    members = list(t.elements)
    if "" in members:
        raise ValueError("a SET with an empty member has no unambiguous canonical text")
    k = len(members)
    index = {m: i for i, m in enumerate(members)}

    def join(ix) -> str:
        return ",".join(members[i] for i in sorted(ix))

    edges = [Edge("", "the empty set"), Edge(join(range(k)), "every member")]
    edges += [Edge(m, f"member {i + 1} alone") for i, m in enumerate(members)]
    if k > 1:
        edges += [Edge(join((0, k - 1)), "first and last member"), Edge(join(range(0, k, 2)), "every other member")]
    quoted = [i for i, m in enumerate(members) if any(c in m for c in "'\" \\")]
    if quoted:
        edges.append(Edge(join(quoted), "members with quotes, spaces or backslashes"))

    def realistic(rng, fk) -> str:
        p = rng.choice((0.1, 0.3, 0.6))
        return join(i for i in range(k) if rng.random() < p)

    fallback = _SetStrategy(k, join)
    gen = g.weighted((0.8, g.realistic(realistic, fallback)), (0.2, fallback))

    def check(v) -> None:
        if not isinstance(v, str):
            raise ValueError(f"expected str, got {type(v).__name__}")
        if v == "":
            return
        last = -1
        for m in v.split(","):
            i = index.get(m)
            if i is None:
                raise ValueError(f"{m!r} is not a member")
            if i <= last:
                raise ValueError(f"{v!r}: members must appear once each, in definition order")
            last = i

    return Family(gen, edges, check, ["", members[0], join(range(k))])


class _SetStrategy(g.Gen):
    """Subsets of member indexes; the strategy shrinks toward the empty set."""

    def __init__(self, k: int, join) -> None:
        self.k, self.join = k, join

    def draw(self, rng, fk):
        return self.join(i for i in range(self.k) if rng.random() < 0.5)

    def _strategy(self):
        return st.frozensets(st.integers(0, self.k - 1), max_size=self.k).map(self.join)


# --- JSON -----------------------------------------------------------------------------------------
_INT64_MIN, _UINT64_MAX = jsondoc.INT64_MIN, jsondoc.UINT64_MAX


def _nested(levels: int) -> object:
    doc: object = "deep"
    for i in range(levels):
        doc = [doc] if i % 2 == 0 else {"k": doc}
    return doc


def _json_edges() -> list[Edge]:
    d = jsondoc.dumps
    docs = [
        (None, "null"), (True, "true"), (False, "false"), (0, "zero"), (-1, "minus one"), (1.5, "a double"),
        (0.1, "0.1"), (-0.0, "negative zero double (TiDB keeps the sign)"), (1.0, "a whole double: prints 1.0"),
        ({}, "empty object"), ([], "empty array"), ("", "empty string"), ("text", "a string"),
        (2**63 - 1, "int64 max"), (-(2**63), "int64 min"), (2**63, "uint64 beyond int64"), (_UINT64_MAX, "uint64 max"),
        (1e15, "1e15: exponent notation starts"), (999999999999999.9, "just below 1e15"),
        (1e-15, "1e-15: still plain notation"), (1e-16, "exponent notation below 1e-15"),
        (1.7976931348623157e308, "float64 max"), (5e-324, "smallest subnormal"), (2.0**53 + 2, "beyond 2**53"),
        ({"a": 1, "b": 2, "aa": 3}, "keys sorted bytewise, not by length"),
        ({"b": [1, 2, {"c": None}], "a": {"x": True, "y": False}}, "nested"),
        ({"ключ": "значение", "键": "值", "😀": "emoji", "é": "ü", "Z": "upper before lower"}, "unicode keys and values"),
        ({"q": "quote\" backslash\\ slash/ nl\n cr\r tab\t bs\b ff\f ctl\x01\x1f del\x7f <>&",
          "ls": "\u2028\u2029"}, "every escape TiDB writes"),
        ({"": "empty key", " ": "space key"}, "empty and blank keys"),
        ([1, -1, 0.5, "s", None, True, False, [], {}], "mixed array"),
        (_nested(20), "twenty levels deep"),
        ({f"key{i:03d}": i for i in range(200)}, "200 keys"),
        (list(range(1000)), "1000 numbers"),
        ({"text": "长文本 " * 2000}, "about 16 KiB of text"),
    ]
    return [Edge(d(v), why) for v, why in docs]


def _json_leaves() -> g.Gen:
    ints = g.integers(_INT64_MIN, _UINT64_MAX, typical=(-1000, 100000))
    floats = g.floats(-1e300, 1e300).map(lambda x: x + 0.0)
    strings = g.text(g.characters([(0x20, 0x7E), (0x00, 0x1F), (0xE9, 0xFF), (0x4E00, 0x4E80), (0x1F600, 0x1F64F)],
                                  strategy=st.characters(codec="utf-8")), max_size=24, typical_max=10)
    return g.weighted((1, g.just(None)), (1, g.sampled_from([True, False])), (3, ints), (2, floats), (4, strings))


def _json_tree() -> g.Gen:
    keys = g.text(g.characters([(0x61, 0x7A), (0x41, 0x5A), (0x30, 0x39), (0x5F, 0x5F), (0x4E00, 0x4E80)],
                               strategy=st.characters(codec="utf-8")), max_size=12, typical_max=8)
    return g.recursive(_json_leaves(), lambda child: g.one_of(g.lists(child, max_size=6, typical_max=4),
                                                              g.dictionaries(keys, child, max_size=6)),
                       max_depth=5, max_leaves=30)


def _realistic_json(rng, fk) -> object:
    script = fk.pick()
    f = lambda: fk.by(script)  # noqa: E731  (re-seeded per call; see Fakers.pick)
    kind = rng.randrange(5)
    if kind == 0:
        return {"name": f().name(), "age": rng.randint(0, 100), "email": fk.default().email(),
                "tags": [f().word() for _ in range(rng.randint(0, 4))], "active": rng.random() < 0.8,
                "address": {"city": f().city(), "zip": fk.default().postcode()}}
    if kind == 1:
        return {"event": rng.choice(("click", "view", "purchase")), "ts": rng.randint(1_600_000_000_000, 1_800_000_000_000),
                "amount": round(rng.uniform(0, 500), 2), "items": [{"sku": fk.default().bothify("SKU-####"),
                                                                     "qty": rng.randint(1, 5)} for _ in range(rng.randint(0, 3))]}
    if kind == 2:
        return [f().word() for _ in range(rng.randint(0, 6))]
    if kind == 3:
        return {"settings": {"theme": rng.choice(("dark", "light")), "lang": rng.choice(("en", "zh", "ja", "de")),
                             "limits": [rng.randint(0, 10**6) for _ in range(3)], "ratio": rng.random()}, "note": None}
    return rng.choice((None, True, False, rng.randint(-10**6, 10**6), f().sentence()))


def json_family(t: TiDBType) -> Family:
    tree = _json_tree()
    fallback = tree.map(jsondoc.dumps)
    gen = g.weighted((0.6, g.realistic(lambda rng, fk: jsondoc.dumps(_realistic_json(rng, fk)), fallback)),
                     (0.4, fallback))

    def check(v) -> None:
        jsondoc.check_text(v)
        if len(v.encode("utf-8")) > TXN_ENTRY_SIZE_LIMIT:
            raise ValueError("JSON document larger than TiDB's txn-entry-size-limit")

    return Family(gen, _json_edges(), check, [])
