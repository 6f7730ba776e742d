"""A log diagnosis fused with the lint findings of the task's kernel source: an illegal memory
access or a device-side assert, with a missing mask or bounds guard in the source, names that
line as the likely root. Pure: (diagnosis, findings) -> diagnosis."""
from __future__ import annotations

import copy
import re

from findings import Finding, sort_findings

# the families a source finding can explain, and the rules whose finding is a candidate root for each
ROOT_RULES = {
    "illegal-memory-access": ("lint.triton.unmasked-load", "lint.triton.unmasked-store",
                              "lint.triton.block-ptr-no-boundary-check", "lint.cuda.unguarded-global-index",
                              "lint.triton.int32-offset-overflow", "lint.cuda.int-index-overflow",
                              "lint.cuda.memcpy-missing-sizeof"),
    "device-assert": ("lint.triton.unmasked-load", "lint.triton.unmasked-store",
                      "lint.triton.block-ptr-no-boundary-check", "lint.cuda.unguarded-global-index",
                      "lint.triton.int32-offset-overflow", "lint.cuda.int-index-overflow"),
}


def _log_text(d) -> str:
    parts = [d.title or "", d.root.text if d.root else ""]
    parts += [e.text for e in d.evidence] + [c.text for c in d.chain]
    parts += [str(v) for v in d.facts.values()]
    return "\n".join(parts)


def likely_root(d, findings: list[Finding], log_text: str = "") -> tuple[Finding | None, str]:
    """The finding that most likely caused the diagnosed failure, and why it was chosen: among the
    candidate rules of the family, one in a kernel the log names (compute-sanitizer's `in kernel`,
    a traceback), else the strongest."""
    rules = ROOT_RULES.get(d.family)
    if not rules:
        return None, ""
    cands = [f for f in findings if f.id in rules]
    if not cands:
        return None, ""
    text = _log_text(d) + "\n" + log_text
    named = [f for f in cands if f.facts.get("kernel") and re.search(
        r"\b" + re.escape(str(f.facts["kernel"])) + r"\b", text)]
    pool = named or cands
    rank = {r: i for i, r in enumerate(rules)}
    best = sorted(pool, key=lambda f: (f.severity != "error", rank[f.id], f.evidence[0].file if f.evidence else "",
                                       f.evidence[0].line or 0 if f.evidence else 0))[0]
    why = (f"the log names kernel {best.facts['kernel']}" if named else
           "the log names no kernel; this is the strongest such finding in the source")
    return best, why


def fuse_lint(d, findings: list[Finding], source_errors: list[str] = (), log_text: str = ""):
    """A copy of d with the source findings attached (the likely root first) and a note naming it.
    log_text: the log itself (or its first megabytes), to match the kernel names it mentions."""
    d = copy.copy(d)
    d.notes = list(d.notes)
    fs = sort_findings(findings)
    root, why = likely_root(d, fs, log_text)
    if root is not None:
        e = root.evidence[0]
        others = sum(1 for f in fs if f.id in ROOT_RULES[d.family]) - 1
        d.notes.append(f"likely root in the source: {e.where()} {root.id}: {e.text} ({root.title}); {why}"
                       + (f"; {others} other candidate{'s' if others != 1 else ''} in the findings" if others > 0 else ""))
        fs = [root] + [f for f in fs if f is not root]
    elif d.family in ROOT_RULES:
        n = len(fs)
        d.notes.append(f"lint read the source and found no missing mask or bounds guard "
                       f"({n} other finding{'s' if n != 1 else ''}); the fault may be in an index computation, "
                       "the caller's sizes or a library kernel")
    for err in source_errors:
        d.notes.append(f"lint could not read {err}")
    d.findings = list(d.findings) + fs
    return d
