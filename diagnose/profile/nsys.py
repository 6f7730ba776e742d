"""Nsight Systems exports: the `.sqlite` export (`nsys export --type sqlite`, or `nsys stats` makes one) and
`nsys stats --format csv` reports.

The SQLite schema is the one the Nsight Systems "Exporter" documentation describes: CUPTI_ACTIVITY_KIND_KERNEL
(start, end, deviceId, streamId, gridX..Z, blockX..Z, registersPerThread, staticSharedMemory,
dynamicSharedMemory, shortName/demangledName -> StringIds.id), CUPTI_ACTIVITY_KIND_MEMCPY (start, end, bytes,
copyKind: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP), CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME (start,
end, nameId -> StringIds), StringIds(id, value). Times are nanoseconds.
"""
from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

from diagnose.profile.model import Kernel, Profile, ProfileError, Span
from diagnose.profile.ncu import number

_COPY = {1: "memcpy-htod", 2: "memcpy-dtoh", 8: "memcpy-dtod", 10: "memcpy-dtod"}
_SYNC_API = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy",
             "cuCtxSynchronize", "cuStreamSynchronize")


def _tables(db) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def read_sqlite(path) -> Profile:
    p = str(path)
    try:
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        tables = _tables(db)
    except sqlite3.DatabaseError as e:
        raise ProfileError(f"{p}: not a readable SQLite database ({e})") from None
    try:
        if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
            raise ProfileError(f"{p}: no CUPTI_ACTIVITY_KIND_KERNEL table: not an Nsight Systems export, or the run "
                               "traced no CUDA kernel (record with `nsys profile --trace cuda`)")
        names = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
        kcols = {r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
        name_col = "demangledName" if "demangledName" in kcols else "shortName"
        prof = Profile(p, "nsys")
        per: dict[str, Kernel] = {}
        for start, end, nid, regs in db.execute(
                f"SELECT start, end, {name_col}, {'registersPerThread' if 'registersPerThread' in kcols else 0} "
                "FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"):
            name = names.get(nid, str(nid))
            prof.spans.append(Span("kernel", name, float(start), float(end)))
            k = per.setdefault(name, Kernel(name, p, None, "nsys", launches=0))
            k.launches += 1
            k.metrics["duration"] = k.metrics.get("duration", 0.0) + float(end - start)
            if regs:
                k.metrics["registers"] = float(regs)
        for k in per.values():
            k.metrics["duration_total"] = k.metrics["duration"]
            k.metrics["duration"] = k.metrics["duration"] / max(k.launches, 1)
        prof.kernels = list(per.values())
        if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
            for start, end, nbytes, kind in db.execute(
                    "SELECT start, end, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start"):
                prof.spans.append(Span(_COPY.get(kind, "memcpy-other"), "memcpy", float(start), float(end), float(nbytes)))
        if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
            for start, end in db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET"):
                prof.spans.append(Span("memset", "memset", float(start), float(end)))
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
            for start, end, nid in db.execute("SELECT start, end, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
                name = names.get(nid, "")
                if name.split("_v")[0] in _SYNC_API:
                    prof.spans.append(Span("sync", name, float(start), float(end)))
        if not prof.kernels:
            raise ProfileError(f"{p}: the kernel table is empty: the run traced no CUDA kernel")
        return prof
    except sqlite3.DatabaseError as e:
        raise ProfileError(f"{p}: the export is damaged or of an unknown version ({e})") from None
    finally:
        db.close()


def read_stats_csv(path, text: str) -> Profile:
    """`nsys stats --report cuda_gpu_kern_sum --format csv` (and cuda_gpu_mem_time_sum, cuda_api_sum)."""
    p = str(path)
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(("Time (%)", '"Time (%)"', "Time(%)"))), None)
    if start is None:
        raise ProfileError(f"{p}: not an nsys stats CSV (no 'Time (%)' header); make one with "
                           "`nsys stats --report cuda_gpu_kern_sum --format csv`")
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines[start:] if l.strip()))))
    col = {h: i for i, h in enumerate(rows[0])}
    prof = Profile(p, "nsys", summary_only=True)
    total = col.get("Total Time (ns)")
    count = col.get("Instances", col.get("Count", col.get("Num Calls")))
    name = col.get("Name", col.get("Operation"))
    if total is None or count is None or name is None:
        raise ProfileError(f"{p}: the nsys stats CSV lacks 'Total Time (ns)', 'Instances' or 'Name' columns")
    for n, r in enumerate(rows[1:], start + 2):
        if len(r) < len(rows[0]):
            raise ProfileError(f"{p}:{n}: row has {len(r)} of {len(rows[0])} columns: the report is truncated")
        tot, cnt = number(r[total]), number(r[count])
        if tot is None or not cnt:
            continue
        k = Kernel(r[name], p, n, "nsys", launches=int(cnt))
        k.metrics.update(duration=tot / cnt, duration_total=tot)
        if "Med (ns)" in col and number(r[col["Med (ns)"]]) is not None:
            k.metrics["duration_median"] = number(r[col["Med (ns)"]])
        prof.kernels.append(k)
    if not prof.kernels:
        raise ProfileError(f"{p}: the nsys stats CSV has no rows")
    return prof
