"""A delivery schedule: how the suite delivers a stream to a consumer under test, as one value.

A schedule is written `KIND[:OPTION=VALUE,...]` (docs/delivery-schedules.md), e.g.
`round-robin:seed=3,batch=1-64,restarts=2,restart=crash`; `Schedule.parse(s.spec()) == s` for every
schedule, so a failure's replay command names its schedule exactly. A bad kind or option is a
ValueError naming it and what is accepted.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable

MERGES = ("timestamp", "round-robin", "random", "lagging", "watermark-first", "ddl-first")
RESTART_KINDS = ("stop", "crash", "mixed")
RESTARTS = "restarts"  # what `needs` names: the consumer must support restarts
LATE_JOIN = "late-join"  # ... or a late join

# Option name in a spec string -> the Schedule field it sets.
_OPTIONS = {"seed": "seed", "batch": "batch", "lag": "lag", "skew": "skew_ms", "restarts": "restarts",
            "restart": "restart", "commit-every": "commit_every", "late-join": "late_join"}
_TRUE, _FALSE = ("", "1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Schedule:
    merge: str = "timestamp"  # the order across partitions (MERGES)
    seed: int = 0  # every choice of the schedule follows from it
    batch: tuple[int, int] = (1, 64)  # records per poll, drawn from this range (inclusive)
    lag: int = 0  # lagging: records the lagging partition stays behind; 0: it is delivered last
    skew_ms: int = 0  # Kafka timestamps moved by up to ±skew_ms (seeded per record)
    restarts: int = 0  # consumer restarts at seeded points of the delivery
    restart: str = "mixed"  # how a restart happens: stop, crash or each seeded (mixed)
    commit_every: int = 4  # polls between commit requests (with restarts only)
    late_join: bool = False  # start at a later checkpoint from a snapshot of upstream's tables

    def __post_init__(self) -> None:
        if self.merge not in MERGES:
            raise ValueError(f"unknown delivery schedule kind {self.merge!r}; expected one of {', '.join(MERGES)}")
        if self.restart not in RESTART_KINDS:
            raise ValueError(f"schedule option restart={self.restart!r}: expected one of {', '.join(RESTART_KINDS)}")
        low, high = self.batch
        if not all(isinstance(b, int) for b in self.batch) or not 1 <= low <= high:
            raise ValueError(f"schedule option batch={low}-{high}: expected LOW-HIGH with 1 <= LOW <= HIGH")
        for name, value, least in (("seed", self.seed, 0), ("lag", self.lag, 0), ("skew", self.skew_ms, 0),
                                   ("restarts", self.restarts, 0), ("commit-every", self.commit_every, 1)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"schedule option {name}={value}: expected an integer >= {least}")

    # --- spec strings ---------------------------------------------------------------------------
    def spec(self) -> str:
        """The spec string of this schedule: its kind, the seed, and every option not at its default."""
        default = Schedule()
        parts = [f"seed={self.seed}"]
        for option, name in _OPTIONS.items():
            value = getattr(self, name)
            if name == "seed" or value == getattr(default, name):
                continue
            if name == "batch":
                parts.append(f"batch={value[0]}-{value[1]}")
            elif name == "late_join":
                parts.append(option)
            else:
                parts.append(f"{option}={value}")
        return f"{self.merge}:{','.join(parts)}"

    def __str__(self) -> str:
        return self.spec()

    @classmethod
    def parse(cls, text: str) -> "Schedule":
        """The schedule a spec string names; ValueError naming the bad kind, option or value."""
        kind, _, options = text.strip().partition(":")
        if kind not in MERGES:
            raise ValueError(f"unknown delivery schedule kind {kind!r} in {text!r}; expected one of {', '.join(MERGES)}")
        values: dict[str, Any] = {}
        for part in (p.strip() for p in options.split(",")) if options.strip() else ():
            option, has_value, value = part.partition("=")
            option = option.strip()
            if option not in _OPTIONS:
                raise ValueError(f"unknown schedule option {option!r} in {text!r}; expected one of "
                                 f"{', '.join(_OPTIONS)}")
            if not has_value and option != "late-join":
                raise ValueError(f"schedule option {option!r} in {text!r} needs a value ({option}=VALUE)")
            name = _OPTIONS[option]
            if name in values:
                raise ValueError(f"schedule option {option!r} given twice in {text!r}")
            values[name] = _READERS.get(name, _integer)(option, value.strip())
        return cls(merge=kind, **values)

    # --- JSON ------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"merge": self.merge, "seed": self.seed, "batch": list(self.batch), "lag": self.lag,
                "skew_ms": self.skew_ms, "restarts": self.restarts, "restart": self.restart,
                "commit_every": self.commit_every, "late_join": self.late_join, "spec": self.spec()}

    @classmethod
    def from_json(cls, doc: dict) -> "Schedule":
        known = {f.name for f in fields(cls)}
        unknown = set(doc) - known - {"spec"}
        if unknown:
            raise ValueError(f"schedule JSON has unknown field(s) {', '.join(sorted(unknown))}; expected "
                             f"{', '.join(sorted(known))}")
        values = {k: v for k, v in doc.items() if k in known}
        if "batch" in values:
            batch = values["batch"]
            if not (isinstance(batch, (list, tuple)) and len(batch) == 2 and all(isinstance(b, int) for b in batch)):
                raise ValueError(f"schedule JSON batch {batch!r}: expected [LOW, HIGH]")
            values["batch"] = (batch[0], batch[1])
        return cls(**values)

    # --- what it asks of a consumer --------------------------------------------------------------
    @property
    def needs(self) -> frozenset[str]:
        """What the consumer must support beyond the plain session: `restarts`, `late-join`."""
        return frozenset(([RESTARTS] if self.restarts else []) + ([LATE_JOIN] if self.late_join else []))

    def without(self, *, restarts: bool = False, late_join: bool = False) -> "Schedule":
        """This schedule with the restarts and/or the late join left out (options back at their defaults)."""
        changed: dict[str, Any] = {}
        if restarts:
            default = Schedule()
            changed.update(restarts=0, restart=default.restart, commit_every=default.commit_every)
        if late_join:
            changed.update(late_join=False)
        return replace(self, **changed)


def _integer(option: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"schedule option {option}={value!r}: expected an integer") from None


def _batch(option: str, value: str) -> tuple[int, int]:
    low, dash, high = value.partition("-")
    if not dash:
        high = low
    try:
        return int(low), int(high)
    except ValueError:
        raise ValueError(f"schedule option {option}={value!r}: expected LOW-HIGH or N (records per poll)") from None


def _flag(option: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ValueError(f"schedule option {option}={value!r}: expected true or false")


def _text(option: str, value: str) -> str:
    return value


_READERS: dict[str, Callable[[str, str], Any]] = {"batch": _batch, "late_join": _flag, "restart": _text}
