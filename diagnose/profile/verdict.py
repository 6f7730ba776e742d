"""Verdicts from profile data: per kernel (bound, speed-of-light shares, intensity vs the device's ridge,
occupancy and its limiter, bank conflicts, coalescing, stalls, ncu's own rules) and per timeline (GPU idle,
tiny kernels, copies, synchronisation). Thresholds are data (rules.toml)."""
from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from findings import Evidence, Finding
from diagnose.profile.model import Kernel, Profile

RULES = Path(__file__).with_name("rules.toml")


@lru_cache(maxsize=1)
def rules() -> dict:
    with open(RULES, "rb") as f:
        return tomllib.load(f)


def _ev(k: Kernel) -> list[Evidence]:
    return [Evidence(k.file, k.line, text=k.name[:200])]


def _short(name: str) -> str:
    return name if len(name) <= 60 else name[:57] + "..."


def _fmt_ns(ns: float) -> str:
    return f"{ns / 1e6:.3g} ms" if ns >= 1e6 else f"{ns / 1e3:.3g} us" if ns >= 1e3 else f"{ns:.0f} ns"


def _device(k: Kernel, device_name: str | None):
    name = device_name or k.device
    if not name:
        return None, "no device named in the export (pass --device NAME)"
    try:
        from diagnose.devices import lookup
    except ImportError:
        return None, "the device table (diagnose.devices) is not installed"
    try:
        return lookup(name), ""
    except Exception as e:
        return None, f"device {name!r} is not in the peak table ({e})"


def flops(k: Kernel) -> float | None:
    m = k.metrics
    parts = [m.get(x) for x in ("fadd", "fmul", "hadd", "hmul", "dadd", "dmul")]
    fmas = [m.get(x) for x in ("ffma", "hfma", "dfma")]
    if all(v is None for v in parts + fmas):
        return None
    return sum(v or 0 for v in parts) + 2 * sum(v or 0 for v in fmas)


def bound(k: Kernel) -> tuple[str, str]:
    """memory / compute / latency / launch, and the numbers that decided it."""
    r = rules()["bound"]
    sm, mem = k.m("sm_pct"), k.m("mem_pct") if k.m("mem_pct") is not None else k.m("dram_pct")
    dur = k.m("duration")
    if sm is None or mem is None:
        return "unknown", "no speed-of-light throughputs in the export (ncu --section SpeedOfLight)"
    nums = f"compute {sm:.1f}% and memory {mem:.1f}% of peak"
    if max(sm, mem) >= r["sol_pct"]:
        return ("memory", nums) if mem >= sm else ("compute", nums)
    if dur is not None and dur < r["launch_us"] * 1e3:
        return "launch", f"{nums}, {_fmt_ns(dur)} long: the launch costs about as much as the work"
    return "latency", f"{nums}, both under {r['sol_pct']:.0f}%: the units wait on latency (stalls, too little parallelism)"


