"""Faker access that stays deterministic under a seeded `random.Random`.

Every use re-seeds the faker it hands out from the caller's rng, so a draw depends on the rng
state alone, not on what the faker did before. A Faker with several locales is never called
directly (its locale choice uses the global `random`); one of its locales is picked with the rng.
Scripts beyond the caller's faker come from cached single-locale Fakers.
"""
from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, Optional

# One locale per script, for names and sentences in several writing systems.
SCRIPT_LOCALES = {
    "latin": "en_US",
    "latin-diacritics": "de_DE",
    "cyrillic": "ru_RU",
    "greek": "el_GR",
    "han": "zh_CN",
    "japanese": "ja_JP",
    "hangul": "ko_KR",
    "arabic": "ar_AA",
    "hebrew": "he_IL",
    "devanagari": "hi_IN",
    "thai": "th_TH",
}


@lru_cache(maxsize=None)
def _faker_for(locale: str) -> Any:
    from faker import Faker

    return Faker(locale)


class Fakers:
    """The fakers one draw may use, each re-seeded from `rng` when handed out."""

    def __init__(self, rng: random.Random, faker: Optional[Any] = None) -> None:
        self.rng = rng
        self.faker = faker

    def _seeded(self, f: Any) -> Any:
        f.seed_instance(self.rng.getrandbits(48))
        return f

    def default(self) -> Any:
        """The caller's faker (one of its locales, chosen with the rng), else en_US."""
        f = self.faker
        if f is None:
            return self._seeded(_faker_for("en_US"))
        locales = getattr(f, "locales", None)
        if locales and len(locales) > 1:
            return self._seeded(f[locales[self.rng.randrange(len(locales))]])
        return self._seeded(f)

    def script(self, name: str) -> Any:
        return self._seeded(_faker_for(SCRIPT_LOCALES[name]))

    def pick(self) -> str:
        """A script name (a key of SCRIPT_LOCALES), or "default" for the caller's faker (half the
        time); `by(name)` then hands out that faker. Keep the name, not the faker, across calls:
        every hand-out re-seeds, and the caller's faker may be the same object as a script's."""
        if self.rng.random() < 0.5:
            return "default"
        names = tuple(SCRIPT_LOCALES)
        return names[self.rng.randrange(len(names))]

    def by(self, name: str) -> Any:
        return self.default() if name == "default" else self.script(name)

    def any_script(self) -> Any:
        """A faker of a script picked with the rng (the caller's half of the time), for one call."""
        return self.by(self.pick())
