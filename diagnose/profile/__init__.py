"""`diagnose profile`: profiler exports (Nsight Compute CSV / .ncu-rep, Nsight Systems SQLite / stats CSV,
torch.profiler and perfetto Chrome traces) turned into verdicts with their numbers, as `findings.Finding`s.

    report = read_paths(["prof.csv", "run.sqlite"], device="H100 SXM")
    report.findings      # per kernel: bound, SOL shares, intensity, occupancy, bank conflicts, coalescing,
                         # stalls, ncu rules; per timeline: GPU idle, tiny kernels, copies, syncs
    report.errors        # "path: what is wrong" for exports that could not be read
    compare(read_one("before.csv"), read_one("after.csv"))   # did the optimisation do what it claims?
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from findings import Evidence, Finding
from signatures.reading import is_gzip
from diagnose.profile.model import Kernel, Profile, ProfileError, Span
from diagnose.profile.verdict import bound, kernel_findings, timeline_findings

__all__ = ["Kernel", "Profile", "ProfileError", "Report", "Span", "compare", "read", "read_one", "read_paths"]


def read_one(path) -> Profile:
    """One export, its format found by content (not by extension alone)."""
    from diagnose.profile import ncu, nsys, trace

    p = Path(path)
    if not p.is_file():
        raise ProfileError(f"{p}: no such file" if not p.exists() else f"{p}: not a regular file")
    with open(p, "rb") as f:
        head = f.read(4096)
    if p.suffix == ".ncu-rep":
        return ncu.read_report(p)
    if head.startswith(b"SQLite format 3\x00"):
        return nsys.read_sqlite(p)
    if is_gzip(head) or head.lstrip()[:1] in (b"{", b"["):
        return trace.read_trace(p)
    text = p.read_text(encoding="utf-8", errors="replace")
    if re.search(r'^"?Time ?\(%\)"?,', text, re.M):
        return nsys.read_stats_csv(p, text)
    if "==PROF==" in text or '"Kernel Name"' in text or "Kernel Name," in text:
        return ncu.read_csv(p)
    if not head.strip():
        raise ProfileError(f"{p}: the file is empty")
    raise ProfileError(f"{p}: not a profiler export this reader knows (Nsight Compute CSV or .ncu-rep, Nsight "
                       "Systems .sqlite or stats CSV, torch.profiler / perfetto JSON trace)")


@dataclass
class Report:
    profiles: list[Profile] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def read_paths(paths, device: str | None = None) -> Report:
    rep = Report()
    for path in paths:
        try:
            prof = read_one(path)
        except ProfileError as e:
            rep.errors.append(str(e))
            continue
        rep.profiles.append(prof)
        for k in prof.kernels:
            if prof.tool == "ncu":
                rep.findings += kernel_findings(k, device)
        rep.findings += timeline_findings(prof)
        for note in prof.notes:
            rep.findings.append(Finding("profile.note", "info", "profile", note, evidence=[Evidence(prof.file)]))
        if prof.tool != "ncu" and prof.kernels:
            top = sorted(prof.kernels, key=lambda k: -k.metrics.get("duration_total", 0))[:5]
            total = sum(k.metrics.get("duration_total", 0) for k in prof.kernels) or 1
            rep.findings.append(Finding(
                "profile.top-kernels", "info", "profile",
                "where the GPU time goes: " + "; ".join(
                    f"{k.name[:50]} {k.metrics.get('duration_total', 0) / total:.0%} ({k.launches} launches)" for k in top),
                evidence=[Evidence(prof.file)],
                facts={"kernels": [{"name": k.name, "total_ns": k.metrics.get("duration_total"), "launches": k.launches}
                                   for k in top]}))
    return rep


read = read_paths

NCU_NOTE = ("Nsight Compute locks the GPU clocks to base (--clock-control base) and flushes the caches before each "
            "kernel (--cache-control all) by default: its durations are not run times. A speed-up should rest on "
            "nsys or CUDA-event timings of the real run; ncu says why, not how fast.")


def _key(name: str) -> str:
    n = re.sub(r"\(.*\)$", "", name.strip())          # argument list of a demangled name
    return re.sub(r"<.*>", "<>", n)


def compare(before: Profile, after: Profile) -> list[Finding]:
    """Per-kernel time, bytes, occupancy and bound, BEFORE vs AFTER; whether the claimed optimisation holds."""
    out: list[Finding] = []
    ev = [Evidence(before.file), Evidence(after.file)]
    bk = {_key(k.name): k for k in before.kernels}
    ak = {_key(k.name): k for k in after.kernels}

    def total(ks):
        return sum((k.metrics.get("duration_total") or (k.metrics.get("duration") or 0) * k.launches) for k in ks)

    tb, ta = total(before.kernels), total(after.kernels)
    for name in sorted(set(bk) & set(ak)):
        b, a = bk[name], ak[name]
        db, da = b.m("duration"), a.m("duration")
        if not db or not da:
            continue
        parts = [f"{db / 1e3:.3g} -> {da / 1e3:.3g} us per launch ({db / da:.2f}x)"]
        for key, lab, unit in (("dram_bytes", "DRAM bytes", 1e6), ("achieved_occupancy_pct", "occupancy", 1),
                               ("dram_pct", "DRAM %", 1), ("sm_pct", "compute %", 1)):
            if b.m(key) is not None and a.m(key) is not None:
                parts.append(f"{lab} {b.m(key) / unit:.3g} -> {a.m(key) / unit:.3g}" + (" MB" if unit != 1 else ""))
        bb, ba = bound(b)[0], bound(a)[0]
        if bb != "unknown" or ba != "unknown":
            parts.append(f"bound {bb} -> {ba}")
        sev = "warning" if da > db * 1.02 else "info"
        out.append(Finding("profile.compare.kernel", sev, "profile", f"{name[:60]}: " + "; ".join(parts),
                           evidence=ev, facts={"before_ns": db, "after_ns": da, "speedup": db / da,
                                               "bound_before": bb, "bound_after": ba}))
    gone, new = sorted(set(bk) - set(ak)), sorted(set(ak) - set(bk))
    if gone or new:
        out.append(Finding("profile.compare.kernels-differ", "info", "profile",
                           f"the profiles run different kernels: only before: {', '.join(g[:40] for g in gone[:5]) or 'none'}; "
                           f"only after: {', '.join(n[:40] for n in new[:5]) or 'none'}",
                           evidence=ev, facts={"only_before": gone, "only_after": new},
                           why="A fused or renamed kernel is compared through the totals only."))
    if tb and ta:
        ratio = tb / ta
        sev = "error" if ratio < 0.98 else "info"
        out.append(Finding("profile.compare.total", sev, "profile",
                           f"total kernel time {tb / 1e3:.4g} us -> {ta / 1e3:.4g} us: "
                           + (f"{ratio:.2f}x faster" if ratio >= 1.02 else f"{1 / ratio:.2f}x slower" if ratio < 0.98
                              else "no change beyond 2%"),
                           evidence=ev, facts={"before_ns": tb, "after_ns": ta, "speedup": ratio},
                           why="" if sev == "info" else "The optimisation made the measured GPU work slower.",
                           fix="" if sev == "info" else "Re-profile both under the same settings; find the kernel that grew."))
    if "ncu" in (before.tool, after.tool):
        out.append(Finding("profile.compare.ncu-durations", "warning", "profile", NCU_NOTE, evidence=ev,
                           why="ncu's clock and cache control make short kernels look slower and cache-friendly "
                               "ones look no better than streaming ones.",
                           fix="Time both versions with nsys or torch.cuda.Event in the real run; keep ncu for the why."))
    return out
