"""Run every signature's embedded examples: what `diagnose signatures check` and pytest both run."""
from __future__ import annotations

from dataclasses import dataclass

from signatures.model import Signature


@dataclass
class Problem:
    signature: str
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: signature {self.signature!r}: {self.message}"


def _facts_differ(want: dict, got: dict) -> list[str]:
    out = []
    for k, v in want.items():
        if k not in got:
            out.append(f"fact {k!r} not captured (want {v!r})")
        elif got[k] != v:
            out.append(f"fact {k!r} is {got[k]!r}, want {v!r}")
    return out


def check_signature(sig: Signature, matcher) -> list[Problem]:
    from diagnose.engine import decide

    problems = []
    for ex in sig.examples:
        scan = matcher.scan_bytes(ex.line.encode() + b"\n")
        own = [m for m in scan.matches if m.signature.id == sig.id]
        if not own:
            problems.append(Problem(sig.id, sig.file, f"example does not match: {ex.line!r}"))
            continue
        merged: dict = {}
        for m in own:                     # several patterns of one signature may hit the line
            for k, v in m.facts.items():
                merged.setdefault(k, v)
        for msg in _facts_differ(ex.facts, merged):
            problems.append(Problem(sig.id, sig.file, f"{msg} in {ex.line!r}"))
        unasserted = sorted(set(merged) - set(ex.facts))
        if unasserted:
            problems.append(Problem(sig.id, sig.file, f"example captures fact(s) it does not assert "
                                                       f"({', '.join(unasserted)}): {ex.line!r}"))
        if sig.tier == "context":
            # never a failure alone; just above a bare failure it names the family
            alone = decide(scan, "<example>")
            if alone.signature == sig.id:
                problems.append(Problem(sig.id, sig.file, f"context evidence decided a log alone: {ex.line!r}"))
            probe = sig.context_probe or "AssertionError"
            beside = decide(matcher.scan_bytes(ex.line.encode() + b"\n" + probe.encode() + b"\n"), "<example>")
            if beside.family != sig.family:
                problems.append(Problem(sig.id, sig.file, f"example above {probe!r} classifies as "
                                                           f"{beside.family} (via {beside.signature}), not {sig.family}: {ex.line!r}"))
            if sig.context_when:          # a failure its condition does not take stays unexplained by it
                other = decide(matcher.scan_bytes(ex.line.encode() + b"\nAssertionError\n"), "<example>")
                if other.signature == sig.id:
                    problems.append(Problem(sig.id, sig.file, f"example explains a bare AssertionError, which its "
                                                               f"context_when does not take: {ex.line!r}"))
        elif sig.role != "benign" and not all(m.demoted for m in own):
            d = decide(scan, "<example>")
            if d.family != sig.family:
                problems.append(Problem(sig.id, sig.file,
                                        f"example alone classifies as {d.family} (via {d.signature}), not {sig.family}: {ex.line!r}"))
    for line in sig.counterexamples:
        scan = matcher.scan_bytes(line.encode() + b"\n")
        if any(m.signature.id == sig.id for m in scan.matches):
            problems.append(Problem(sig.id, sig.file, f"must not match but does: {line!r}"))
    return problems


def check_all(signatures: list[Signature], matcher) -> list[Problem]:
    problems = []
    for sig in signatures:
        problems += check_signature(sig, matcher)
    return problems
