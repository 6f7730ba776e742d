"""Required literals of a regex: a set of strings at least one of which every match contains.

The gate scans for these literals (hyperscan's literal engines run at several GB/s for hundreds of
them) instead of the full patterns (a few hundred MB/s once patterns start with classes or bounded
repeats). The full pattern is then confirmed with re2 on the few lines that hold a literal.
"""
from __future__ import annotations

import re

try:
    from re import _constants as C, _parser as P
except ImportError:  # pragma: no cover
    import sre_constants as C
    import sre_parse as P

MIN_LEN = 4


def _best(cands: list[frozenset[str]]) -> frozenset[str] | None:
    good = [c for c in cands if c and min(map(len, c)) >= MIN_LEN]
    if not good:
        return None
    # the longest shortest-literal wins; fewer alternatives on ties
    return max(good, key=lambda c: (min(map(len, c)), -len(c)))


def _seq(items) -> frozenset[str] | None:
    cands: list[frozenset[str]] = []
    run: list[str] = []

    def flush():
        if len(run) >= MIN_LEN:
            cands.append(frozenset(["".join(run)]))
        run.clear()

    for op, av in items:
        if op is C.LITERAL:
            run.append(chr(av))
            continue
        flush()
        if op is C.SUBPATTERN:
            sub = _seq(av[-1])
            if sub:
                cands.append(sub)
        elif op is C.BRANCH:
            subs = [_seq(b) for b in av[1]]
            if all(subs):
                cands.append(frozenset().union(*subs))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            sub = _seq(av[2])
            if sub:
                cands.append(sub)
    flush()
    return _best(cands)


def required_literals(pattern: str) -> tuple[frozenset[str], bool] | None:
    """(literals, caseless) such that every match of `pattern` contains one of the literals; or None."""
    try:
        parsed = P.parse(pattern)
    except re.error:
        return None
    caseless = bool(parsed.state.flags & re.IGNORECASE)
    lits = _seq(parsed)
    return (lits, caseless) if lits else None
