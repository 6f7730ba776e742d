"""Exact builds for a fix, chosen from the data tables (data/torch.toml, driver.toml, jax.toml).

Nothing here invents a build: a torch wheel is named only when torch.toml lists it, with its index URL.
"""
from __future__ import annotations

import re

from diagnose.env.arch import arch_covers
from diagnose.env.snap import cuda_mm, ver, vstr
from diagnose.env.tables import table

INDEX = "https://download.pytorch.org/whl/{tag}"


def minor_compat_floor(major: int) -> tuple[int, ...] | None:
    for row in table("driver")["minor_compat"]:
        if row["major"] == major:
            return ver(row["min_driver"])
    return None


def native_driver(cuda: tuple[int, int]) -> str | None:
    """The driver that ships with CUDA `cuda` (or the next release listed), as NVIDIA writes it; None past
    the table."""
    for row in table("driver")["native"]:
        if cuda_mm(row["cuda"]) >= cuda:
            return row["driver"]
    return None


def minor_compat_floor_text(major: int) -> str | None:
    for row in table("driver")["minor_compat"]:
        if row["major"] == major:
            return row["min_driver"]
    return None


def driver_runs(driver_cuda: tuple[int, int] | None, driver_version: tuple, want: tuple[int, int]) -> str:
    """'native' | 'minor-compat' | 'no' | 'unknown': can a driver that supports CUDA `driver_cuda`
    (version `driver_version`) run code built with CUDA `want`?"""
    if driver_cuda and driver_cuda >= want:
        return "native"
    floor = minor_compat_floor(want[0])
    if not driver_version:
        return "unknown"
    if floor and driver_version >= floor and (not driver_cuda or driver_cuda[0] == want[0]):
        return "minor-compat"
    return "no"


def wheel_cuda(tag: str) -> tuple[int, int]:
    """'cu128' -> (12, 8); 'cu118' -> (11, 8)."""
    d = tag[2:]
    return (int(d[:-1]), int(d[-1]))


def torch_releases() -> list[dict]:
    return sorted(table("torch")["release"], key=lambda r: ver(r["torch"]))


def torch_release(version) -> dict | None:
    v = ver(version)[:2]
    return next((r for r in torch_releases() if ver(r["torch"]) == v), None)


def torch_build(ccs: list[str], driver_cuda, driver_version: tuple, prefer: str | None = None) -> dict | None:
    """The newest listed torch wheel whose arch list runs natively (SASS) on every CC in `ccs` and which
    this driver runs (natively preferred over minor-version compatibility). `prefer`: a release ("2.5")
    tried first, so a fix moves as little as possible. None when no listed wheel fits."""
    best = None
    for r in torch_releases():
        for tag, archs in r.get("wheels", {}).items():
            a = archs.split()
            if any(arch_covers(a, cc) != "sass" for cc in ccs):
                continue
            how = driver_runs(driver_cuda, driver_version, wheel_cuda(tag)) if (driver_cuda or driver_version) \
                else "native"
            if how not in ("native", "minor-compat"):
                continue
            key = (how == "native", ver(r["torch"]) == ver(prefer or "")[:2], ver(r["torch"]), wheel_cuda(tag))
            if best is None or key > best[0]:
                best = (key, {"torch": r["latest"], "tag": tag, "cuda": vstr(wheel_cuda(tag)), "how": how,
                              "archs": a})
    return best[1] if best else None


def pip_torch(b: dict) -> str:
    return f"pip install torch=={b['torch']} --index-url {INDEX.format(tag=b['tag'])}"


def forward_compat_ok(gpu_names: list[str]) -> bool:
    pats = table("driver")["forward_compat"]["unsupported_name_patterns"]
    return bool(gpu_names) and not any(re.search(p, n or "") for n in gpu_names for p in pats)


def compat_package(cuda: tuple[int, int]) -> str:
    return table("driver")["forward_compat"]["package"].format(major=cuda[0], minor=cuda[1])
