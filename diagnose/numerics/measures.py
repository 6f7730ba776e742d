"""One chunked, vectorised reading of OUT against REF (and BASE / INPUT when given): every measure,
the rounding-noise floor and the map of what stands above it, in memory bounded by the chunk size.

Three steps, each a function of arrays (memory maps are read a block of rows at a time):

1. `scales`: per-row and per-column RMS of the reference on a 2-D view (leading axes folded into rows),
   so an element's expected reduction noise is measured against its own row/column scale.
2. `sample_floor`: on evenly spaced rows (all of them for small tensors) the error distribution gives
   the percentiles shown to the reviewer and a robust noise floor from lower quartiles (they hold
   while up to 3/4 of the elements are wrong): the error in ULPs of the output format (the rounding
   part) and the error over the element's scale (the reduction part), each
   turned into a threshold far above what noise reaches.
3. `scan`: one pass over every element: exact counts, maxima and sums, the mismatch count at the
   tolerance, and the elements above the floor (the "hot" ones) summed into per-axis profiles,
   8x8 block counts, a bounding box, and the values they hold.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from diagnose.numerics.formats import Format, ulp

CHUNK_ELEMS = 1 << 21           # elements per block of rows (16 MiB of float64 per temporary)
SAMPLE_ELEMS = 1 << 20          # elements the floor and the percentiles are estimated from
BLOCK = 8                       # the finest block size counted; larger ones are sums of these
K_SIGMA = 10.0                  # an element is "hot" when its error is this many noise widths out
K_ULP = 6.0                     # ... and this many times the median rounding error (at least 1 ULP)


def view2d(shape) -> tuple[int, int]:
    """(rows, cols) of the 2-D view: leading axes folded into rows."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, int(shape[0])
    return int(np.prod(shape[:-1])), int(shape[-1])


def _rows(arr, shape2, r0, r1, c0=0, c1=None) -> np.ndarray:
    """float64 block [r0:r1, c0:c1] of the 2-D view of `arr` (a Loaded or an ndarray)."""
    rows, cols = shape2
    c1 = cols if c1 is None else c1
    if hasattr(arr, "rows"):
        return arr.rows(r0, r1, cols, c0, c1)
    a = np.asarray(arr).reshape(rows, cols)
    return np.asarray(a[r0:r1, c0:c1], dtype=np.float64)


