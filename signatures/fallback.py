"""A low-confidence family guess from the wording, for failures no signature explains.

The table is data (signatures/fallback.toml); this module only scores lines against it, with re2
(linear time) on the handful of evidence lines of an unexplained log.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from signatures.taxonomy import FAMILIES, ORIGINS

TABLE = Path(__file__).parent / "fallback.toml"


@dataclass(frozen=True)
class Guess:
    family: str
    origin: str
    fix: str
    score: float
    words: tuple[str, ...]      # the wording that decided it


_table: list | None = None


def _load() -> list:
    global _table
    if _table is None:
        import re2

        data = tomllib.loads(TABLE.read_text(encoding="utf-8"))
        table = []
        for row in data["family"]:
            if row["name"] not in FAMILIES or row["origin"] not in ORIGINS:
                raise ValueError(f"{TABLE}: family {row['name']!r} / origin {row['origin']!r} not in the taxonomy")
            table.append((row["name"], row["origin"], row["fix"],
                          [re2.compile("(?i)" + w) for w in row["words"]]))
        _table = table
    return _table


def guess(lines: list[tuple[str, float]]) -> Guess | None:
    """The family whose words weigh most in `lines` ((text, weight) pairs); None when no word hits.

    Ties go to the family listed first in the table (the more specific ones come first)."""
    best: Guess | None = None
    for name, origin, fix, regexes in _load():
        score, words = 0.0, []
        for text, weight in lines:
            for rx in regexes:
                m = rx.search(text)
                if m:
                    score += weight
                    words.append(m.group(0))
        if score > 0 and (best is None or score > best.score):
            best = Guess(name, origin, fix, score, tuple(dict.fromkeys(words)))
    return best
