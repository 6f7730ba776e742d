"""Generic facts (signatures/facts.toml): kernel names, amounts, file:line, shapes, dtypes, archs,
codes, libraries, devices, grid and block, read from a failure's own lines whatever its signature.

Run on the handful of lines of a diagnosis (its root and the lines of the same failure), never on
whole logs; re2, so linear in those lines.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from signatures.facts import fact_kind, normalise

TABLE = Path(__file__).parent / "facts.toml"
MAX_TWINS = 3          # shape, shape_2, shape_3


@dataclass(frozen=True)
class FactRule:
    pattern: str
    docs: str
    match: tuple            # ({"line", "facts"}, ...)
    no_match: tuple


_rules: list | None = None


def load(path: Path = TABLE) -> list[FactRule]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, row in enumerate(data.get("fact", [])):
        where = f"{path}: fact #{i + 1}"
        if not isinstance(row.get("pattern"), str) or not row.get("docs"):
            raise ValueError(f"{where}: needs a 'pattern' string and 'docs'")
        if not row.get("match") or not row.get("no_match"):
            raise ValueError(f"{where}: needs 'match' examples (line and facts) and 'no_match' lines")
        out.append(FactRule(row["pattern"], row["docs"], tuple(row["match"]), tuple(row["no_match"])))
    return out


def _compiled():
    global _rules
    if _rules is None:
        import re2

        _rules = [re2.compile(r.pattern) for r in load()]
    return _rules


_maybe = None


def _may_match():
    """text -> the indexes of the rules that may match it (a superset), or None where hyperscan is
    missing: one scan of a hyperscan database of every ASCII rule in prefilter mode, so re2 runs only
    the rules that can hold (30 re2 searches a line through the Python wrapper cost ten times more)."""
    global _maybe
    if _maybe is not None:
        return _maybe or None
    try:
        import hyperscan as hs
    except ImportError:
        _maybe = False
        return None
    from signatures import cache

    rules = [r.pattern for r in load()]
    flags = hs.HS_FLAG_PREFILTER | hs.HS_FLAG_SINGLEMATCH | hs.HS_FLAG_ALLOWEMPTY

    def compiles(p: str) -> bool:
        try:
            hs.Database(mode=hs.HS_MODE_BLOCK).compile(expressions=[p.encode()], ids=[0], elements=1, flags=[flags])
            return True
        except hs.error:
            return False

    filtered = [i for i, p in enumerate(rules) if p.isascii() and compiles(p)]
    always = frozenset(range(len(rules))) - frozenset(filtered)
    if not filtered:
        _maybe = False
        return None

    def build():
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        db.compile(expressions=[rules[i].encode() for i in filtered], ids=filtered, elements=len(filtered),
                   flags=[flags] * len(filtered))
        return db

    db = cache.cached_hyperscan("generic-facts", [repr(flags).encode()] + [rules[i].encode() for i in filtered], build)

    def maybe(text: str) -> frozenset:
        hits = set(always)
        db.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=lambda i, *_: hits.add(i))
        return hits

    _maybe = maybe
    return maybe


def _value(name: str, text: str):
    if fact_kind(name) == "cc":
        text = text.replace(", ", ".")
    return normalise(name, text)


def extract(lines: list[str], known: dict | None = None) -> dict:
    """Facts found in `lines` that are not already in `known` (by name or by value)."""
    known = dict(known or {})
    values = [repr(v) for v in known.values()]
    found: dict = {}
    rules, maybe = _compiled(), _may_match()
    for text in lines:
        hits = maybe(text) if maybe is not None else None
        for i, rx in enumerate(rules):
            if hits is not None and i not in hits:
                continue
            for m in rx.finditer(text):
                for name, raw in m.groupdict().items():
                    if raw is None:
                        continue
                    value = _value(name, raw)
                    if repr(value) in values:
                        continue
                    free = [k for k in [name] + [f"{name}_{i}" for i in range(2, MAX_TWINS + 1)]
                            if k not in known and k not in found]
                    if not free:
                        continue
                    found[free[0]] = value
                    values.append(repr(value))
    return found