def _blocks(shape2, align: int = BLOCK):
    """(r0, r1, c0, c1) blocks of about CHUNK_ELEMS elements covering the 2-D view, rows aligned to
    `align` (the 8x8 block counts never straddle two blocks); rows wider than a block are cut too."""
    rows, cols = shape2
    if cols * min(rows, align) <= CHUNK_ELEMS:
        step = max(align, (CHUNK_ELEMS // max(cols, 1)) // align * align) if rows > align else rows
        for r0 in range(0, rows, max(step, 1)):
            yield r0, min(rows, r0 + step), 0, cols
        return
    width = max(align, (CHUNK_ELEMS // min(rows, align)) // align * align)
    for r0 in range(0, rows, align):
        for c0 in range(0, cols, width):
            yield r0, min(rows, r0 + align), c0, min(cols, c0 + width)


@dataclass
class Scales:
    rms: float                      # RMS of the finite reference values
    row: np.ndarray | None          # per-row RMS (None: not used)
    col: np.ndarray | None
    max_abs: float

    def of(self, r0: int, r1: int, c0: int = 0, c1: int | None = None) -> np.ndarray | float:
        """Each element's scale, rows r0:r1: row RMS x col RMS / RMS (a rank-one model of |A| |B|),
        never below 5% of the global RMS (rows the reference leaves near zero)."""
        g = self.rms
        if g <= 0:
            return 0.0
        s = np.full((r1 - r0, 1), g) if self.row is None else self.row[r0:r1, None].copy()
        if self.col is not None:
            s = s * (self.col[None, c0:c1] / g)
        return np.maximum(s, 0.05 * g)


def scales(ref, shape) -> Scales:
    shape2 = view2d(shape)
    rows, cols = shape2
    rsq = np.zeros(rows)
    csq = np.zeros(cols)
    rn = np.zeros(rows)
    cn = np.zeros(cols)
    mx = 0.0
    for r0, r1, c0, c1 in _blocks(shape2):
        r = _rows(ref, shape2, r0, r1, c0, c1)
        fin = np.isfinite(r)
        r = np.where(fin, r, 0.0)
        sq = r * r
        rsq[r0:r1] += sq.sum(axis=1)
        csq[c0:c1] += sq.sum(axis=0)
        rn[r0:r1] += fin.sum(axis=1)
        cn[c0:c1] += fin.sum(axis=0)
        if r.size:
            mx = max(mx, float(np.abs(r).max()))
    n = rn.sum()
    g = float(math.sqrt(rsq.sum() / n)) if n else 0.0
    row = np.sqrt(np.divide(rsq, rn, out=np.zeros(rows), where=rn > 0)) if cols >= 16 and rows > 1 else None
    col = np.sqrt(np.divide(csq, cn, out=np.zeros(cols), where=cn > 0)) if rows >= 16 and cols > 1 else None
    return Scales(g, row, col, mx)


@dataclass
class Floor:
    """The rounding-noise floor, estimated robustly (medians) from a sample of the elements."""
    ulp_median: float           # typical |out-ref| in ULPs of the output format at ref (2 x lower quartile)
    sigma: float                # robust width of the error, in units of the element's scale
    noise_ratio: float          # ‖out-ref‖/‖ref‖ over the sampled elements below the threshold
    rel_ratio_big: float        # median |out-ref|/|ref| where |ref| >= its scale (error that follows |ref|)
    abs_small: float            # median |out-ref|/scale where |ref| <= scale/4 (error that does not)
    abs_big: float              # median |out-ref|/scale where |ref| >= scale
    sampled: int
    percentiles: dict = field(default_factory=dict)

    def threshold(self, r: np.ndarray, s, f: Format) -> np.ndarray:
        """Per-element error above which an element stands out of the noise (the reduction part never
        below 1/16 of a rounding of the format, so an exact output does not make every bit hot)."""
        k = max(1.0, K_ULP * self.ulp_median)
        return k * ulp(r, f) + K_SIGMA * max(self.sigma, 2.0 ** -(f.mant + 1) / 16) * s


def sample_floor(out, ref, shape, f: Format, sc: Scales) -> Floor:
    shape2 = view2d(shape)
    rows, cols = shape2
    if rows * cols <= SAMPLE_ELEMS:
        units = [(0, rows, 0, cols)]
    elif cols <= SAMPLE_ELEMS // 64:                       # evenly spaced whole rows
        want = max(1, SAMPLE_ELEMS // cols)
        units = [(int(i), int(i) + 1, 0, cols) for i in np.unique(np.linspace(0, rows - 1, want).astype(np.int64))]
    else:                                                  # rows too wide: evenly spaced windows
        win = 4096
        n_rows = min(rows, 64)
        per_row = max(1, SAMPLE_ELEMS // win // n_rows)
        units = [(int(i), int(i) + 1, int(c), int(min(cols, c + win)))
                 for i in np.unique(np.linspace(0, rows - 1, n_rows).astype(np.int64))
                 for c in np.unique(np.linspace(0, max(cols - win, 0), per_row).astype(np.int64))]
    o_parts, r_parts, s_parts = [], [], []
    for r0, r1, c0, c1 in units:
        o, r = _rows(out, shape2, r0, r1, c0, c1), _rows(ref, shape2, r0, r1, c0, c1)
        s = np.broadcast_to(sc.of(r0, r1, c0, c1), r.shape)
        fin = np.isfinite(o) & np.isfinite(r)
        o_parts.append(o[fin])
        r_parts.append(r[fin])
        s_parts.append(s[fin])
    o, r, s = np.concatenate(o_parts), np.concatenate(r_parts), np.concatenate(s_parts)
    d = np.abs(o - r)
    if not d.size:
        return Floor(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, {})
    u = ulp(r, f)
    ulps = d / u
    ar = np.abs(r)
    beyond = d / np.where(s > 0, s, 1.0)
    # lower quartiles, not medians: they hold while up to 3/4 of the elements are wrong. For rounding
    # errors (uniform in ULPs) twice the quartile is the median; for Gaussian noise the quartile of
    # |x| is 0.3186 sigma. Where a quarter or more of the errors are exactly 0 (both sides rounded
    # alike) the lowest non-zero of the quartile, median and upper quartile is used instead.
    def level(a, scale):
        for q, k in zip(np.percentile(a, (25, 50, 75)), scale):
            if q > 0:
                return float(q) * k
        return 0.0

    ulp_med = level(ulps, (2.0, 1.0, 2.0 / 3.0))
    sigma = level(beyond, (1 / 0.3186, 1 / 0.6745, 1 / 1.1503))
    floor = Floor(ulp_med, sigma, 0.0, 0.0, 0.0, 0.0, int(d.size))
    thr = floor.threshold(r, s, f)
    quiet = d <= thr
    nq = float(np.linalg.norm(r[quiet]))
    floor.noise_ratio = float(np.linalg.norm(d[quiet]) / nq) if nq > 0 else 0.0
    big = quiet & (ar >= s)
    small = quiet & (ar <= 0.25 * s)
    sd = d / np.where(s > 0, s, 1.0)
    floor.rel_ratio_big = float(np.median(d[big] / ar[big])) if big.sum() >= 16 else 0.0
    floor.abs_small = float(np.median(sd[small])) if small.sum() >= 16 else 0.0
    floor.abs_big = float(np.median(sd[big])) if big.sum() >= 16 else 0.0
    rel_floor = max(f.tiny, f.eps * sc.max_abs)
    rel = d / np.maximum(ar, rel_floor)
    p = {}
    for name, a, ps in (("abs", d, (50, 90, 99, 99.9)), ("rel", rel, (50, 99)), ("ulp", ulps, (50, 99))):
        for q, v in zip(ps, np.percentile(a, ps)):
            p[f"{name}_p{q:g}"] = float(v)
    p["rel_floor"] = rel_floor
    floor.percentiles = p
    return floor


@dataclass
class Scan:
    """What one pass over every element found (plain numbers and small arrays)."""
    shape: tuple
    shape2: tuple
    size: int = 0
    counts: dict = field(default_factory=dict)
    abs_max: float = 0.0
    abs_max_index: int = -1
    rel_max: float = 0.0
    ulp_max: float = 0.0
    sums: dict = field(default_factory=dict)
    mismatched: int = 0
    hot: int = 0
    hot_rows: np.ndarray | None = None          # hot count per row of the 2-D view
    hot_cols: np.ndarray | None = None
    hot_blocks: np.ndarray | None = None        # hot count per 8x8 block of the 2-D view
    hot_gross: int = 0                          # hot elements whose error is also over 1% of their scale
    hot_zero: int = 0                           # hot elements where out == 0 and ref != 0
    hot_value_min: float = math.inf
    hot_value_max: float = -math.inf
    hot_finite: int = 0
    src: int = 0                                # out non-finite where ref is finite
    src_nan: int = 0
    src_beyond_max: int = 0
    src_rows: np.ndarray | None = None
    src_cols: np.ndarray | None = None
    col_err_sum: np.ndarray | None = None
    col_fin: np.ndarray | None = None
    base: dict = field(default_factory=dict)
    passes: dict = field(default_factory=dict)  # would zeros / a shifted output / the input pass the tolerance


def scan(out, ref, shape, f: Format, sc: Scales, floor: Floor, rtol: float, atol: float,
         base=None, inp=None, review: bool = False) -> Scan:
    shape2 = view2d(shape)
    rows, cols = shape2
    res = Scan(tuple(shape), shape2, size=rows * cols)
    c = {k: 0 for k in ("out_nan", "out_posinf", "out_neginf", "ref_nan", "ref_posinf", "ref_neginf",
                        "nonfinite_disagree", "nonfinite_out_only", "nonfinite_ref_only")}
    s = {k: 0.0 for k in ("or", "rr", "oo", "e", "ee", "n")}
    res.hot_rows = np.zeros(rows, np.int64)
    res.hot_cols = np.zeros(cols, np.int64)
    gb_r, gb_c = -(-rows // BLOCK), -(-cols // BLOCK)
    res.hot_blocks = np.zeros((gb_r, gb_c), np.int32)       # at most 64 per block
    res.src_rows = np.zeros(rows, np.int64)
    res.src_cols = np.zeros(cols, np.int64)
    res.col_err_sum = np.zeros(cols)
    res.col_fin = np.zeros(cols, np.int64)
    bs = {"ee": 0.0, "max": 0.0} if base is not None else {}
    passes = {"zeros": 0, "shifted": 0, "shifted_of": 0, "input": 0} if review else {}
    spacing_lo = 2.0 ** (f.emin - f.mant)
    for r0, r1, c0, c1 in _blocks(shape2):
        o = _rows(out, shape2, r0, r1, c0, c1)
        r = _rows(ref, shape2, r0, r1, c0, c1)
        fo, fr = np.isfinite(o), np.isfinite(r)
        fin = fo & fr
        allfin = bool(fin.all())
        if not allfin:
            for lab, a in (("out", o), ("ref", r)):
                c[f"{lab}_nan"] += int(np.isnan(a).sum())
                c[f"{lab}_posinf"] += int(np.isposinf(a).sum())
                c[f"{lab}_neginf"] += int(np.isneginf(a).sum())
            same = (np.isnan(o) & np.isnan(r)) | (np.isinf(o) & (o == r))
            c["nonfinite_disagree"] += int((~fin & ~same).sum())
            srcm = ~fo & fr
            c["nonfinite_out_only"] += int(srcm.sum())
            c["nonfinite_ref_only"] += int((fo & ~fr).sum())
            o0 = np.where(fin, o, 0.0)
            r0v = np.where(fin, r, 0.0)
        else:
            srcm = None
            o0, r0v = o, r
        e = o0 - r0v
        ae = np.abs(e)
        ar = np.abs(r0v)
        # exact maxima
        if ae.size:
            i = int(np.argmax(ae))
            if ae.flat[i] > res.abs_max or res.abs_max_index < 0:
                ri, ci = divmod(i, c1 - c0)
                res.abs_max, res.abs_max_index = float(ae.flat[i]), (r0 + ri) * cols + c0 + ci
            rel = ae / np.maximum(ar, floor.percentiles.get("rel_floor", f.tiny))
            res.rel_max = max(res.rel_max, float(rel.max()))
            # the spacing of f at |ref|: |ref| * 2^-mant is within a factor 2 of it; exact where it matters
            approx = ae / np.maximum(ar * 2.0 ** -f.mant, spacing_lo)
            top = approx >= 0.5 * float(approx.max())
            if top.any():
                res.ulp_max = max(res.ulp_max, float((ae[top] / ulp(r0v[top], f)).max()))
        # sums for the fits
        s["or"] += float(np.vdot(o0, r0v))
        s["rr"] += float(np.vdot(r0v, r0v))
        s["oo"] += float(np.vdot(o0, o0))
        s["e"] += float(e.sum())
        s["ee"] += float(np.vdot(e, e))
        s["n"] += float(fin.sum()) if not allfin else float(fin.size)
        res.col_err_sum[c0:c1] += e.sum(axis=0)
        res.col_fin[c0:c1] += fin.sum(axis=0) if not allfin else (r1 - r0)
        # mismatches at the tolerance (assert_close's rule; equal NaNs and equal infinities agree)
        bound = atol + rtol * ar
        close = ae <= bound
        if not allfin:
            close &= fin
            close |= (np.isnan(o) & np.isnan(r)) | (np.isinf(o) & (o == r))
        res.mismatched += int(close.size - np.count_nonzero(close))
        # above the noise floor
        sc_ = sc.of(r0, r1, c0, c1)
        hot = ae > floor.threshold(r0v, sc_, f)
        # an exact 0 where the reference is clearly not (beyond rounding to zero, and 1% of its scale)
        # is unwritten memory or a masked store whatever the noise
        hot |= (o0 == 0) & (ar > np.maximum(0.01 * sc_, 2 * f.min_subnormal))
        if hot.any():
            res.hot_gross += int(np.count_nonzero(hot & (ae > 0.01 * np.broadcast_to(sc_, ae.shape))))
        if not allfin:
            hot &= fin
            hot |= ~fin & ~((np.isnan(o) & np.isnan(r)) | (np.isinf(o) & (o == r)))
        nh = int(np.count_nonzero(hot))
        if nh:
            res.hot += nh
            res.hot_rows[r0:r1] += hot.sum(axis=1)
            res.hot_cols[c0:c1] += hot.sum(axis=0)
            nbr, nbc = -(-(r1 - r0) // BLOCK), -(-(c1 - c0) // BLOCK)
            pad = np.zeros((nbr * BLOCK, nbc * BLOCK), bool)
            pad[: r1 - r0, : c1 - c0] = hot
            b0, bc0 = r0 // BLOCK, c0 // BLOCK
            res.hot_blocks[b0: b0 + nbr, bc0: bc0 + nbc] += pad.reshape(nbr, BLOCK, nbc, BLOCK).sum(axis=(1, 3))
            hv = o[hot]
            hr = r[hot]
            res.hot_zero += int(((hv == 0) & (hr != 0)).sum())
            hf = hv[np.isfinite(hv)]
            if hf.size:
                res.hot_finite += int(hf.size)
                res.hot_value_min = min(res.hot_value_min, float(hf.min()))
                res.hot_value_max = max(res.hot_value_max, float(hf.max()))
        if srcm is not None and srcm.any():
            res.src += int(srcm.sum())
            res.src_nan += int((np.isnan(o) & srcm).sum())
            res.src_beyond_max += int((np.abs(r[srcm]) > f.max).sum())
            res.src_rows[r0:r1] += srcm.sum(axis=1)
            res.src_cols[c0:c1] += srcm.sum(axis=0)
        if base is not None:
            b = _rows(base, shape2, r0, r1, c0, c1)
            eb = np.where(np.isfinite(b) & fr, b - r0v, np.where(fr, np.inf, 0.0))
            bs["ee"] += float(np.vdot(eb, eb)) if np.isfinite(eb).all() else math.inf
            bs["max"] = max(bs["max"], float(np.abs(eb).max()) if eb.size else 0.0)
        if review:
            passes["zeros"] += int(np.count_nonzero(ar <= bound))
            if c1 - c0 > 1:
                sh = np.abs(r0v[:, :-1] - r0v[:, 1:]) <= atol + rtol * ar[:, 1:]
                passes["shifted"] += int(np.count_nonzero(sh))
                passes["shifted_of"] += int(sh.size)
            if inp is not None:
                x = _rows(inp, shape2, r0, r1, c0, c1)
                passes["input"] += int(np.count_nonzero(np.abs(x - r0v) <= bound))
    res.counts = c
    res.sums = s
    res.base = bs
    res.passes = passes
    return res
