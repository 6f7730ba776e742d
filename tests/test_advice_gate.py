"""The hyperscan gate in front of the advice layer's whole-log re2 searches (diagnose.advice._hs_may):
it may only skip a search that would find nothing. Every rule pattern (seen/grab in rules.toml and
origin.toml) and every implies_unless alternation, against texts built from the patterns' own
pieces, non-ASCII letters that fold to ASCII (the Kelvin sign, the long s), vertical tabs and newlines."""
from __future__ import annotations

import random
import re

import pytest

from diagnose import advice


def _rule_patterns() -> list[str]:
    rules, _ = advice.default_rules()
    out = set()
    for rule in rules:
        exprs = [rule.when] + [e for _, e in rule.let]
        for e in exprs:
            text = e if isinstance(e, str) else __import__("ast").unparse(e)
            for m in re.finditer(r"\b(?:seen|grab)\((['\"])(.*?)(?<!\\)\1\)", text):
                out.add(__import__("ast").literal_eval(m[1] + m[2] + m[1]))
    return sorted(out)


def _pieces(pattern: str) -> list[str]:
    words = re.findall(r"[A-Za-z0-9_]+|[^A-Za-z0-9_\\()\[\]{}|?*+^$]", pattern)
    return words + [" ", "\n", "\x0b", "\u212a", "\u017f", "é", "0x0", "(", ")", ":", "'", "1", "12.8"]


def _texts(pattern: str, n: int, rnd: random.Random) -> list[bytes]:
    pieces = _pieces(pattern)
    return ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12))).encode() for _ in range(n)]


PATTERNS = _rule_patterns()


def test_the_rules_have_whole_log_patterns():
    assert len(PATTERNS) >= 10


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_gate_never_skips_a_match_of_a_rule_pattern(pattern):
    rx = advice._compile(pattern, "rule")
    rnd = random.Random(pattern)
    for raw in _texts(pattern, 400, rnd):
        if rx.search(raw) is not None:
            assert advice._hs_may((pattern,), raw), (pattern, raw)


def test_the_gate_never_skips_an_implies_unless_match():
    rnd = random.Random(7)
    for e in advice.ecosystems():
        if not e.implies_unless:
            continue
        rx = advice._unless_re(e.name)
        for raw in _texts(" ".join(e.implies_unless), 2000, rnd):
            if rx.search(raw) is not None:
                assert advice._hs_may(e.implies_unless, raw), (e.name, raw)


def test_the_gate_stands_aside_where_re2_and_hyperscan_may_differ():
    assert advice._hs_may((r"(?i)kernel",), "\u212aernel".encode())       # the Kelvin sign folds to k in re2
    assert advice._hs_may((r"a\Sb",), b"a\x0bb")                          # \S: re2 holds a vertical tab
    assert advice._hs_may((r"x",), b"") is False or advice._hs_gate((r"x",)) is None
