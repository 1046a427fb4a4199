"""The expected-failure list: a checked-in text file naming the failures a consumer is known to have, so
a CI gate fails on what is new and on what was fixed (docs/expected-failures.md).

One entry a line; `#` comment lines and blank lines are kept as they are:

    smoke/debezium::CONSUMER-STATE-1            that rule failing in that case
    */debezium::CONSUMER-STATE-1  DECIMAL read   a glob on the case; the rest of the line is a prefix
                                                 the finding's message must start with
    CONSUMER-ORDER-1                             that rule, in any case the run judges
    smoke/open-protocol                          the case failing in any way

A failure an entry matches is expected. An entry the run could judge (its case glob matches a case
that was judged; a bare rule id: any case was judged) that matched no failure is stale: the consumer
now passes there. An entry whose cases did not run is "not run", never stale.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Optional, Sequence

from .case_ids import (
    CASE_SEPARATOR,
    CONSUMER_ERROR_ID,
    OUTCOME_IDS,
    RULE_SEPARATOR,
    VARIANT_SEPARATOR,
    Failure,
    check_id,
    split_check_id,
)

# What a new list starts with, so whoever opens it finds what it is.
NEW_FILE_HEADER = "# Expected failures of ticdc-conformance (docs/expected-failures.md): CASE::RULE [message prefix]\n"
_GLOB_CHARS = re.compile(r"[*?\[\]]")


class ExpectedFailuresError(ValueError):
    """The list cannot be read: names the file, the line and what is wrong."""


def known_rule_ids() -> frozenset[str]:
    """The rule ids an entry may name: the catalogue's and the outcome ids."""
    from ticdc_conformance.rules.catalogue import default_catalogue

    return frozenset(r.id for r in default_catalogue()) | frozenset(OUTCOME_IDS)


@dataclass(frozen=True)
class Entry:
    """One line of the list naming failures: `selector` is `CASE::RULE`, a bare case glob or a bare
    rule id; `message_prefix` ("" for none) what a matched failure's message starts with."""

    line: int
    selector: str
    message_prefix: str = ""

    @property
    def case_glob(self) -> Optional[str]:
        """The case part (a glob), None for a bare rule id."""
        return self._parts()[0]

    @property
    def rule(self) -> Optional[str]:
        """The rule part, None for a bare case glob (any rule)."""
        return self._parts()[1]

    def _parts(self) -> tuple[Optional[str], Optional[str]]:
        case, rule = split_check_id(self.selector)
        if rule is not None:
            return case, rule
        return (case, None) if CASE_SEPARATOR in case else (None, case)

    def judges_case(self, case: str) -> bool:
        """Its case part (glob) matches this case id; a bare rule id judges every case. A case part
        without `@` names the case under any variant (`smoke/canal-json` judges
        `smoke/canal-json@schedule=…` too): a list written for a gate must not fall silent, as
        entries that never match a case would ("not run"), when the gate adds a schedule or a time
        zone. With `@`, the variant must match."""
        glob = self.case_glob
        if glob is None:
            return True
        return fnmatchcase(case if VARIANT_SEPARATOR in glob else case.split(VARIANT_SEPARATOR, 1)[0], glob)

    def matches(self, failure: Failure) -> bool:
        return (self.judges_case(failure.case)
                and (self.rule is None or self.rule == failure.rule)
                and failure.message.startswith(self.message_prefix))

    def __str__(self) -> str:
        return f"{self.selector}  {self.message_prefix}" if self.message_prefix else self.selector


@dataclass
class Judgement:
    """A run's failures measured against a list. `expected` pairs each expected failure with the first
    entry (in file order) that matches it."""

    expected: list[tuple[Failure, Entry]] = field(default_factory=list)
    unexpected: list[Failure] = field(default_factory=list)
    stale: list[Entry] = field(default_factory=list)
    not_run: list[Entry] = field(default_factory=list)
    path: Optional[Path] = None  # the list judged against, for FILE:LINE in reports

    @property
    def ok(self) -> bool:
        """No unexpected failure and no stale entry."""
        return not self.unexpected and not self.stale

    def expects(self, failure: Failure) -> Optional[Entry]:
        """The entry that made this failure expected, None if it is unexpected (or not this run's)."""
        return next((entry for f, entry in self.expected if f == failure), None)

    def where(self, entry: Entry) -> str:
        """`FILE:LINE` of an entry."""
        return f"{self.path}:{entry.line}" if self.path is not None else f"line {entry.line}"

    def counts(self) -> list[tuple[Entry, int]]:
        """Each entry that matched, in file order, with how many failures it made expected."""
        out: dict[Entry, int] = {}
        for _, entry in self.expected:
            out[entry] = out.get(entry, 0) + 1
        return sorted(out.items(), key=lambda item: item[0].line)

    def to_json(self) -> dict:
        """The judgement as the JSON summary carries it."""
        return {
            "file": str(self.path) if self.path is not None else None,
            "ok": self.ok,
            "expected": [{"check": f.id, "message": f.message, "entry": self.where(e)} for f, e in self.expected],
            "unexpected": [{"check": f.id, "message": f.message} for f in self.unexpected],
            "stale": [{"entry": self.where(e), "selector": str(e)} for e in self.stale],
            "not_run": [{"entry": self.where(e), "selector": str(e)} for e in self.not_run],
        }


