"""Roofline: is a measured kernel time possible on the device? Achieved rates, shares of peak, the bound.

    cost = op_cost("matmul", "4096,4096,4096", "bf16")     # Cost(flops, bytes, formula, working_set)
    r = judge(cost.flops, cost.bytes, time_s=1e-4, device=lookup("h100"), dtype="bf16")
    r.verdict      # "impossible" | "suspicious" | "plausible"
    r.findings     # findings.Finding objects (reader "roofline")

The floor is KernelGuard's physics floor t_min = max(flops / peak, bytes / bandwidth, launch floor),
with the device's dense peak for the dtype and its DRAM bandwidth (diagnose/devices). The byte count
is the least traffic the op needs (each operand read once, the result written once): a kernel may move
more, never less, unless its operands stay in cache between timed calls (see `fits_in_l2`).

Pure functions of numbers: nothing here times anything or touches a device.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from diagnose.devices import Device, DeviceError, normalise_dtype
from findings import Evidence, Finding

# Beyond this multiple of the ceiling a time is "impossible" (the table keeps the larger of conflicting
# vendor figures; 5% more absorbs rounding of the figures and of the reported time).
IMPOSSIBLE_ABOVE = 1.05
# At or above this share of the bound's ceiling a time is "suspicious": tuned vendor GEMMs reach
# about 70-85% of dense peak, streaming kernels about 85-93% of DRAM bandwidth.
SUSPICIOUS_AT = {"compute": 0.90, "memory": 0.95, "launch": 1.0}

BYTES_PER_ELEMENT = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}

OPS = ("matmul", "bmm", "conv2d", "attention", "elementwise", "reduction")

SHAPE_HELP = {
    "matmul": "M,N,K            (C[M,N] = A[M,K] @ B[K,N])",
    "bmm": "B,M,N,K          (B batched matmuls)",
    "conv2d": "N,C,H,W,K,R,S[,stride[,pad]]  (NCHW input, K filters of RxS)",
    "attention": "B,H,S,D or B,H,Sq,Sk,D  (softmax(QK^T)V per head; add 'causal' to halve the work)",
    "elementwise": "d0,d1,...        (elements of each tensor; --inputs/--outputs tensors of that size)",
    "reduction": "d0,...,dn-1,dn   (reduces the last dimension)",
}


class RooflineError(ValueError):
    """A shape, op or figure that cannot be judged; the message says what to pass."""


@dataclass
class Cost:
    flops: float
    bytes: float
    formula: str
    working_set: float        # bytes of distinct data touched (what a cache could hold between calls)


def parse_shape(text: str) -> tuple[list[int], set[str]]:
    """'4096,4096,4096' or '8x16x1024x64' (plus words such as 'causal') -> ([ints], {words})."""
    parts = [p for p in re.split(r"[,x×\s]+", str(text).strip().lower()) if p]
    dims, words = [], set()
    for p in parts:
        if re.fullmatch(r"\d+", p):
            dims.append(int(p))
        elif re.fullmatch(r"[a-z_]+", p):
            words.add(p)
        else:
            raise RooflineError(f"shape {text!r}: {p!r} is not a size; write sizes as 4096,4096,4096")
    if any(d <= 0 for d in dims):
        raise RooflineError(f"shape {text!r}: sizes must be positive")
    return dims, words


def op_cost(op: str, shape: str, dtype: str, inputs: int = 1, outputs: int = 1) -> Cost:
    """FLOPs and the least bytes moved for a standard op, with the formula used."""
    op = op.lower()
    if op not in OPS:
        raise RooflineError(f"unknown op {op!r}: one of {', '.join(OPS)} (or pass --flops and --bytes)")
    try:
        es = BYTES_PER_ELEMENT[normalise_dtype(dtype)]
    except DeviceError as e:
        raise RooflineError(str(e)) from None
    dims, words = parse_shape(shape)

    def need(*counts):
        if len(dims) not in counts:
            raise RooflineError(f"--op {op} takes --shape {' '.join(SHAPE_HELP[op].split())}; got {len(dims)} sizes")

    if op == "matmul":
        need(3)
        m, n, k = dims
        b = es * (m * k + k * n + m * n)
        return Cost(2.0 * m * n * k, b, f"2*M*N*K = 2*{m}*{n}*{k}; bytes = (MK+KN+MN)*{es}", b)
    if op == "bmm":
        need(4)
        bt, m, n, k = dims
        b = es * bt * (m * k + k * n + m * n)
        return Cost(2.0 * bt * m * n * k, b, f"2*B*M*N*K = 2*{bt}*{m}*{n}*{k}; bytes = B*(MK+KN+MN)*{es}", b)
    if op == "conv2d":
        need(7, 8, 9)
        nb, c, h, w, kf, r, s = dims[:7]
        stride = dims[7] if len(dims) > 7 else 1
        pad = dims[8] if len(dims) > 8 else 0
        p = (h + 2 * pad - r) // stride + 1
        q = (w + 2 * pad - s) // stride + 1
        if p <= 0 or q <= 0:
            raise RooflineError(f"conv2d shape {shape!r}: the filter is larger than the padded input")
        b = es * (nb * c * h * w + kf * c * r * s + nb * kf * p * q)
        return Cost(2.0 * nb * kf * p * q * c * r * s, b,
                    f"2*N*K*P*Q*C*R*S with P,Q = {p},{q}; bytes = (NCHW + KCRS + NKPQ)*{es}", b)
    if op == "attention":
        need(4, 5)
        if len(dims) == 4:
            bt, hd, sq, d = dims
            sk = sq
        else:
            bt, hd, sq, sk, d = dims
        frac = 0.5 if "causal" in words else 1.0
        b = es * bt * hd * (2 * sq * d + 2 * sk * d)
        return Cost(4.0 * bt * hd * sq * sk * d * frac, b,
                    f"4*B*H*Sq*Sk*D{' / 2 (causal)' if frac < 1 else ''}; bytes = B*H*(2*Sq*D + 2*Sk*D)*{es}", b)
    if op == "elementwise":
        if not dims:
            raise RooflineError(f"--op elementwise takes --shape {SHAPE_HELP[op]}")
        n = math.prod(dims)
        b = es * n * (inputs + outputs)
        return Cost(float(n), b, f"1 op per element ({n}); bytes = N*({inputs} in + {outputs} out)*{es}", b)
    # reduction
    if not dims:
        raise RooflineError(f"--op reduction takes --shape {SHAPE_HELP[op]}")
    n = math.prod(dims)
    out = n // dims[-1]
    b = es * (n + out)
    return Cost(float(n), b, f"1 op per element ({n}); bytes = (N + N/{dims[-1]})*{es}", b)


@dataclass
class Reading:
    device: Device
    dtype: str
    flops: float
    bytes: float
    time_s: float
    launches: int
    achieved_tflops: float
    achieved_gbs: float
    peak_tflops: float | None
    share_compute: float | None          # achieved / peak (1.0 = at the ceiling)
    share_memory: float
    floors_s: dict                       # compute / memory / launch -> seconds
    bound: str                           # the largest floor: compute | memory | launch
    floor_s: float
    verdict: str                         # impossible | suspicious | plausible
    reason: str
    working_set: float | None = None
    fits_in_l2: bool = False
    notes: list = field(default_factory=list)
    findings: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"device": self.device.id, "device_name": self.device.name, "dtype": self.dtype,
                "flops": self.flops, "bytes": self.bytes, "time_ms": self.time_s * 1e3, "launches": self.launches,
                "achieved_tflops": self.achieved_tflops, "achieved_gbs": self.achieved_gbs,
                "peak_tflops_dense": self.peak_tflops, "bandwidth_gbs": self.device.bandwidth_gbs,
                "share_of_peak_compute": self.share_compute, "share_of_peak_bandwidth": self.share_memory,
                "floors_ms": {k: v * 1e3 for k, v in self.floors_s.items()}, "bound": self.bound,
                "floor_ms": self.floor_s * 1e3, "verdict": self.verdict, "reason": self.reason,
                "working_set_bytes": self.working_set, "fits_in_l2": self.fits_in_l2, "notes": list(self.notes),
                "sources": {"compute": self.device.source("compute").url,
                            "memory": self.device.source("memory").url},
                "findings": [f.to_json() for f in self.findings]}


def _fmt_time(s: float) -> str:
    if s >= 1e-3:
        return f"{s * 1e3:.4g} ms"
    return f"{s * 1e6:.4g} us"


def judge(flops: float, bytes_: float, time_s: float, device: Device, dtype: str, launches: int = 1,
          working_set: float | None = None, where: str = "") -> Reading:
    """The roofline reading of one measured time (seconds) for `flops` and `bytes_` on `device`."""
    if not (time_s > 0 and math.isfinite(time_s)):
        raise RooflineError("the time must be a positive number of milliseconds")
    if flops < 0 or bytes_ < 0 or (flops == 0 and bytes_ == 0):
        raise RooflineError("give the work: --op/--shape, or --flops and --bytes (not both zero)")
    if launches < 1:
        raise RooflineError("--launches must be at least 1")
    try:
        dt = normalise_dtype(dtype)
    except DeviceError as e:
        raise RooflineError(str(e)) from None
    peak = device.peak(dt)
    notes = []
    if peak is None and flops > 0:
        avail = ", ".join(f"{k} {v:g}" for k, v in device.peak_tflops.items()) or "none"
        notes.append(f"{device.name} has no published {dt} peak (it has: {avail}); the compute floor is left out")
    floors = {"memory": bytes_ / (device.bandwidth_gbs * 1e9)}
    if peak is not None:
        floors["compute"] = flops / (peak * 1e12)
    if device.launch_floor_us is not None:
        floors["launch"] = launches * device.launch_floor_us * 1e-6
    bound = max(floors, key=floors.get)
    floor = floors[bound]
    ach_tflops = flops / time_s / 1e12
    ach_gbs = bytes_ / time_s / 1e9
    share_c = (ach_tflops / peak) if peak else None
    share_m = ach_gbs / device.bandwidth_gbs
    ws = working_set if working_set is not None else bytes_
    fits = bool(device.l2_mb) and ws <= device.l2_mb * 1e6
    ratio = floor / time_s              # share of the tightest ceiling reached (>1: faster than it allows)

    if ratio > IMPOSSIBLE_ABOVE and bound == "memory" and fits:
        verdict = "suspicious"
        reason = (f"{_fmt_time(time_s)} is faster than DRAM allows ({ratio:.0%} of {device.bandwidth_gbs:g} GB/s), "
                  f"but the {ws / 1e6:.3g} MB working set fits in the {device.l2_mb:g} MB L2: the operands were "
                  "probably served from cache between timed calls (no flush), which a real workload would not see")
    elif ratio > IMPOSSIBLE_ABOVE:
        verdict = "impossible"
        what = {"compute": f"{peak:g} TFLOP/s dense {dt} peak", "memory": f"{device.bandwidth_gbs:g} GB/s bandwidth",
                "launch": f"{device.launch_floor_us:g} us per launch (estimate)"}[bound]
        reason = (f"impossible: faster than the hardware allows: {_fmt_time(time_s)} is under the "
                  f"{bound} floor {_fmt_time(floor)} ({what}); the time is {ratio:.1f}x too short")
    elif ratio >= SUSPICIOUS_AT[bound]:
        verdict = "suspicious"
        reason = (f"{ratio:.0%} of the {bound} ceiling: closer than tuned vendor kernels usually get "
                  f"(about {SUSPICIOUS_AT[bound]:.0%} and above is rare)")
    else:
        verdict = "plausible"
        reason = f"{ratio:.0%} of the {bound} ceiling"
    r = Reading(device=device, dtype=dt, flops=flops, bytes=bytes_, time_s=time_s, launches=launches,
                achieved_tflops=ach_tflops, achieved_gbs=ach_gbs, peak_tflops=peak, share_compute=share_c,
                share_memory=share_m, floors_s=floors, bound=bound, floor_s=floor, verdict=verdict, reason=reason,
                working_set=ws, fits_in_l2=fits, notes=notes)
    r.findings = _findings(r, where)
    return r


def _findings(r: Reading, where: str) -> list[Finding]:
    facts = {"device": r.device.id, "dtype": r.dtype, "time_ms": r.time_s * 1e3, "floor_ms": r.floor_s * 1e3,
             "bound": r.bound, "achieved_tflops": round(r.achieved_tflops, 4), "achieved_gbs": round(r.achieved_gbs, 2),
             "share_of_peak_compute": r.share_compute, "share_of_peak_bandwidth": r.share_memory}
    ev = [Evidence(file=where, text=f"{r.flops:.4g} FLOP, {r.bytes:.4g} B in {_fmt_time(r.time_s)}")] if where else []
    if r.verdict == "impossible":
        why = ("No kernel can beat the device's peak rate or its memory bandwidth. A time under the floor "
               "means the timing is wrong (no device synchronisation, an event on another stream), the work "
               "was skipped (a cached or reused result, a smaller shape than claimed), or the operation "
               "count over-counts what the task needs (causal masking, structured sparsity).")
        return [Finding(id="roofline.impossible", severity="error", reader="roofline", title=r.reason, evidence=ev,
                        why=why, fix="Re-time with torch.cuda.synchronize() / do_bench, check the output is "
                        "recomputed each call and the shape is the claimed one; give --flops/--bytes if the "
                        "op does less work than the standard formula.", facts=facts, confidence=0.95)]
    if r.verdict == "suspicious" and r.fits_in_l2 and r.floor_s / r.time_s > IMPOSSIBLE_ABOVE:
        return [Finding(id="roofline.cache-resident", severity="warning", reader="roofline", title=r.reason,
                        evidence=ev, why="A benchmark that calls a kernel repeatedly on the same small tensors "
                        "measures L2, not DRAM: the claimed bandwidth exceeds what the memory can deliver.",
                        fix="Flush L2 between calls (triton.testing.do_bench does; or write a buffer larger than "
                        "L2) or time working sets larger than L2.", facts=facts, confidence=0.7)]
    if r.verdict == "suspicious":
        return [Finding(id="roofline.near-ceiling", severity="warning", reader="roofline",
                        title=f"suspicious: {r.reason}", evidence=ev,
                        why="Times this close to the hardware ceiling are rare for real kernels; they are "
                        "consistent with a correct, excellent kernel, but also with timing that misses part "
                        "of the work.", fix="Check synchronisation, warm-up and that the output is "
                        "recomputed; compare with a vendor library on the same shape.", facts=facts, confidence=0.5)]
    return []
