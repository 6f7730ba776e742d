"""Origin from the evidence: whose fault a failure is, as rules over the diagnosis (origin.toml).

A signature carries the origin its failure usually has (`oom` -> resource-limit, a Triton
CompilationError -> kernel-logic); the rules of origin.toml read the evidence that says otherwise
(the toolchain crashed or lacks what the source uses, a framework generated the code, the caller's
argument broke the kernel's assumption, an error far beyond any rounding). They share rules.toml's
format and evaluator (diagnose.advice.load_rules, diagnose/advice/expr.py) and run after its rules;
the first rule that holds with an `origin` sets it and says so in `reasoning`.
"""
from __future__ import annotations

from pathlib import Path

ORIGIN_FILE = Path(__file__).with_name("origin.toml")


def origin_rules(path: Path = ORIGIN_FILE) -> tuple:
    """The origin rules, validated like rules.toml's (every rule names an origin)."""
    from diagnose.advice import AdviceError, load_rules

    rules, _ = load_rules(path)
    missing = [r.id for r in rules if not r.origin]
    if missing:
        raise AdviceError(f"{path}: rule(s) {', '.join(missing)} set no origin (reasoning without one "
                          "belongs in rules.toml)")
    return rules