def parse_entry(text: str, line: int, where: str, rule_ids: frozenset[str]) -> Optional[Entry]:
    """The entry a line holds, None for a blank or comment line; ExpectedFailuresError for a bad one."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    selector, prefix = (stripped.split(None, 1) + [""])[:2]
    prefix = prefix.strip()
    case, rule = split_check_id(selector)

    def bad(why: str) -> ExpectedFailuresError:
        return ExpectedFailuresError(f"{where}:{line}: {why} (docs/expected-failures.md)")

    if rule is None and CASE_SEPARATOR not in case:
        # A bare word: a rule id, or a mistake.
        if case in rule_ids:
            return Entry(line, selector, prefix)
        if _looks_like_rule_id(case):
            raise bad(_unknown_rule(case))
        raise bad(f"bad selector {selector!r}: not a case (SCENARIO/ENCODING[@VARIANT], globs allowed), "
                  f"a check (CASE::RULE) nor a rule id")
    if rule is not None:
        if RULE_SEPARATOR in rule:
            raise bad(f"bad selector {selector!r}: more than one '{RULE_SEPARATOR}'")
        if not case or (CASE_SEPARATOR not in case and case != "*"):
            raise bad(f"bad selector {selector!r}: the part before '{RULE_SEPARATOR}' must be a case "
                      f"(SCENARIO/ENCODING[@VARIANT], globs allowed)")
        if not rule or _GLOB_CHARS.search(rule):
            raise bad(f"bad selector {selector!r}: the part after '{RULE_SEPARATOR}' must be one rule id "
                      f"(globs go on the case part)")
        if rule not in rule_ids:
            raise bad(_unknown_rule(rule))
    scenario, _, encoding = case.partition(CASE_SEPARATOR)
    if case != "*" and (not scenario or not encoding):
        raise bad(f"bad selector {selector!r}: the case needs a scenario and an encoding (SCENARIO/ENCODING)")
    return Entry(line, selector, prefix)


def _looks_like_rule_id(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+", word)) or word.islower() and "-" in word


def _unknown_rule(rule: str) -> str:
    return (f"unknown rule id {rule!r}: not in the rule catalogue (`ticdc-conformance rules` lists it) "
            f"nor an outcome id ({', '.join(OUTCOME_IDS)})")


@dataclass
class ExpectedFailures:
    """A loaded list: its entries and every line as read, so an update keeps comments and order."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the file's lines, each with its line ending

    @classmethod
    def load(cls, path: Path) -> "ExpectedFailures":
        """Reads and validates the list; a missing file is an empty list (the first update writes it)."""
        path = Path(path)
        if not path.exists():
            return cls(path)
        if path.is_dir():
            raise ExpectedFailuresError(f"{path}: is a folder, not an expected-failure list")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise ExpectedFailuresError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        except OSError as e:
            raise ExpectedFailuresError(f"{path}: cannot be read ({e.strerror})") from None
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, path: Path) -> "ExpectedFailures":
        rule_ids = known_rule_ids()
        lines = text.splitlines(keepends=True)
        entries = [e for number, line in enumerate(lines, 1)
                   if (e := parse_entry(line, number, str(path), rule_ids)) is not None]
        return cls(Path(path), entries, lines)

    def judge(self, cases: Sequence[str], failures: Sequence[Failure]) -> Judgement:
        """Measures a run's failures against the list. `cases` are the case ids the run judged (a case
        that was not applicable was not judged). In a case whose consumer errored no rule was judged,
        so an entry naming a rule there is not run rather than stale."""
        judgement = Judgement(path=self.path)
        used: set[Entry] = set()
        for failure in failures:
            matching = [e for e in self.entries if e.matches(failure)]
            used.update(matching)
            if matching:
                judgement.expected.append((failure, matching[0]))
            else:
                judgement.unexpected.append(failure)
        errored = {f.case for f in failures if f.rule == CONSUMER_ERROR_ID}
        for entry in self.entries:
            if entry in used:
                continue
            judged = [c for c in cases if entry.judges_case(c)
                      and (c not in errored or entry.rule in (None, CONSUMER_ERROR_ID))]
            (judgement.stale if judged else judgement.not_run).append(entry)
        return judgement

    def updated_text(self, judgement: Judgement) -> str:
        """The file's text with the stale entries' lines removed and each unexpected failure appended
        as `CASE::RULE` (one line per distinct check id, in the order they came); every other line
        stays as it was. Updating again with a clean judgement gives the same text."""
        stale_lines = {e.line for e in judgement.stale}
        kept = [line for number, line in enumerate(self.lines, 1) if number not in stale_lines]
        added = list(dict.fromkeys(check_id(f.case, f.rule) for f in judgement.unexpected))
        if not added:
            return "".join(kept)
        if not any(line.strip() for line in kept):
            kept = [NEW_FILE_HEADER] + kept
        if kept and not kept[-1].endswith(("\n", "\r")):
            kept[-1] += "\n"
        return "".join(kept) + "".join(f"{a}\n" for a in added)

    def update(self, judgement: Judgement) -> None:
        """Writes `updated_text` back to the file."""
        self.path.write_text(self.updated_text(judgement), encoding="utf-8")