def kernel_findings(k: Kernel, device_name: str | None = None) -> list[Finding]:
    R = rules()
    out: list[Finding] = []
    b, why = bound(k)
    facts = {k2: v for k2, v in k.metrics.items() if isinstance(v, (int, float))}
    sol = ", ".join(f"{lab} {k.m(key):.1f}%" for lab, key in (("DRAM", "dram_pct"), ("L2", "l2_pct"),
                                                              ("L1/shared", "l1_pct"), ("compute", "sm_pct"))
                    if k.m(key) is not None)
    dur = k.m("duration")
    title = f"{_short(k.name)}: {b}-bound" + (f"; {_fmt_ns(dur)}" if dur is not None else "") + \
        (f"; SOL {sol}" if sol else "") + (f" ({why})" if b == "unknown" else "")
    advice = {"memory": "Cut bytes moved (fuse, keep tiles in shared memory/registers, lower precision) or move them "
                        "better (vectorised 128-bit loads, coalescing); compute is not the limit.",
              "compute": "Use the tensor cores (tl.dot / mma with fp16/bf16/tf32), cut redundant arithmetic; memory "
                         "is not the limit.",
              "latency": "Raise parallelism: more blocks or warps per SM (occupancy), more independent loads in "
                         "flight (unroll, software pipelining), fewer dependent stalls.",
              "launch": "Fuse this kernel with its neighbours or capture the sequence in a CUDA graph: launch cost "
                        "dominates.", "unknown": ""}[b]
    out.append(Finding(f"profile.bound.{b}", "info" if b in ("memory", "compute", "unknown") else "warning",
                       "profile", title, evidence=_ev(k), why=why if b != "unknown" else why, fix=advice,
                       facts={"bound": b, **facts}))
    # arithmetic intensity against the device's ridge point
    fl = flops(k)
    nbytes = k.m("dram_bytes") or ((k.m("dram_read_bytes") or 0) + (k.m("dram_write_bytes") or 0)) or None
    if fl and nbytes:
        dev, note = _device(k, device_name)
        ai = fl / nbytes
        if dev:
            peak = dev.peak("fp32") or 0
            ridge = peak * 1e12 / (dev.bandwidth_gbs * 1e9) if peak else None
            side = "below" if ridge and ai < ridge else "above"
            out.append(Finding("profile.intensity", "info", "profile",
                               f"{_short(k.name)}: arithmetic intensity {ai:.2f} FLOP/byte, {side} the {dev.name} "
                               f"fp32 ridge of {ridge:.1f} FLOP/byte" if ridge else
                               f"{_short(k.name)}: arithmetic intensity {ai:.2f} FLOP/byte",
                               evidence=_ev(k), facts={"flop": fl, "dram_bytes": nbytes, "intensity": ai,
                                                       "ridge": ridge, "device": dev.name},
                               why="Below the ridge the kernel cannot be compute-bound on this device, whatever "
                                   "its code: memory bandwidth caps it."))
        else:
            out.append(Finding("profile.intensity", "info", "profile",
                               f"{_short(k.name)}: arithmetic intensity {ai:.2f} FLOP/byte ({note})",
                               evidence=_ev(k), facts={"flop": fl, "dram_bytes": nbytes, "intensity": ai}))
    # occupancy
    ach, th = k.m("achieved_occupancy_pct"), k.m("theoretical_occupancy_pct")
    O = R["occupancy"]
    if th is not None:
        limits = {lab: k.m(key) for lab, key in (("registers", "limit_registers"), ("shared memory", "limit_smem"),
                                                  ("warps (block size)", "limit_warps"), ("blocks per SM", "limit_blocks"))
                  if k.m(key) is not None}
        limiter = min(limits, key=limits.get) if limits else None
        if th < O["theoretical_low_pct"] and limiter:
            extra = f" ({k.m('registers'):.0f} registers/thread)" if limiter == "registers" and k.m("registers") else ""
            out.append(Finding("profile.occupancy.theoretical-low", "warning", "profile",
                               f"{_short(k.name)}: theoretical occupancy {th:.0f}%, limited by {limiter}{extra}: "
                               f"{limits[limiter]:.0f} blocks per SM",
                               evidence=_ev(k), facts={"theoretical_pct": th, "limiter": limiter, "limits": limits},
                               why="Few resident warps leave the SM nothing to switch to while warps wait on memory.",
                               fix={"registers": "Cut registers per thread (__launch_bounds__, -maxrregcount, smaller "
                                                 "tiles per thread, fewer live values).",
                                    "shared memory": "Use less shared memory per block (smaller tiles, fewer stages) or "
                                                     "raise the carve-out (cudaFuncAttributePreferredSharedMemoryCarveout).",
                                    "warps (block size)": "Choose a block size that divides the SM's warp slots "
                                                          "(128 or 256 threads).",
                                    "blocks per SM": "Use bigger blocks: the per-SM block limit caps residency."}.get(limiter, "")))
        if ach is not None and ach < O["achieved_vs_theoretical"] * th:
            out.append(Finding("profile.occupancy.achieved-low", "warning", "profile",
                               f"{_short(k.name)}: achieved occupancy {ach:.1f}% vs theoretical {th:.1f}%",
                               evidence=_ev(k), facts={"achieved_pct": ach, "theoretical_pct": th},
                               why="Warps finish unevenly or the grid has too few blocks for the last wave (tail effect).",
                               fix="Balance the work per block; size the grid to whole waves (blocks = k x SMs x blocks/SM)."))
    # shared-memory bank conflicts
    for op in ("ld", "st"):
        conf, waves, req = k.m(f"smem_conflicts_{op}"), k.m(f"smem_wavefronts_{op}"), k.m(f"smem_requests_{op}")
        if conf and waves and conf / waves > R["bank_conflicts"]["share"]:
            nway = waves / req if req else None
            out.append(Finding("profile.bank-conflicts", "warning", "profile",
                               f"{_short(k.name)}: shared-memory {'loads' if op == 'ld' else 'stores'}: "
                               f"{conf / waves:.0%} of wavefronts are bank-conflict replays"
                               + (f" ({nway:.1f}-way on average)" if nway else ""),
                               evidence=_ev(k), facts={"conflicts": conf, "wavefronts": waves, "requests": req,
                                                       "n_way": nway, "op": op},
                               why="Threads of a warp hitting the same bank are served one after another.",
                               fix="Pad the shared tile by one element per row (tile[32][33]) or swizzle the index."))
    # coalescing
    C = R["coalescing"]
    for op, lab in (("gld", "loads"), ("gst", "stores")):
        sec, req = k.m(f"{op}_sectors"), k.m(f"{op}_requests")
        if sec and req and sec / req > C["ideal_sectors_per_request"] * C["tolerance"]:
            out.append(Finding("profile.uncoalesced", "warning", "profile",
                               f"{_short(k.name)}: global {lab} use {sec / req:.1f} sectors per request "
                               f"(ideal {C['ideal_sectors_per_request']:.0f} for 4-byte accesses)",
                               evidence=_ev(k), facts={"sectors": sec, "requests": req, "sectors_per_request": sec / req},
                               why="Each extra sector is memory traffic the warp did not need: the threads of a warp "
                                   "read scattered or strided addresses.",
                               fix="Make consecutive threads read consecutive addresses (index by threadIdx.x on the "
                                   "fastest axis), or stage through shared memory and transpose there."))
    # stalls
    if k.stalls:
        top = sorted(k.stalls.items(), key=lambda kv: -kv[1])[:3]
        out.append(Finding("profile.stalls", "info", "profile",
                           f"{_short(k.name)}: top warp stalls: " + ", ".join(f"{n.replace('_', ' ')} {v:.2f}" for n, v in top),
                           evidence=_ev(k), facts={"stalls": dict(top)},
                           why="long scoreboard = waiting on global/local memory; barrier = __syncthreads; "
                               "mio/lg throttle = too many memory instructions queued; math pipe throttle = compute."))
    # ncu's own rules, quoted
    for rule in k.rules:
        if not rule.get("message"):
            continue
        sp = rule.get("speedup")
        out.append(Finding(f"profile.ncu-rule.{rule['name']}", "warning" if str(rule.get("type")).upper() in
                           ("OPT", "WRN", "WARNING", "OPTIMIZATION") else "info", "profile",
                           f"{_short(k.name)}: ncu {rule['name']}: " + rule["message"][:300]
                           + (f" (estimated speed-up {sp:.0f}%)" if sp else ""),
                           evidence=_ev(k), facts={"rule": rule["name"], "estimated_speedup_pct": sp}))
    return out


