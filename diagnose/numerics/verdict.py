"""The verdict on OUT against REF: the noise floor and the error model first, then the structure above
the floor, the baseline (when given) and the task's own tolerance, all as `findings.Finding`s.

Order of reading: a structural finding (a region, a period, a fit) or a non-finite source makes the
verdict "likely defect" whatever the noise; otherwise a baseline run of the same op in the same
precision decides (FlashAttention's test: the kernel's error within 2x the baseline's); otherwise the
error model does: a defect only when no plausible computation in the claimed dtypes gives an error
this large.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from diagnose.numerics.formats import NumericsError, decode_bits, fmt, ulp
from diagnose.numerics.measures import Floor, Scan, sample_floor, scales, scan
from diagnose.numerics.patterns import FAMILY, finding, fits, nonfinite, pattern, structure, unwritten
from diagnose.numerics.tolerances import (K_MAX, Explanation, Tolerance, default_tolerance, defaults_text, explain,
                                          recommend_tolerance)
from findings import Finding

BASELINE_FACTOR = 2.0
DEFECT, EXPECTED = "likely defect", "expected variation"


@dataclass
class Reading:
    measures: dict
    tolerance: Tolerance
    recommended: Tolerance
    findings: list[Finding]
    verdict: str                  # "likely defect" | "expected variation"
    decided_by: str
    model: Explanation | None = None
    assumed: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "decided_by": self.decided_by, "assumed": self.assumed,
                "findings": [{**x.to_json(), "pattern": pattern(x)} for x in self.findings],
                "error_model": self.model.to_json() if self.model else None, "measures": self.measures,
                "tolerance": vars(self.tolerance), "recommended": vars(self.recommended)}

    @property
    def family(self) -> str:
        return FAMILY

    @property
    def origin(self) -> str:
        for x in self.findings:
            if x.severity == "error" and x.origin:
                return x.origin
        return "numerics"

    @property
    def patterns(self) -> list[str]:
        return [pattern(x) for x in self.findings]


def _shape_of(a):
    return tuple(a.shape) if hasattr(a, "shape") else tuple(np.shape(a))


def _as_input(a):
    """A Loaded stays as it is (memory-mapped); anything else becomes a float64 array."""
    return a if hasattr(a, "chunk") else np.asarray(a, np.float64)


def _at(a, rows, cols, shape2) -> np.ndarray:
    """Values at (rows[i], cols[i]) of the 2-D view, without reading the whole tensor."""
    if hasattr(a, "chunk"):
        raw = a.raw.reshape(shape2)
        part = raw[rows, cols]
        return decode_bits(part, a.dtype) if a.bits else np.asarray(part, np.float64)
    return np.asarray(a, np.float64).reshape(shape2)[rows, cols]


def _transposed(out, ref, shape, f, floor: Floor, sc) -> Finding | None:
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
        return None
    n = shape[0]
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, n, 4096), rng.integers(0, n, 4096)
    keep = i != j
    i, j = i[keep], j[keep]
    o = _at(out, i, j, shape)
    r = _at(ref, i, j, shape)
    rt = _at(ref, j, i, shape)
    dt, d = np.abs(o - rt), np.abs(o - r)
    closer = float(np.mean(dt < d))
    md, mdt = float(np.median(d)), float(np.median(dt))
    if closer >= 0.95 and mdt <= 0.05 * md:
        match_t, match = closer, 1 - closer
        return finding("transposed", "kernel-logic",
                       f"out is closer to ref transposed at {match_t:.1%} of {i.size} sampled positions (median "
                       f"error {mdt:.3g} vs {md:.3g} as stored): rows and columns swapped (wrong strides or a transposed store)",
                       fix="swap the strides of the store (or of the loaded operand)",
                       closer_transposed=round(match_t, 4), median_error_transposed=mdt, median_error=md, sampled=int(i.size))
    return None


def _measures(sc: Scan, floor: Floor, f, given: Tolerance, shape) -> dict:
    m: dict = {"shape": list(shape), "size": sc.size, "dtype": f.name}
    m.update(sc.counts)
    m["abs_max"] = sc.abs_max
    m["abs_max_index"] = ([int(v) for v in np.unravel_index(sc.abs_max_index, shape)]
                          if sc.size and sc.abs_max_index >= 0 and shape else [])
    for key in ("abs_p50", "abs_p90", "abs_p99", "abs_p99.9", "rel_p50", "rel_p99", "ulp_p50", "ulp_p99", "rel_floor"):
        m[key] = floor.percentiles.get(key, 0.0)
    m["percentiles_from"] = floor.sampled
    m["rel_max"] = sc.rel_max
    m["ulp_max"] = sc.ulp_max
    nref = math.sqrt(sc.sums["rr"])
    m["norm_ratio"] = math.sqrt(sc.sums["ee"]) / nref if nref > 0 else (0.0 if sc.sums["ee"] == 0 else math.inf)
    m["ref_rms"] = math.sqrt(sc.sums["rr"] / sc.sums["n"]) if sc.sums["n"] else 0.0
    m["noise_floor"] = {"ulp_median": floor.ulp_median, "sigma_of_scale": floor.sigma,
                        "noise_ratio": floor.noise_ratio}
    m["above_floor"] = sc.hot
    m["rtol"], m["atol"], m["tolerance"] = given.rtol, given.atol, given.source
    m["mismatched"] = sc.mismatched
    m["mismatch_fraction"] = sc.mismatched / sc.size if sc.size else 0.0
    return m


def analyse(out, ref, out_dtype: str = "float32", ref_dtype: str = "float64", acc: str | None = None,
            k: int | None = None, atol: float | None = None, rtol: float | None = None,
            tol_source: str = "given", baseline=None, inp=None) -> Reading:
    """Compare `out` (a kernel's result, values in `out_dtype`) with `ref`: measures, findings, verdict.

    `out`, `ref`, `baseline` (the framework's own op in the same precision) and `inp` (the kernel's
    input, to test whether an identity kernel passes the tolerance) are arrays or `Loaded` tensors
    (memory-mapped .npy files are read a block at a time)."""
    out, ref = _as_input(out), _as_input(ref)
    shape = _shape_of(out)
    if shape != _shape_of(ref):
        rs = _shape_of(ref)
        hint = ""
        if len(shape) == 2 and shape == rs[::-1]:
            hint = " (out has the transposed shape: a transposed result?)"
        elif int(np.prod(shape)) == int(np.prod(rs)):
            hint = " (same number of elements: a view/reshape or stride mix-up?)"
        raise NumericsError(f"shapes differ: out {list(shape)} vs ref {list(rs)}{hint}")
    for label, extra in (("baseline", baseline), ("input", inp)):
        if extra is not None and _shape_of(extra) != shape:
            raise NumericsError(f"{label} has shape {list(_shape_of(extra))}, out has {list(shape)}: they must match")
    baseline = _as_input(baseline) if baseline is not None else None
    inp = _as_input(inp) if inp is not None else None
    f = fmt(out_dtype)
    if acc:
        fmt(acc)
    sc = scales(ref, shape)
    floor = sample_floor(out, ref, shape, f, sc)
    model = explain(floor.noise_ratio, f.name, acc, k, n=max(floor.sampled, 1))
    best = model.explained_by or model.models[-1][0]
    implied = next((ik for m, _, ik in model.models if m == best), None)
    # an implied K beyond the assumed range means the reduction's noise is hidden under the output's
    # rounding: recommend from the rounding alone then
    k_rec = k or (int(2 ** math.ceil(math.log2(implied))) if implied and 1 < implied <= K_MAX else None)
    acc_rec = acc or (("tf32" if best.inputs == "tf32" else best.acc) if (k_rec or best.inputs) else None)
    rec = recommend_tolerance(f.name, acc_rec, k_rec, ref_scale=sc.rms, ref_dtype=ref_dtype)
    assumed = []
    if not acc:
        assumed.append(f"the kernel computes with {' or '.join(m.name for m, _, _ in model.models)} (pin with --acc)")
    if not k:
        assumed.append(f"a reduction of up to K={K_MAX} terms, sequential order (pin with --k)")
    if (atol is None) != (rtol is None):
        given = Tolerance(rtol if rtol is not None else rec.rtol, atol if atol is not None else rec.atol, "given",
                          "given in part; the rest recommended")
    elif atol is not None:
        given = Tolerance(rtol, atol, tol_source, f"{tol_source}: rtol={rtol:g}, atol={atol:g}")
    else:
        given = rec
    review = given is not rec
    s = scan(out, ref, shape, f, sc, floor, given.rtol, given.atol, base=baseline, inp=inp, review=review)
    m = _measures(s, floor, f, given, shape)

    findings: list[Finding] = []
    nf = nonfinite(s, f)
    unexplained = model.explained_by is None
    regions = structure(s)
    if not regions and (unexplained or s.hot > 0.5 * s.size):
        # errors everywhere: the floor itself is raised, so test the global shapes directly
        regions = [x for x in (_transposed(out, ref, shape, f, floor, sc),) if x]
    structural = regions[0] if regions else None
    if nf and structural and nf.facts["inf"] == 0 and pattern(nf) != "overflow" \
            and pattern(structural) in ("tail-tile", "whole-blocks"):
        nf = finding("uninitialised", "kernel-logic",
                     f"{nf.facts['nan']} NaNs fill tile-shaped regions ({pattern(structural)}) where the reference "
                     "is finite: output memory the kernel never wrote (uninitialised; the poison shows)",
                     fix="make sure every output tile is written (grid size, early exits, masks)",
                     **{k2: v for k2, v in nf.facts.items() if k2 != "pattern"}, in_region=pattern(structural))
        findings += [nf] + regions
    elif nf and pattern(nf) in ("nonfinite-spread", "overflow", "uninitialised"):
        findings += [nf] + regions                            # the source first, the regions it fills next
    else:
        findings += regions + [x for x in (nf,) if x]
    if s.hot and not nf:
        unw = unwritten(s)
        if unw:
            findings.append(unw)
    if not findings and (unexplained or s.hot > 0.5 * s.size):
        noise_abs = model.models[-1][1] * sc.rms
        fit = fits(s, MARGIN_NOISE * noise_abs)
        if fit:
            findings.append(fit)
    defect = any(x.severity == "error" for x in findings)
    # the baseline: the framework's own op in the same precision, against the same reference
    if baseline is not None:
        bf = _baseline(s, m, f, sc.rms)
        findings.append(bf)
        if not defect and bf.severity == "error":
            defect = True
    elif not defect and unexplained:
        findings.append(_precision(model, floor, f, m))
        defect = True
    if s.hot_gross and not defect and baseline is None:
        findings.append(finding("outliers", None,
                                f"{s.hot_gross} elements stand far above the noise floor (errors over 1% of their "
                                "scale) with no region, period or fit that explains them: a race or a stray "
                                "index on single elements, or inputs the error model does not fit",
                                severity="warning", fix=f"look at them by hand (the largest at index "
                                                        f"{m['abs_max_index']})", count=s.hot_gross))
    if review:
        findings += _review(s, m, f, given, rec, model, defect, inp is not None)
    if not defect and not any(x.severity == "error" for x in findings):
        findings.append(finding(
            "within-model" if s.mismatched else "within-tolerance", "numerics",
            (f"every element within {given.source} rtol={given.rtol:g}, atol={given.atol:g}: " if not s.mismatched
             else f"{s.mismatched} elements exceed {given.source} rtol={given.rtol:g}, atol={given.atol:g}, but ")
            + f"rounding differences, max {m['ulp_max']:.3g} ULP, median {m['ulp_p50']:.3g} ULP of {f.name}; "
            + _model_words(model), severity="info",
            ulp_max=m["ulp_max"], ulp_p50=m["ulp_p50"], rel_p99=m["rel_p99"], noise_ratio=model.nu,
            effective_bits=_r(model.bits)))
    verdict = DEFECT if defect else EXPECTED
    lead = next((x.title for x in findings if x.severity == "error"), None) or _model_words(model)
    frac = m["mismatch_fraction"]
    decided = (f"{s.mismatched} of {s.size} elements ({frac:.3%}) exceed {given.source} rtol={given.rtol:g}, "
               f"atol={given.atol:g}; max |out-ref| {m['abs_max']:.3g}, max {m['ulp_max']:.3g} ULP of {f.name}; {lead}")
    return Reading(m, given, rec, findings, verdict, decided, model, assumed)


MARGIN_NOISE = 3.0


def _r(x):
    return round(x, 2) if math.isfinite(x) else None


def _model_words(model: Explanation) -> str:
    bits = f"about {model.bits:.1f} bits" if math.isfinite(model.bits) else "exact"
    cons = f" (consistent with {', '.join(model.consistent)})" if model.consistent else ""
    if model.explained_by is not None:
        m = model.explained_by
        ik = next((k for mm, _, k in model.models if mm == m), None)
        kk = f", implied K ~ {ik:.3g}" if ik and 1 < ik <= K_MAX else ""
        return (f"‖out-ref‖/‖ref‖ = {model.nu:.3g}, {bits}{cons}: explained by {m.name} "
                f"({model.k_assumed}{kk})")
    return f"‖out-ref‖/‖ref‖ = {model.nu:.3g}, {bits}{cons}: no plausible computation explains it"


def _precision(model: Explanation, floor: Floor, f, m) -> Finding:
    """Unstructured error larger than any plausible computation in the claimed dtypes gives."""
    best = max(model.models, key=lambda r: r[1])
    grows = floor.abs_big > 4 * floor.abs_small and floor.rel_ratio_big > 0
    bits = model.bits
    cons = ", ".join(model.consistent) or "no named precision"
    common = dict(noise_ratio=model.nu, effective_bits=_r(bits), consistent_with=model.consistent,
                  predicted_max_ratio=best[1], assumed_k=model.k_assumed,
                  models=[{"model": mm.name, "predicted_ratio": p, "implied_k": ik} for mm, p, ik in model.models])
    if grows:
        return finding("grows-with-magnitude", "numerics",
                       f"errors grow with |ref| (median error {floor.abs_big:.3g} of the scale on the largest values "
                       f"vs {floor.abs_small:.3g} on the smallest): precision, not indexing; about {bits:.1f} bits, "
                       f"consistent with {cons}; {f.name} keeps {f.mant + 1}", fix=
                       "find the downcast (a temporary or an input in a narrower type) or claim the dtype it has",
                       why=f"no plausible computation in {f.name} ({best[0].name}, {model.k_assumed}) gives more than "
                           f"{best[1]:.3g}", median_rel=floor.rel_ratio_big, **common)
    return finding("precision-noise", "numerics",
                   f"unstructured errors, ‖out-ref‖/‖ref‖ = {model.nu:.3g} (about {bits:.1f} bits, consistent with "
                   f"{cons}): more than {best[0].name} gives over {model.k_assumed} ({best[1]:.3g})",
                   why="rounding noise larger than the claimed precision gives: accumulation in a narrower type "
                       "than claimed, a longer reduction than assumed, or a tolerance too tight",
                   fix="pass --acc and --k if the kernel really accumulates that way; otherwise find the narrower type",
                   norm_ratio=m["norm_ratio"], **common)


def _baseline(s: Scan, m: dict, f, rms: float) -> Finding:
    kmax, bmax = m["abs_max"], s.base["max"]
    n = s.sums["n"] or 1
    krms, brms = math.sqrt(s.sums["ee"] / n), math.sqrt(s.base["ee"] / n) if math.isfinite(s.base["ee"]) else math.inf
    slack = float(ulp(np.array(rms), f)) if rms > 0 else 0.0
    ok = kmax <= BASELINE_FACTOR * bmax + slack and krms <= BASELINE_FACTOR * brms + slack
    rmax = kmax / bmax if bmax > 0 else (math.inf if kmax > 0 else 1.0)
    rrms = krms / brms if brms > 0 else (math.inf if krms > 0 else 1.0)
    facts = dict(kernel_max_error=kmax, baseline_max_error=bmax, ratio_max=rmax, kernel_rms_error=krms,
                 baseline_rms_error=brms, ratio_rms=rrms, factor=BASELINE_FACTOR)
    words = (f"kernel vs reference: max error {kmax:.3g}, RMS {krms:.3g}; baseline vs reference: max {bmax:.3g}, "
             f"RMS {brms:.3g} (ratio {rmax:.3g}x max, {rrms:.3g}x RMS)")
    if ok:
        return finding("baseline-within", "numerics", f"within {BASELINE_FACTOR:g}x the baseline's own error: "
                       + words, severity="info", **facts)
    return finding("baseline-exceeded", "kernel-logic", f"more than {BASELINE_FACTOR:g}x the baseline's error "
                   "(the framework's op in the same precision): " + words,
                   why="the same op in the same dtypes does better, so the difference is the kernel's, not the precision's",
                   fix="look for a lost precision step (a narrower accumulator, a missing rescale) or a logic error",
                   **facts)


def _review(s: Scan, m: dict, f, given: Tolerance, rec: Tolerance, model: Explanation, defect: bool,
            have_input: bool) -> list[Finding]:
    """Would a broken kernel pass this tolerance? Is it tighter than the dtypes allow?"""
    out = []
    p = s.passes
    loose = []
    if p.get("zeros") == s.size and s.size:
        loose.append("an all-zeros output")
    if p.get("shifted_of") and p["shifted"] == p["shifted_of"]:
        loose.append("the reference shifted by one column")
    if have_input and p.get("input") == s.size:
        loose.append("the kernel's unmodified input")
    if loose:
        out.append(finding("tolerance-too-loose", None,
                           f"rtol={given.rtol:g}, atol={given.atol:g} would pass {', '.join(loose)}: the test cannot "
                           "tell a broken kernel from a right one", severity="warning",
                           why="a tolerance as wide as the values themselves accepts outputs that computed nothing",
                           fix=f"tighten it to what the dtypes need (rtol={rec.rtol:.2g}, atol={rec.atol:.2g}); "
                               + defaults_text(f.name),
                           would_pass=loose, zeros_pass=p.get("zeros"), size=s.size))
    tr, _ = default_tolerance("torch", f.name)
    # too tight: correct elements fail it, or an rtol under one rounding with no atol to carry it (an rtol of
    # 0 beside an atol that covers the values is a choice, not a fragile test)
    tight = (s.mismatched and not defect and given.rtol < rec.rtol) or \
            (given.rtol < f.unit_roundoff and (not given.atol or s.mismatched))
    if tight:
        why = (f"rtol={given.rtol:g} is below one {f.name} rounding ({f.unit_roundoff:.3g})"
               if given.rtol < f.unit_roundoff else
               f"rtol={given.rtol:g} is below what {(model.explained_by or model.models[-1][0]).name} gives "
               f"(rtol {rec.rtol:.2g})")
        out.append(finding("tolerance-too-tight", None,
                           f"the tolerance is too tight for {f.name}: {why}; "
                           f"{s.mismatched} of {s.size} elements fail it", severity="warning",
                           why="a test tighter than the dtype's rounding fails correct kernels",
                           fix=f"use rtol={max(rec.rtol, tr):.2g} or the dtype's default; " + defaults_text(f.name),
                           given_rtol=given.rtol, recommended_rtol=rec.rtol, unit_roundoff=f.unit_roundoff))
    return out
