"""Required literals of a regex: a set of strings at least one of which every match holds.

The gate scans for these literals (hyperscan's literal engines run at GB/s for hundreds of them)
instead of the full patterns (a few hundred MB/s once patterns start with classes or bounded
repeats); the full pattern then finds and confirms the lines, only in chunks the gate let through.

A literal that the pattern puts between word boundaries (`\\bnan\\b`) keeps them, marked with
BOUNDARY at its ends: "inf" alone is in every "INFO" line, `\\binf\\b` is not.
"""
from __future__ import annotations

import re

try:
    from re import _constants as C, _parser as P
except ImportError:  # pragma: no cover
    import sre_constants as C
    import sre_parse as P

MIN_LEN = 4          # the gate's literal (a word-bounded literal of 3 counts as 4)
MIN_EXTRA_LEN = 3    # shortest literal text considered at all
BOUNDARY = "\x08"    # marks a word boundary at a literal's start or end

# Words on nearly every line of a training or build log: as the gate's main literal they would wake
# the second phase for almost every chunk, so a rarer literal (even a shorter one) is preferred.
COMMON = frozenset("""
loss grad grads gradient gradients step steps epoch epochs iter iteration time info warn warning debug
error errors failed fail config configs with from that this have what when were will into than then
about after before model train training eval input inputs output outputs result results value values
size shape type tensor tensors device memory data batch rank node worker process thread file line
must should could would expected found using used call called function module cuda torch python
""".split())


def text(literal: str) -> str:
    """The literal's characters, without boundary marks."""
    return literal.strip(BOUNDARY)


def weight(literal: str) -> int:
    """Selectivity as a length: a word boundary is worth about one character."""
    return len(text(literal)) + (1 if literal[:1] == BOUNDARY or literal[-1:] == BOUNDARY else 0)


def _common(c: frozenset[str]) -> bool:
    return any(text(t).strip().lower() in COMMON for t in c)


WEAK_WEIGHT = 7      # a literal set this light (or holding a common word) filters too little


def weak_literals(c: frozenset[str]) -> bool:
    """Too common or too short to be worth gating on by itself (measured on 500 MB of mixed logs:
    putting such patterns into the gate whole halved the chunks that wake a second phase)."""
    return _common(c) or min(map(weight, c)) <= WEAK_WEIGHT


def _quality(c: frozenset[str]):
    # a set holding a common word loses; then the heaviest lightest-literal wins; fewer alternatives on ties
    return (not _common(c), min(map(weight, c)), -len(c))


def _usable(c, min_len: int) -> bool:
    return bool(c) and min(len(text(t)) for t in c) >= MIN_EXTRA_LEN and min(map(weight, c)) >= min_len


def _best(cands: list[frozenset[str]], min_len: int = MIN_EXTRA_LEN) -> frozenset[str] | None:
    good = [c for c in cands if _usable(c, min_len)]
    return max(good, key=_quality) if good else None


def _is_boundary(item) -> bool:
    return item is not None and item[0] is C.AT and item[1] is C.AT_BOUNDARY


def _bounded(c: frozenset[str], left: bool, right: bool) -> frozenset[str]:
    return frozenset((BOUNDARY if left and t[:1] != BOUNDARY else "") + t +
                     (BOUNDARY if right and t[-1:] != BOUNDARY else "") for t in c)


def _caseless(av) -> bool:
    """A SUBPATTERN's own flags, (?i:...): (group, add_flags, del_flags, items)."""
    return len(av) == 4 and bool(av[1] & re.IGNORECASE)


MAX_PRODUCT = 16     # alternatives a literal set may grow to when adjacent pieces are multiplied out


def _expand(item) -> set[str] | None:
    """The exact strings one regex item matches, when that is a small finite set: a literal, a
    small class like [Ee], an optional piece, a group or alternation of such; else None."""
    op, av = item
    if op is C.LITERAL:
        return {chr(av)}
    if op is C.IN:
        chars = [chr(v) for o, v in av if o is C.LITERAL]
        return set(chars) if len(chars) == len(av) and 0 < len(chars) <= 4 else None
    if op is C.SUBPATTERN:
        # a scoped caseless group, (?i:could not), matches "Could not": its exact strings are unknown
        return None if _caseless(av) else _expand_seq(av[-1])
    if op is C.BRANCH:
        out: set[str] = set()
        for branch in av[1]:
            sub = _expand_seq(branch)
            if sub is None:
                return None
            out |= sub
        return out if len(out) <= MAX_PRODUCT else None
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] == 0 and av[1] == 1:
        sub = _expand_seq(av[2])
        return None if sub is None else sub | {""}
    return None


def _expand_seq(items) -> set[str] | None:
    out = {""}
    for item in items:
        piece = _expand(item)
        if piece is None:
            return None
        out = {a + b for a in out for b in piece}
        if len(out) > MAX_PRODUCT:
            return None
    return out


def _seq(items, collect: list | None = None) -> frozenset[str] | None:
    """Candidate literal sets of a sequence (every match holds one string of each candidate).

    Adjacent pieces with a small exact expansion are multiplied out, so `(?:configs|candidates)
    (?:failed|were invalid)` yields the four whole phrases rather than the weak word "configs".
    """
    items = list(items)
    cands: list[frozenset[str]] = []
    acc: set[str] | None = None
    acc_left = False

    def flush(next_item):
        nonlocal acc
        if acc and min(map(len, acc)) >= MIN_EXTRA_LEN:
            cands.append(_bounded(frozenset(acc), acc_left, _is_boundary(next_item)))
        acc = None

    for i, item in enumerate(items):
        op, av = item
        prev = items[i - 1] if i else None
        piece = _expand(item)
        if piece is not None:
            if acc is None:
                acc, acc_left = {""}, _is_boundary(prev)
            grown = {a + b for a in acc for b in piece}
            if len(grown) <= MAX_PRODUCT:
                acc = grown
                continue
            flush(item)
            acc, acc_left = set(piece), False
            continue
        flush(item)
        sub = None
        if op is C.SUBPATTERN:
            sub = None if _caseless(av) else _seq(av[-1])
        elif op is C.BRANCH:
            subs = [_seq(b) for b in av[1]]
            sub = frozenset().union(*subs) if all(subs) else None
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            sub = _seq(av[2])
        if sub:
            cands.append(sub)     # from inside a group: its neighbours' boundaries may not reach it
    flush(None)
    if collect is not None:
        collect.extend(cands)
    return _best(cands)


def required_literals(pattern: str) -> tuple[frozenset[str], bool] | None:
    """(literals, caseless): every match of `pattern` holds one of the literals; or None.

    The best set is the rarest-looking one: no common log word, then the heaviest shortest literal.
    """
    try:
        parsed = P.parse(pattern)
    except re.error:
        return None
    cands: list[frozenset[str]] = []
    _seq(parsed, cands)
    main = [c for c in cands if _usable(c, MIN_LEN)]
    if not main:
        return None
    return max(main, key=_quality), bool(parsed.state.flags & re.IGNORECASE)
