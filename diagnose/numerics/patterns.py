"""The structure of what stands above the noise floor: which region, which shape, named and located.

Each detector is a pure function of a `Scan` (profiles and block counts of the elements above the
floor); it returns a `findings.Finding` (reader "numerics", family numerical-mismatch) whose facts
hold the region and the numbers, and the share of the above-floor elements it explains.
"""
from __future__ import annotations

import math

import numpy as np

from diagnose.numerics.formats import Format
from diagnose.numerics.measures import BLOCK, Scan
from findings import Evidence, Finding

FAMILY = "numerical-mismatch"
TILES = (8, 16, 32, 64, 128, 256, 512)
EXPLAINS = 0.95          # a region explains the errors when it holds this share of them
FILL = 0.6               # ... and a row/column/block counts as filled at this share (fp8 noise hides some)


def finding(pattern: str, origin: str, title: str, *, severity: str = "error", why: str = "", fix: str = "",
            where: str = "", confidence: float | None = None, **facts) -> Finding:
    """A numerics finding; `pattern` is its id after the `numerics.` prefix."""
    ev = [Evidence(file=where, text=facts.get("region", ""))] if where else []
    return Finding(id=f"numerics.{pattern}", severity=severity, reader="numerics", title=title, origin=origin,
                   family=FAMILY, evidence=ev, why=why, fix=fix, facts={"pattern": pattern, **facts},
                   confidence=confidence)


def pattern(f: Finding) -> str:
    return f.id.split(".", 1)[1] if f.id.startswith("numerics.") else f.id


def _short(idx) -> str:
    idx = [int(i) for i in idx]
    return ", ".join(map(str, idx[:8])) + (f", ... ({len(idx)})" if len(idx) > 8 else "")