def _union(spans) -> float:
    total, end = 0.0, None
    for s in sorted(spans, key=lambda s: s.start_ns):
        if end is None or s.start_ns > end:
            total += s.dur_ns
            end = s.end_ns
        elif s.end_ns > end:
            total += s.end_ns - end
            end = s.end_ns
    return total


def timeline_findings(prof: Profile) -> list[Finding]:
    T = rules()["timeline"]
    out = []
    gpu = [s for s in prof.spans if s.kind == "kernel" or s.kind.startswith("memcpy") or s.kind == "memset"]
    kernels = [s for s in prof.spans if s.kind == "kernel"]
    ev = [Evidence(prof.file)]
    if gpu:
        span = max(s.end_ns for s in gpu) - min(s.start_ns for s in gpu)
        busy = _union(gpu)
        idle = 1 - busy / span if span > 0 else 0.0
        if idle > T["idle_share"]:
            out.append(Finding("profile.timeline.gpu-idle", "warning", "profile",
                               f"the GPU is idle {idle:.0%} of the {_fmt_ns(span)} between its first and last work",
                               evidence=ev, facts={"idle_share": idle, "span_ns": span, "busy_ns": busy},
                               why="The host does not feed the GPU fast enough: Python overhead, synchronisation, "
                                   "data loading or copies between launches.",
                               fix="Find the gaps on the timeline: overlap data loading, remove syncs, use CUDA graphs "
                                   "or torch.compile(mode='reduce-overhead') for launch-heavy steps."))
    if len(kernels) >= T["min_kernels"]:
        tiny = [s for s in kernels if s.dur_ns < T["tiny_kernel_us"] * 1e3]
        if len(tiny) / len(kernels) > T["tiny_share"]:
            out.append(Finding("profile.timeline.tiny-kernels", "warning", "profile",
                               f"{len(tiny)} of {len(kernels)} kernel launches take under {T['tiny_kernel_us']:.0f} us",
                               evidence=ev, facts={"tiny": len(tiny), "kernels": len(kernels)},
                               why="Each launch costs microseconds of CPU and GPU time; short kernels spend most of "
                                   "their time being launched.",
                               fix="Fuse elementwise chains (torch.compile, a Triton kernel) or capture the loop in a CUDA graph."))
    copies = [s for s in prof.spans if s.kind in ("memcpy-htod", "memcpy-dtoh")]
    if copies and gpu:
        share = sum(s.dur_ns for s in copies) / max(_union(gpu), 1.0)
        if share > T["memcpy_share"]:
            between = sum(1 for c in copies if any(k.start_ns < c.start_ns for k in kernels[:1]) and
                          any(k.start_ns > c.end_ns for k in kernels[-1:]))
            out.append(Finding("profile.timeline.memcpy", "warning", "profile",
                               f"host-device copies take {share:.0%} of GPU busy time ({len(copies)} copies, "
                               f"{between} between kernels)",
                               evidence=ev, facts={"memcpy_share": share, "copies": len(copies), "between_kernels": between},
                               why="Copies inside the timed loop serialise with the kernels (pageable memory is synchronous).",
                               fix="Move data to the device once, outside the loop; use pinned memory and non_blocking "
                                   "copies on a side stream where a copy must stay."))
    syncs = [s for s in prof.spans if s.kind == "sync"]
    if kernels and len(syncs) > T["sync_per_kernel"] * len(kernels) and len(syncs) >= 10:
        out.append(Finding("profile.timeline.syncs", "warning", "profile",
                           f"{len(syncs)} synchronising calls for {len(kernels)} kernel launches",
                           evidence=ev, facts={"syncs": len(syncs), "kernels": len(kernels)},
                           why="Each synchronisation drains the GPU queue; the next launch starts from empty.",
                           fix="Remove .item()/.cpu()/cudaDeviceSynchronize inside the loop; synchronise once at the end."))
    return out
