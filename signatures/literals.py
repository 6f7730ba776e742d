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


def _pure(items) -> bool:
    """Only literals, or one alternation of only-literal branches: `(?:nan|inf)`. The boundaries
    around such a group bound every literal it yields; around any other group they may not."""
    items = list(items)
    if all(op is C.LITERAL for op, _ in items):
        return True
    if len(items) == 1 and items[0][0] is C.BRANCH:
        return all(all(op is C.LITERAL for op, _ in b) for b in items[0][1][1])
    if len(items) == 1 and items[0][0] is C.SUBPATTERN:
        return _pure(items[0][1][-1])
    return False


def _seq(items, collect: list | None = None) -> frozenset[str] | None:
    items = list(items)
    cands: list[frozenset[str]] = []
    run: list[str] = []
    run_left = False

    def flush(next_item):
        if len(run) >= MIN_EXTRA_LEN:
            lit = "".join(run)
            cands.append(_bounded(frozenset([lit]), run_left, _is_boundary(next_item)))
        run.clear()

    for i, item in enumerate(items):
        op, av = item
        prev = items[i - 1] if i else None
        nxt = items[i + 1] if i + 1 < len(items) else None
        if op is C.LITERAL:
            if not run:
                run_left = _is_boundary(prev)
            run.append(chr(av))
            continue
        flush(item)
        sub = None
        if op is C.SUBPATTERN:
            sub = _seq(av[-1])
            if not _pure(av[-1]):
                nxt = prev = None
        elif op is C.BRANCH:
            subs = [_seq(b) for b in av[1]]
            sub = frozenset().union(*subs) if all(subs) else None
            if not _pure([item]):
                nxt = prev = None
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            sub = _seq(av[2])
            nxt = prev = None        # a repeat's copies are not bounded by its neighbours
        if sub:
            cands.append(_bounded(sub, _is_boundary(prev), _is_boundary(nxt)))
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
