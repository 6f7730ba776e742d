"""Section `driver`: is the driver new enough for every CUDA build on this machine? One row per cause."""
from __future__ import annotations

import re

from diagnose.env import builds
from diagnose.env.registry import check, hit
from diagnose.env.snap import (cuda, cuda_mm, driver, fw, live_gpus, main_nvcc, packages, ver, vstr)
from diagnose.env.tables import table


def driver_cuda(s) -> tuple[int, int] | None:
    """The newest CUDA the driver in use runs: NVML's figure, or cuDriverGetVersion's when that is newer
    (a forward-compatibility libcuda from cuda-compat reports the newer one)."""
    a, b = cuda_mm(driver(s).get("cuda_version")), cuda_mm(cuda(s).get("driver_api_version"))
    return max((x for x in (a, b) if x), default=None)


def forward_compat(s) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """(NVML's CUDA, the libcuda's CUDA) when a forward-compatibility libcuda is in use."""
    a, b = cuda_mm(driver(s).get("cuda_version")), cuda_mm(cuda(s).get("driver_api_version"))
    return (a, b) if a and b and b > a else None


def torch_works(s) -> bool:
    """Observed: torch was imported and saw a GPU. That overrides any static verdict about torch."""
    t = fw(s, "torch")
    return t.get("imported") is True and t.get("is_available") is True and isinstance(t.get("device_count"), int) \
        and t["device_count"] > 0


def consumers(s) -> list[dict]:
    """Everything here that needs a CUDA version from the driver: {what, cuda, kind}."""
    out = []
    t = fw(s, "torch")
    mm = cuda_mm(t.get("cuda"))
    if mm:
        out.append({"what": f"torch {t.get('version', '')}", "cuda": mm, "kind": "torch"})
    n = main_nvcc(s)
    if n and cuda_mm(n["version"]):
        out.append({"what": f"binaries built by nvcc {n['version']} ({n['path']})", "cuda": cuda_mm(n["version"]),
                    "kind": "nvcc"})
    for name, v in sorted(packages(s).items()):
        m = re.fullmatch(r"jax-cuda(\d+)-plugin", name)
        if m:
            out.append({"what": f"{name} {v}", "cuda": (int(m[1]), 0), "kind": "jax"})
        m = re.fullmatch(r"cupy-cuda(\d\d)x", name)
        if m:
            out.append({"what": f"{name} {v}", "cuda": (int(m[1]), 0), "kind": "cupy"})
    return out


@check("too-old", "driver", "the driver is older than a CUDA build here needs", "driver-mismatch",
       folds=("env.frameworks.torch-sees-no-gpu", "env.driver.triton-ptxas-newer-than-driver",
              "env.probe.runtime-insufficient-driver"))
def _too_old(s):
    d = driver(s)
    drv = ver(d.get("version"))
    have = driver_cuda(s)
    if not drv:
        return
    rows = {"no": [], "minor-compat": []}
    observed = []
    for c in consumers(s):
        how = builds.driver_runs(have, drv, c["cuda"])
        if how in rows:
            if c["kind"] == "torch" and torch_works(s):
                observed.append(c["what"])
                continue
            rows[how].append(c)
    have_s = f" (CUDA {vstr(have)})" if have else ""
    ccs = [g["compute_capability"] for g in live_gpus(s) if isinstance(g.get("compute_capability"), str)]
    names = [str(g.get("name", "")) for g in live_gpus(s)]
    facts = {"driver": d.get("version"), "driver_cuda": vstr(have) if have else None}
    if observed:
        facts["observed_working"] = observed
    for how, cs in rows.items():
        if not cs:
            continue
        want = max(c["cuda"] for c in cs)
        native = builds.native_driver(want)
        floor = builds.minor_compat_floor_text(want[0])
        what = "; ".join(f"{c['what']} (CUDA {vstr(c['cuda'])})" for c in cs)
        fixes = []
        if how == "no":
            need = floor or "a newer branch"
            fixes.append(f"Upgrade the NVIDIA driver to >= {need}"
                         + (f" ({native} runs CUDA {vstr(want)} natively)" if native else ""))
        else:
            fixes.append(f"Upgrade the NVIDIA driver to >= {native or 'a newer branch'}")
        for c in cs:
            if c["kind"] == "torch":
                t = fw(s, "torch")
                b = builds.torch_build(ccs, have, drv, prefer=t.get("version"))
                if b:
                    fixes.append(f"or install a torch build this driver runs: `{builds.pip_torch(b)}`"
                                 + (" (under minor-version compatibility)" if b["how"] == "minor-compat" else ""))
            elif c["kind"] == "jax":
                row = next((p for p in table("jax")["plugin"] if p["cuda_major"] == c["cuda"][0]), None)
                old = table("jax")["removed"][0]
                if how == "no" and row:
                    fixes.append(f"jax[{row['extra']}] needs driver >= {row['min_driver']} (JAX {old['extra']} "
                                 f"wheels ended at {old['last']}: there is no older-CUDA JAX to fall back to)")
            elif c["kind"] == "nvcc" and have:
                fixes.append(f"or build with a CUDA {have[0]}.x toolkit no newer than {vstr(have)}")
        if how == "no" and builds.forward_compat_ok(names):
            fixes.append(f"or, on these data-center GPUs, the forward-compatibility package "
                         f"`{builds.compat_package(want)}` (NGC containers ship it)")
        fix = "; ".join(fixes) + "."
        if how == "no":
            yield hit("error", f"driver {d['version']}{have_s} is too old for {what}: expect 'CUDA driver version is "
                      "insufficient for CUDA runtime version'", fix, facts=facts,
                      evidence=[f"driver.version = {d['version']}", f"driver.cuda_version = {d.get('cuda_version')}"])
        else:
            yield hit("warning", f"driver {d['version']}{have_s} is older than {what}: it runs under CUDA "
                      "minor-version compatibility only (PTX from the newer toolkit cannot be JIT-compiled; newer "
                      "APIs fail with cudaErrorCallRequiresNewerDriver)", fix, facts=facts,
                      evidence=[f"driver.version = {d['version']}"])


