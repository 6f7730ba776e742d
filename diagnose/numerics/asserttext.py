"""Reading assert_close / assert_allclose messages (in a log, or a failing test's exception): their
numbers, and whether the tolerance they used suits the dtype, with no tensors at hand."""
from __future__ import annotations

import math

import re2

from diagnose.numerics.formats import NumericsError, fmt
from diagnose.numerics.patterns import FAMILY
from diagnose.numerics.tolerances import defaults_text, recommend_tolerance

# -- assert_close / assert_allclose text ---------------------------------------------------------

_INT = re2.compile(r"-?\d+")
_NUM = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)"
_PATTERNS = [
    ("mismatched_count", "total_count", re2.compile(r"Mismatched elements: (\d+) / (\d+)")),
]
_FIELDS = {
    "max_abs_diff": re2.compile(rf"(?i)(?:Greatest absolute difference|Max absolute difference(?: among violations)?|Absolute difference): ({_NUM})"),
    "max_abs_index": re2.compile(r"(?i)Greatest absolute difference: \S+ at index (\([^)]*\)|\d+)"),
    "max_rel_diff": re2.compile(rf"(?i)(?:Greatest relative difference|Max relative difference(?: among violations)?|Relative difference): ({_NUM})"),
    "max_rel_index": re2.compile(r"(?i)Greatest relative difference: \S+ at index (\([^)]*\)|\d+)"),
    "atol": re2.compile(rf"(?i)(?:absolute difference|Absolute difference): \S+(?: at index \([^)]*\)| at index \d+)? \(up to ({_NUM}) allowed\)|atol=({_NUM})"),
    "rtol": re2.compile(rf"(?i)(?:relative difference|Relative difference): \S+(?: at index \([^)]*\)| at index \d+)? \(up to ({_NUM}) allowed\)|rtol=({_NUM})"),
}


def parse_mismatch_text(text: str) -> dict:
    """Numbers from a torch.testing.assert_close or numpy.testing.assert_allclose message.

    Keys (when present): mismatched_count, total_count, mismatch_fraction, max_abs_diff, max_abs_index,
    max_rel_diff, atol, rtol, kind ("torch" | "numpy"), nan_location_mismatch."""
    res: dict = {}
    m = _PATTERNS[0][2].search(text)
    if m:
        res["mismatched_count"], res["total_count"] = int(m[1]), int(m[2])
        res["mismatch_fraction"] = res["mismatched_count"] / res["total_count"] if res["total_count"] else 0.0
    for name, rx in _FIELDS.items():
        mm = rx.search(text)
        if mm:
            val = next(g for g in mm.groups() if g is not None)
            if name.endswith("_index"):
                res[name] = [int(x) for x in _INT.findall(val)]
            else:
                res[name] = float(val)
    if "not close" in text or "Greatest" in text:
        res["kind"] = "torch"
    elif "Not equal to tolerance" in text or "Max absolute difference" in text:
        res["kind"] = "numpy"
    if "nan location mismatch" in text or "inf location mismatch" in text.lower():
        res["nan_location_mismatch"] = True
    if "Scalars are not close" in text:
        res.setdefault("mismatched_count", 1)
        res.setdefault("total_count", 1)
        res.setdefault("mismatch_fraction", 1.0)
    return res


def _num(v):
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).strip())
    except (TypeError, ValueError):
        return None


def tolerance_reading(facts: dict) -> str:
    """One paragraph on whether the tolerance in a failing assert_close suits its dtype (no tensors needed)."""
    dtype = facts.get("dtype")
    parts = []
    n, total = facts.get("mismatched_count"), facts.get("total_count")
    if isinstance(n, (int, float)) and isinstance(total, (int, float)) and total:
        frac = n / total
        where = "a few elements: look for a pattern (a tail tile, a row) rather than precision" if frac < 0.01 else \
            "most elements: a systematic error (scale, precision, wrong data)" if frac > 0.5 else "a sizeable share"
        parts.append(f"{int(n)} of {int(total)} elements ({frac:.3%}) mismatch: {where}.")
    rtol, atol = _num(facts.get("rtol")), _num(facts.get("atol"))
    rel, ab = _num(facts.get("max_rel_diff")), _num(facts.get("max_abs_diff"))
    if ab is not None and math.isnan(ab) or rel is not None and math.isnan(rel):
        parts.append("The greatest difference is NaN: the output holds NaN where the reference does not "
                     "(overflow, uninitialised memory or a division by zero), not a tolerance question.")
    f = None
    try:
        f = fmt(dtype) if dtype else None
    except NumericsError:
        f = None
    if f is not None:
        rec = recommend_tolerance(f.name)
        parts.append(f"For {f.name}: {rec.torch_default}; {defaults_text(f.name)}. One rounding step of "
                     f"{f.name} is a relative error of {f.unit_roundoff:.3g}.")
        if rtol is not None and rtol < f.unit_roundoff:
            parts.append(f"The rtol in use ({rtol:g}) is below one {f.name} rounding ({f.unit_roundoff:.3g}): "
                         "the test demands more precision than the dtype has; derive the tolerance from the dtype "
                         "(`diagnose numerics --dtype ... --acc ... --k ...`).")
    if rtol is not None and rtol >= 1:
        parts.append(f"rtol={rtol:g} is at least 1: |0 - ref| <= rtol x |ref| for every element, so an all-zeros "
                     "output passes this test; it cannot tell a broken kernel from a right one.")
    if rel is not None and not math.isnan(rel) and rtol:
        ratio = rel / rtol if rtol else math.inf
        if f is not None and rel <= 8 * f.eps:
            parts.append(f"The greatest relative difference ({rel:.3g}) is within a few {f.name} ULPs "
                         f"({rel / f.eps:.2g} eps): expected variation, the tolerance is too tight.")
        elif ratio > 100:
            parts.append(f"The greatest relative difference ({rel:.3g}) is {ratio:.3g}x the rtol: far beyond "
                         "rounding; likely a defect.")
    return " ".join(parts)


def annotate_diagnosis(d) -> None:
    """Add mismatch facts and a tolerance reading to a numerical-mismatch Diagnosis (appends, never replaces)."""
    if getattr(d, "family", None) != FAMILY:
        return
    facts = d.facts if isinstance(d.facts, dict) else {}
    parsed = {}
    for line in ([d.root.text] if d.root else []) + [e.text for e in d.evidence]:
        for k2, v in parse_mismatch_text(line).items():
            parsed.setdefault(k2, v)
    for k2, v in parsed.items():
        facts.setdefault(k2, v)
    for k2 in ("max_abs_diff", "max_rel_diff", "atol", "rtol"):
        if k2 in facts and not isinstance(facts[k2], float):
            v = _num(facts[k2])
            if v is not None:
                facts[k2] = v
    n, total = _num(facts.get("mismatched_count")), _num(facts.get("total_count"))
    if n is not None and total:
        facts.setdefault("mismatch_fraction", n / total)
    d.facts = facts
    text = tolerance_reading(facts)
    if text:
        d.notes.append("numerics: " + text)