def axis_profiles(sc: Scan, counts_rows: np.ndarray, counts_cols: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(count per index, elements per index) along every axis of the original shape."""
    shape = sc.shape or (1,)
    out = []
    lead = shape[:-1]
    per_row = counts_rows.reshape(lead) if lead else counts_rows.reshape(())
    for ax in range(len(shape)):
        n_other = sc.size // shape[ax] if shape[ax] else 0
        if ax == len(shape) - 1:
            cnt = counts_cols
        else:
            other = tuple(i for i in range(len(lead)) if i != ax)
            cnt = per_row.sum(axis=other) if other else per_row
        out.append((np.asarray(cnt, np.int64), n_other))
    return out


def tail_tile(sc: Scan, need: float = EXPLAINS) -> Finding | None:
    """Nearly every above-floor element in a trailing run of indices along one axis: the last partial
    tile when the run starts at a multiple of a power-of-two tile it is shorter than, else a tail region."""
    for axis, (cnt, per) in enumerate(axis_profiles(sc, sc.hot_rows, sc.hot_cols)):
        n = cnt.size
        if per == 0 or n < 2 or not cnt.any():
            continue
        fill = cnt / per
        low = np.nonzero(fill < 0.5)[0]
        start = int(low.max()) + 1 if low.size else 0
        if start == 0 or start == n:
            continue
        inside = int(cnt[start:].sum())
        if inside < need * sc.hot or n - start > 0.5 * n:
            continue
        tiles = [t for t in TILES if start % t == 0 and n - start < t and n % t != 0]
        fill_in = round(float(inside / (per * (n - start))), 4)
        common = dict(axis=axis, start=start, size=n, remainder=n - start, region=f"axis {axis} [{start}:{n}]",
                      bad_fraction_in_tail=fill_in, above_floor_outside=int(sc.hot - inside),
                      explains=round(inside / sc.hot, 4))
        if tiles:
            t = tiles[-1]      # the largest tile consistent with the boundary; smaller ones fit too
            return finding(
                "tail-tile", "kernel-logic",
                f"errors only in the last partial tile along axis {axis}: indices {start}..{n - 1} of {n} "
                f"(tile {t}: {start // t} full tiles, then {n - start} left over); the boundary mask or "
                "the tail tile's launch is missing",
                why="a size that is not a multiple of the tile leaves a partial tile, which the kernel did "
                    "not compute or store correctly",
                fix=f"mask the loads/stores with offs < {n} and launch cdiv({n}, BLOCK) programs along axis {axis}",
                tile=t, tiles_consistent=tiles, **common)
        if n - start < 2:
            continue                  # one last row/column: whole_lines names it
        return finding(
            "tail-region", "kernel-logic",
            f"errors only in the last {n - start} indices along axis {axis}: {start}..{n - 1} of {n}, the rest "
            "right; a loop bound or a launch that stops short of the end",
            why="a region at the end of an axis, not a rounding pattern",
            fix=f"check the loop bound / grid along axis {axis} covers all {n} indices (cdiv, not floor division)",
            **common)
    return None


def whole_lines(sc: Scan, need: float = EXPLAINS) -> Finding | None:
    if len(sc.shape) < 2:
        return None
    profs = axis_profiles(sc, sc.hot_rows, sc.hot_cols)
    for axis, word in ((len(sc.shape) - 2, "rows"), (len(sc.shape) - 1, "columns")):
        cnt, per = profs[axis]
        fill = cnt / max(per, 1)
        full = np.nonzero(fill >= FILL)[0]
        if not full.size or full.size >= 0.5 * cnt.size:
            continue
        inside = int(cnt[full].sum())
        if inside < need * sc.hot:
            continue
        return finding(
            f"whole-{word}", "kernel-logic",
            f"errors fill whole {word}: {full.size} of {cnt.size} {word} (indices {_short(full)}); an indexing "
            "error, a row/column the kernel skipped, or a race at a tile boundary",
            fix=f"check the {word[:-1]} index arithmetic and the program id mapping for the listed {word}",
            axis=axis, count=int(full.size), of=int(cnt.size), indices=[int(i) for i in full[:32]],
            region=f"{word} {_short(full)}", min_fill=round(float(fill[full].min()), 4),
            explains=round(inside / sc.hot, 4))
    return None


def blocks(sc: Scan, need: float = EXPLAINS) -> Finding | None:
    rows, cols = sc.shape2
    if len(sc.shape) < 2 or sc.hot_blocks is None:
        return None
    b8 = sc.hot_blocks
    # elements per block are an outer product of rows-per-block and cols-per-block (edge blocks partial)
    er = np.minimum(BLOCK, rows - np.arange(b8.shape[0]) * BLOCK)
    ec = np.minimum(BLOCK, cols - np.arange(b8.shape[1]) * BLOCK)
    for t in reversed(TILES):
        if rows < 2 * t or cols < 2 * t:
            continue
        g = t // BLOCK
        gr, gc = -(-b8.shape[0] // g), -(-b8.shape[1] // g)
        if g == 1:
            cnt = b8
        else:
            pc = np.zeros((gr * g, gc * g), b8.dtype)
            pc[: b8.shape[0], : b8.shape[1]] = b8
            cnt = pc.reshape(gr, g, gc, g).sum(axis=(1, 3))
            del pc
        area = np.outer(np.bincount(np.arange(er.size) // g, er, minlength=gr),
                        np.bincount(np.arange(ec.size) // g, ec, minlength=gc))
        full = (cnt >= FILL * area) & (area > 0) & (cnt > 0)
        if not full.any() or full.sum() >= 0.5 * full.size:
            continue
        inside = int(cnt[full].sum())
        if inside < need * sc.hot:
            continue
        where = [[int(i), int(j)] for i, j in zip(*np.nonzero(full))]
        r0, c0 = where[0]
        return finding(
            "whole-blocks", "kernel-logic",
            f"errors fill whole {t}x{t} blocks: {len(where)} of {full.size} blocks (block row, col: {where[:4]}"
            f"{' ...' if len(where) > 4 else ''}); a tile computed from the wrong data, never launched, or a "
            "race at a tile boundary",
            fix="check the program-id to tile mapping (grid size, swizzle) and the tile's base offsets",
            block=t, count=len(where), of=int(full.size), blocks=where[:16],
            region=f"rows {r0 * t}..{min(rows, r0 * t + t) - 1}, cols {c0 * t}..{min(cols, c0 * t + t) - 1}"
                   + (f" and {len(where) - 1} more blocks" if len(where) > 1 else ""),
            explains=round(inside / sc.hot, 4))
    return None


def periodic(sc: Scan, need: float = EXPLAINS) -> Finding | None:
    for axis, (cnt, per) in enumerate(axis_profiles(sc, sc.hot_rows, sc.hot_cols)):
        n = cnt.size
        fill = cnt / max(per, 1)
        p = 2
        while p <= n // 4:                      # at least four repeats: one bad line is not a period
            full = (n // p) * p
            res = fill[:full].reshape(-1, p).mean(axis=0)
            bad, good = res >= 0.4, res <= 0.02
            if bad.any() and good.any() and (bad | good).all():
                resid = np.nonzero(bad)[0]
                return finding(
                    "periodic", "kernel-logic",
                    f"errors repeat along axis {axis} with period {p} (a power of two): residues {_short(resid)} "
                    f"mod {p} are wrong, the rest right; a wrong stride or block offset",
                    fix=f"check the offsets computed inside each {p}-wide tile along axis {axis} (a reused or "
                        "missing offset term)",
                    axis=axis, period=p, bad_residues=[int(r) for r in resid[:64]],
                    region=f"axis {axis}, index mod {p} in {{{_short(resid)}}}",
                    bad_fraction_on_residues=round(float(res[bad].mean()), 4),
                    bad_fraction_elsewhere=round(float(res[good].mean()), 4), explains=1.0)
                # (a period is read from the whole profile: it explains all or nothing)
            p *= 2
    return None


def nonfinite(sc: Scan, f: Format) -> Finding | None:
    """NaN/Inf in the output where the reference is finite: where they come from."""
    n = sc.src
    if not n:
        return None
    nan, inf = sc.src_nan, n - sc.src_nan
    facts = dict(nonfinite_where_ref_finite=n, nan=nan, inf=inf, ref_beyond_dtype_max=sc.src_beyond_max,
                 dtype_max=f.max)
    if sc.src_beyond_max >= 0.5 * n:
        return finding("overflow", "numerics",
                       f"{n} non-finite outputs where the reference exceeds the {f.name} maximum ({f.max:g}): "
                       "overflow", fix="scale down, subtract the max before exp, or accumulate/output in a wider type",
                       **facts)
    rows, cols = sc.shape2
    if len(sc.shape) >= 2:
        for word, cnt, per in (("rows", sc.src_rows, cols), ("columns", sc.src_cols, rows)):
            full = np.nonzero(cnt >= per)[0]
            if full.size and cnt[full].sum() >= 0.9 * n and full.size < cnt.size:
                return finding(
                    "nonfinite-spread", "numerics" if inf else "kernel-logic",
                    f"NaN/Inf fill {full.size} whole {word} ({_short(full)}): spreading from a few sources "
                    "through a reduction (an Inf/NaN input, a division by zero, an overflow in that row's "
                    "max/sum, or uninitialised memory read there)",
                    fix=f"find the first non-finite value feeding {word} {_short(full[:3])} (guard the max/sum "
                        "of fully masked rows)", sources=int(full.size), region=f"{word} {_short(full)}", **facts)
    r_hit = np.nonzero(sc.src_rows)[0]
    c_hit = np.nonzero(sc.src_cols)[0]
    box = [[int(r_hit.min()), int(r_hit.max()) + 1], [int(c_hit.min()), int(c_hit.max()) + 1]]
    solid = (box[0][1] - box[0][0]) * (box[1][1] - box[1][0]) == n and n >= 2
    if nan and not inf and solid:
        return finding("uninitialised", "kernel-logic",
                       f"{nan} NaNs form one solid block where the reference is finite (rows {box[0][0]}..{box[0][1] - 1}, "
                       f"cols {box[1][0]}..{box[1][1] - 1}): an output region left uninitialised (its poison shows)",
                       fix="make sure every output tile is written (grid size, early exits, masks)",
                       box=box, region=f"rows {box[0][0]}..{box[0][1] - 1}, cols {box[1][0]}..{box[1][1] - 1}", **facts)
    return finding("nonfinite", "numerics" if inf else "kernel-logic",
                   f"{n} scattered non-finite outputs ({nan} NaN, {inf} Inf) where the reference is finite: "
                   "division by zero, log/sqrt of a negative, overflow, or uninitialised memory",
                   fix="check divisions, logs and square roots for zero/negative arguments", box=box, **facts)


def unwritten(sc: Scan) -> Finding | None:
    """Above-floor elements that hold exactly 0 (or one constant): memory the kernel never wrote."""
    if sc.hot < 2 or sc.hot_finite < 0.9 * sc.hot:
        return None
    if sc.hot_zero >= 0.95 * sc.hot:
        return finding("zeros", "kernel-logic",
                       f"{sc.hot_zero} wrong elements are exactly 0 where the reference is not: memory the "
                       "kernel never wrote (a zero-initialised output) or a fully masked store",
                       fix="check the store mask and that every program writes its tile",
                       exact_zeros=sc.hot_zero, wrong=sc.hot)
    if sc.hot_value_min == sc.hot_value_max and sc.hot_finite >= 4:
        return finding("constant-fill", "kernel-logic",
                       f"every wrong element holds the same value {sc.hot_value_min:g}: memory the kernel never wrote",
                       fix="check that every program writes its tile", value=sc.hot_value_min, wrong=sc.hot)
    return None


_NAMED = [(math.log2(math.e), "log2(e): exp vs exp2"), (math.log(2), "ln(2): exp2 vs exp"), (-1.0, "sign flipped")]


def name_factor(s: float, tol: float = 1e-3) -> str:
    """A name for a factor within relative `tol` of a common one (log2(e), 1/sqrt(d), 2^k, -1)."""
    for v, name in _NAMED:
        if abs(s - v) <= tol * abs(v):
            return name
    if s > 0:
        lg = math.log2(s)
        if abs(lg - round(lg)) < tol / math.log(2):
            k = round(lg)
            extra = f" = 1/sqrt({2 ** (-2 * k)})" if k <= -2 and -2 * k <= 20 else \
                f" = sqrt({2 ** (2 * k)})" if 2 <= k and 2 * k <= 20 else ""
            return f"2^{k}{extra}"
        inv2 = (1 / s) ** 2
        if abs(inv2 - round(inv2)) < 2 * tol * inv2 and round(inv2) > 1:
            return f"1/sqrt({round(inv2)})"
        sq = s * s
        if abs(sq - round(sq)) < 2 * tol * sq and round(sq) > 1:
            return f"sqrt({round(sq)})"
    return ""


def fits(sc: Scan, noise_rms: float) -> Finding | None:
    """The whole output off by a constant factor, a constant offset, or an offset per column.

    A fit counts when what it leaves is at the level of rounding noise (`noise_rms`, absolute) and a
    tenth of the error it started from."""
    s = sc.sums
    n = s["n"]
    if n < 4 or s["ee"] <= 0:
        return None
    err_rms = math.sqrt(s["ee"] / n)
    ok = lambda resid: resid <= max(3 * noise_rms, 0.1 * err_rms) and resid <= 0.3 * err_rms  # noqa: E731
    if s["rr"] > 0:
        k = s["or"] / s["rr"]
        resid = math.sqrt(max(s["oo"] - 2 * k * s["or"] + k * k * s["rr"], 0.0) / n)
        if ok(resid):
            # how precisely the factor is known: the residual against the reference's size
            tol = min(0.02, max(1e-3, 3 * resid / math.sqrt(s["rr"] / n)))
            nm = name_factor(k, tol)
            return finding("constant-factor", "kernel-logic",
                           f"out = {k:.6g} x ref{f' ({nm})' if nm else ''} everywhere: a wrong or missing scale "
                           "(softmax scale, dequantisation factor, exp vs exp2)",
                           fix="apply the missing factor (or remove the extra one)",
                           factor=k, factor_name=nm, residual_rms=resid, error_rms=err_rms)
    mean = s["e"] / n
    resid = math.sqrt(max(s["ee"] / n - mean * mean, 0.0))
    if ok(resid):
        return finding("constant-offset", "kernel-logic",
                       f"out = ref {'+' if mean >= 0 else '-'} {abs(mean):.6g} everywhere: a missing or extra bias/offset",
                       fix="add the missing bias (or remove the one added twice)", offset=mean,
                       residual_rms=resid, error_rms=err_rms)
    if len(sc.shape) >= 2 and sc.col_fin is not None and sc.col_fin.min() > 1:
        colmean = sc.col_err_sum / sc.col_fin
        resid = math.sqrt(max(s["ee"] - float((sc.col_fin * colmean ** 2).sum()), 0.0) / n)
        if ok(resid):
            return finding("column-offset", "kernel-logic",
                           "out - ref is the same down every column (an offset per column): a bias vector "
                           "missing or added twice", fix="check the bias add (broadcast along the right axis, once)",
                           offset_rms=float(np.sqrt(np.mean(colmean ** 2))), residual_rms=resid, error_rms=err_rms)
    return None


DETECTORS = (tail_tile, periodic, whole_lines, blocks)


def _cover(f: Finding, sc: Scan) -> np.ndarray:
    """The 8x8 blocks of the 2-D view a region finding covers (all of them when it has no 2-D place)."""
    gr, gc = sc.hot_blocks.shape
    m = np.zeros((gr, gc), bool)
    nd, ax, p = len(sc.shape), f.facts.get("axis"), pattern(f)
    if p in ("tail-tile", "tail-region") and ax == nd - 1:
        m[:, f.facts["start"] // BLOCK:] = True
    elif p in ("tail-tile", "tail-region") and ax == nd - 2 == 0:
        m[f.facts["start"] // BLOCK:, :] = True
    elif p == "whole-rows" and nd == 2:
        m[np.unique(np.asarray(f.facts["indices"]) // BLOCK), :] = True
    elif p == "whole-columns":
        m[:, np.unique(np.asarray(f.facts["indices"]) // BLOCK)] = True
    elif p == "whole-blocks":
        g = f.facts["block"] // BLOCK
        for i, j in f.facts["blocks"]:
            m[i * g:(i + 1) * g, j * g:(j + 1) * g] = True
    else:
        m[:] = True
    return m


def structure(sc: Scan) -> list[Finding]:
    """The regions above the floor. One when a single region holds them (the usual bug); else the
    regions that each hold a fifth or more, chosen greedily by what they add to the 8x8 blocks already
    covered (largest first) until together they hold 95% of them (two bugs at once: a tail tile and
    a bad row)."""
    if not sc.hot:
        return []
    for det in DETECTORS:
        f = det(sc)
        if f:
            return [f]
    cands = [f for f in (det(sc, need=0.2) for det in DETECTORS if det is not periodic) if f]
    covers = [_cover(f, sc) for f in cands]
    covered = np.zeros(sc.hot_blocks.shape, bool)
    out = []
    while cands and len(out) < 3:
        gains = [int(sc.hot_blocks[c & ~covered].sum()) for c in covers]
        i = int(np.argmax(gains))
        if gains[i] < 0.05 * sc.hot:
            break
        out.append(cands.pop(i))
        covered |= covers.pop(i)
        if sc.hot_blocks[covered].sum() >= EXPLAINS * sc.hot:
            return out
    return []
