"""Chrome Trace Event Format JSON: torch.profiler's `export_chrome_trace` and JAX's perfetto trace.

The format is Google's "Trace Event Format" document: {"traceEvents": [{"ph": "X", "name", "cat", "ts", "dur"
(microseconds), "pid", "tid", "args"}...]}. torch.profiler marks GPU work with cat "kernel", "gpu_memcpy"
(args "bytes"/"memory bandwidth (GB/s)"), "gpu_memset", CPU ops with "cpu_op" and runtime calls with
"cuda_runtime"; a CPU-only run has no GPU events, which the reading says.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from diagnose.profile.model import Kernel, Profile, ProfileError, Span
from signatures.reading import is_gzip

MAX_BYTES = 512 * 1024 * 1024
_SYNC = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync")


def read_trace(path) -> Profile:
    p = str(path)
    try:
        size = Path(p).stat().st_size
        if size > MAX_BYTES:
            raise ProfileError(f"{p}: {size >> 20} MiB trace is over the {MAX_BYTES >> 20} MiB this reader takes; "
                               "profile fewer steps (torch.profiler schedule=...)")
        raw = Path(p).read_bytes()
        if is_gzip(raw):
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise ProfileError(f"{p}: cannot read ({e})") from None
    except (ValueError, RecursionError) as e:
        raise ProfileError(f"{p}: not valid JSON ({str(e)[:80]}); a trace cut short by a crash is not readable") from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc if isinstance(doc, list) else None
    if not isinstance(events, list):
        raise ProfileError(f"{p}: no traceEvents list: not a Chrome/perfetto trace")
    tool = "torch" if isinstance(doc, dict) and ("deviceProperties" in doc or "schemaVersion" in doc) else "trace"
    prof = Profile(p, tool)
    per: dict[str, Kernel] = {}
    cpu_ops = 0
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat, name = str(e.get("cat", "")).lower(), str(e.get("name", ""))
        try:
            ts, dur = float(e["ts"]) * 1e3, float(e.get("dur", 0)) * 1e3
        except (KeyError, TypeError, ValueError):
            continue
        if cat == "kernel" or (tool == "trace" and "kernel" in cat):
            prof.spans.append(Span("kernel", name, ts, ts + dur))
            k = per.setdefault(name, Kernel(name, p, None, tool, launches=0))
            k.launches += 1
            k.metrics["duration_total"] = k.metrics.get("duration_total", 0.0) + dur
        elif cat == "gpu_memcpy":
            kind = "memcpy-htod" if "HtoD" in name else "memcpy-dtoh" if "DtoH" in name else "memcpy-dtod"
            args = e.get("args") or {}
            prof.spans.append(Span(kind, name, ts, ts + dur, float(args.get("bytes", 0) or 0) or None))
        elif cat == "gpu_memset":
            prof.spans.append(Span("memset", name, ts, ts + dur))
        elif cat in ("cuda_runtime", "cuda_driver") and name in _SYNC:
            prof.spans.append(Span("sync", name, ts, ts + dur))
        elif cat == "cpu_op":
            cpu_ops += 1
    for k in per.values():
        k.metrics["duration"] = k.metrics["duration_total"] / max(k.launches, 1)
    prof.kernels = list(per.values())
    if not prof.kernels:
        prof.notes.append(f"no GPU kernel events in the trace ({cpu_ops} CPU ops): a CPU-only run, or the profiler "
                          "was not given ProfilerActivity.CUDA; GPU verdicts are not possible from it")
    return prof