@check("forward-compat", "driver", "a forward-compatibility libcuda (cuda-compat) is in use")
def _fwd(s):
    fc = forward_compat(s)
    if not fc:
        return
    nvml_cuda, lib_cuda = fc
    names = [str(g.get("name", "")) for g in live_gpus(s)]
    d = driver(s)
    if names and not builds.forward_compat_ok(names):
        yield hit("error", f"a forward-compatibility libcuda (CUDA {vstr(lib_cuda)}) is loaded over driver "
                  f"{d.get('version')} (CUDA {vstr(nvml_cuda)}), but forward compatibility is not supported on "
                  f"{', '.join(sorted(set(names)))}: CUDA calls fail with cudaErrorCompatNotSupportedOnDevice",
                  "Remove cuda-compat from the loader path (unset LD_LIBRARY_PATH entries under /usr/local/cuda/"
                  "compat) and upgrade the driver instead.", family="driver-mismatch")
    else:
        works = " torch sees the GPUs, so it works here;" if torch_works(s) else ""
        yield hit("info", f"forward compatibility in use: libcuda reports CUDA {vstr(lib_cuda)} over driver "
                  f"{d.get('version')} (CUDA {vstr(nvml_cuda)});{works} builds up to CUDA {vstr(lib_cuda)} are "
                  "judged against it",
                  "Nothing to do; keep the cuda-compat package matched to the toolkit in the image.")


@check("cuda-bindings-too-new", "driver", "cuda-bindings built for a newer CUDA major than the driver runs")
def _bindings(s):
    v = ver(fw(s, "cuda-bindings").get("version") or packages(s).get("cuda-bindings"))
    have = driver_cuda(s)
    if v and have and v[0] > have[0]:
        yield hit("info", f"cuda-bindings {vstr(v)} targets CUDA {v[0]} but the driver runs CUDA {vstr(have)}: only "
                  "code that imports cuda.bindings / cuda-python itself is affected (diagnose's own probe "
                  "tolerates it)",
                  "If your code uses cuda.bindings: " + (f"`pip install \"cuda-bindings=={have[0]}.*\"`." if have[0] >= 12
                                                         else "`pip install \"cuda-python==11.8.*\"` (cuda-bindings "
                                                              "starts at CUDA 12)."))


@check("triton-ptxas-newer-than-driver", "driver", "Triton's bundled ptxas is newer than the driver",
       "driver-mismatch")
def _triton_ptxas(s):
    t = fw(s, "triton")
    have, pv = driver_cuda(s), cuda_mm(t.get("ptxas_version"))
    if have and pv and pv[0] > have[0]:
        yield hit("error", f"Triton {t.get('version')} compiles with its bundled ptxas {t['ptxas_version']} (CUDA "
                  f"{pv[0]}.x) but driver {driver(s).get('version')} runs CUDA {vstr(have)}: its cubins will not load",
                  "Upgrade the driver, or point TRITON_PTXAS_PATH at a ptxas from a toolkit the driver supports.")
