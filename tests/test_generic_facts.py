"""Generic facts (signatures/facts.toml): each entry's examples give their facts, near misses none."""
import pytest
import re2

from signatures.generic_facts import extract, extract_log, load

RULES = load()


@pytest.mark.parametrize("rule", RULES, ids=[r.pattern[:50] for r in RULES])
def test_generic_fact_examples(rule):
    for ex in rule.match:
        got = extract_log([ex["line"]]) if rule.scope == "log" else extract([ex["line"]])
        for k, v in ex["facts"].items():
            assert got.get(k) == v, f"{ex['line']!r}: {k} = {got.get(k)!r}, want {v!r} (got {got})"
    for line in rule.no_match:
        assert not re2.search(rule.pattern, line), f"{rule.pattern!r} must not match {line!r}"


def test_a_fact_a_signature_captured_is_not_repeated():
    got = extract(["Tried to allocate 2.00 GiB"], known={"requested_bytes": 2147483648})
    assert got == {}


def test_twins_are_numbered_and_typed():
    got = extract(["Shapes are [38,38] and [19,38] and [1,2] and [3,4]"])
    assert got == {"shape": [38, 38], "shape_2": [19, 38], "shape_3": [1, 2]}
