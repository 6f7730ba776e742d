"""Checks: pure functions of a snapshot -> findings {id, severity, section, message, fix}.

Each check is registered with a stable id and section; it yields findings whose message carries the
facts (versions, devices, paths) and whose fix says what to do. No check touches the machine, so a
snapshot recorded on an H200 is judged the same on a laptop (`diagnose env --from FILE`).
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, NamedTuple

from probes.schema import SEVERITIES, finding


class Check(NamedTuple):
    id: str
    section: str
    summary: str
    fn: Callable[[dict], Iterable[tuple[str, str, str]]]   # yields (severity, message, fix)


CHECKS: list[Check] = []


def check(id: str, section: str, summary: str):
    def register(fn):
        CHECKS.append(Check(id, section, summary, fn))
        return fn
    return register


def run_checks(snap: dict) -> list[dict]:
    """All findings, errors first. A check that crashes on odd data becomes a finding, never a crash."""
    out = []
    for c in CHECKS:
        try:
            for severity, message, fix in c.fn(snap) or ():
                out.append(finding(c.id, severity, c.section, message, fix))
        except Exception as e:  # malformed snapshot (e.g. a hand-edited file): report which check and why
            out.append(finding("probe.check-crashed", "warning", "probe",
                               f"check {c.id} could not read this snapshot: {type(e).__name__}: {e}",
                               "Record the snapshot again with `diagnose env --json`."))
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(out, key=lambda f: order[f["severity"]])


# -- helpers -------------------------------------------------------------------------------------------

def ver(text) -> tuple[int, ...]:
    """'12.8' -> (12, 8); '570.124.06' -> (570, 124, 6); '2.13.0+cpu' -> (2, 13, 0); junk -> ()."""
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text or ""))
    return tuple(int(x) for x in m[1].split(".")) if m else ()


def cc_tuple(cc) -> tuple[int, int] | None:
    m = re.fullmatch(r"(?:sm_|compute_)?(\d{1,2})\.?(\d)[af]?", str(cc or "").strip())
    return (int(m[1]), int(m[2])) if m else None


def gpus(s):
    return [g for g in s.get("gpus") or [] if isinstance(g, dict)]


def driver(s):
    return s.get("driver") or {}


def fw(s, name):
    return (s.get("frameworks") or {}).get(name) or {}


def env(s):
    return s.get("env") or {}


def tools(s, tool):
    return [t for t in s.get("toolkits") or [] if t.get("tool") == tool and t.get("version")]


def first_on_path(s, tool):
    on = [t for t in tools(s, tool) if t.get("via") == "PATH" and t.get("path_order") is not None]
    return min(on, key=lambda t: t["path_order"]) if on else None


def main_nvcc(s):
    """The nvcc a build would use: CUDA_HOME's, else the first on PATH, else any found."""
    home = env(s).get("CUDA_HOME") or env(s).get("CUDA_PATH")
    if home:
        for t in tools(s, "nvcc"):
            if t["path"].startswith(home.rstrip("/") + "/"):
                return t
    return first_on_path(s, "nvcc") or next(iter(tools(s, "nvcc")), None)


def cuda_major_minor(v) -> tuple[int, int] | None:
    t = ver(v)
    return (t[0], t[1] if len(t) > 1 else 0) if t else None


def gib(n) -> str:
    return f"{n / 2**30:.1f} GiB" if isinstance(n, (int, float)) else "?"


def gpu_label(g) -> str:
    return f"GPU {g.get('index', '?')} ({g.get('name', 'unknown')}, CC {g.get('compute_capability', '?')})"


# Minimum Linux driver for a CUDA major under minor-version compatibility; newest CUDA each driver
# branch supports natively (CUDA release notes, table 3 "toolkit driver version").
MIN_DRIVER_FOR_MAJOR = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580, 0, 0)}
NATIVE_DRIVER = [((11, 8), (520, 61, 5)), ((12, 0), (525, 60, 13)), ((12, 1), (530, 30, 2)),
                 ((12, 2), (535, 54, 3)), ((12, 3), (545, 23, 6)), ((12, 4), (550, 54, 14)),
                 ((12, 5), (555, 42, 2)), ((12, 6), (560, 28, 3)), ((12, 8), (570, 26, 0)),
                 ((12, 9), (575, 51, 3)), ((13, 0), (580, 65, 6))]

# nvcc version -> (lowest, highest) compute capability it can target.
NVCC_ARCH_RANGE = [((11, 8), (3, 5), (9, 0)), ((12, 0), (5, 0), (9, 0)), ((12, 8), (5, 0), (12, 0)),
                   ((12, 9), (5, 0), (12, 1)), ((13, 0), (7, 5), (12, 1))]

# nvcc version -> newest host gcc major / clang major it accepts (CUDA installation guide, per release).
HOST_COMPILER_MAX = [((11, 8), 11, 14), ((12, 0), 12, 14), ((12, 4), 13, 17), ((12, 8), 14, 19), ((13, 0), 15, 20)]


def _range_for(table, v):
    best = None
    for key, *vals in table:
        if v >= key:
            best = vals
    return best


def driver_verdict(s, what: str, cuda_version) -> Iterable[tuple[str, str, str]]:
    """Can this driver run code built with `cuda_version`? Natively, under minor-version compat, or not."""
    d = driver(s)
    want = cuda_major_minor(cuda_version)
    have_cuda = cuda_major_minor(d.get("cuda_version"))
    have_drv = ver(d.get("version"))
    if not want or not have_drv:
        return
    if have_cuda and have_cuda >= want:
        return
    floor = MIN_DRIVER_FOR_MAJOR.get(want[0])
    native = next((drv for c, drv in NATIVE_DRIVER if c >= want), None)
    supports = f" (supports CUDA up to {d['cuda_version']})" if d.get("cuda_version") else ""
    if floor and have_drv >= floor and (not have_cuda or have_cuda[0] == want[0]):
        yield ("warning",
               f"driver {d['version']}{supports} is older than {what} (CUDA {cuda_version}): it runs only under "
               f"CUDA minor-version compatibility: PTX built by CUDA {cuda_version} cannot be JIT-compiled and APIs "
               "newer than the driver fail with cudaErrorCallRequiresNewerDriver",
               f"Upgrade the driver to {'.'.join(map(str, native)) if native else 'a newer branch'} or newer, "
               f"or use a build for CUDA {have_cuda[0]}.{have_cuda[1] if have_cuda else ''}.".replace("..", "."))
    else:
        need = ".".join(map(str, floor)) if floor else "a newer one"
        yield ("error",
               f"driver {d['version']}{supports} is too old for {what} built with CUDA {cuda_version}: "
               f"CUDA {want[0]}.x needs driver >= {need}; expect 'CUDA driver version is insufficient for CUDA "
               "runtime version'",
               f"Upgrade the NVIDIA driver to >= {need} (ideally {'.'.join(map(str, native)) if native else 'the latest'}), "
               f"or install a {what} build for the CUDA version the driver supports.")


def arch_covers(arch_list: list[str], cc: str) -> str:
    """'sass' when some sm_XY runs on cc (same major, minor <=, arch-specific 'a' only on its own CC),
    'ptx' when only a compute_XY <= cc can be JIT-compiled, '' when nothing can run."""
    want = cc_tuple(cc)
    if not want:
        return "sass"
    ptx = False
    for a in arch_list:
        got = cc_tuple(a)
        if not got:
            continue
        specific = bool(re.search(r"\d[af]$", a))
        if a.startswith("compute_"):
            if got <= want and not specific:
                ptx = True
        elif got[0] == want[0] and got[1] <= want[1] and (not specific or got == want):
            return "sass"
    return "ptx" if ptx else ""


def _expects_gpu(s) -> bool:
    """Does this machine look meant for GPU work (a CUDA build, a CUDA toolkit or a GPU visible)?"""
    return bool(gpus(s) or fw(s, "torch").get("cuda") or (s.get("probes") or {}).get("nvidia_smi", {}).get("output"))


# -- probe: what could not be learnt ---------------------------------------------------------------------

@check("probe.nvml-unavailable", "probe", "NVML (libnvidia-ml) could not be loaded or initialised")
def _nvml_unavailable(s):
    p = (s.get("probes") or {}).get("nvml") or {}
    if not p.get("error") or p.get("timeout"):
        return
    kind = p.get("error_type") or ""
    if kind in ("NVMLError_LibraryNotFound", "LibraryNotLoadable"):
        how = f"nvmlInit() raised {kind} ({p['error']})" if kind != "LibraryNotLoadable" else p["error"]
        yield ("error" if _expects_gpu(s) else "warning",
               f"no NVIDIA driver: {how}; GPU facts (devices, ECC, clocks) are unknown", "On a GPU machine install the NVIDIA driver (check `ls /dev/nvidia*` and "
               "`ldconfig -p | grep libnvidia-ml`); in a container run it with `--gpus all` / the NVIDIA runtime.")
    elif kind in ("NVMLError_DriverNotLoaded",):
        yield ("error", f"the NVIDIA kernel module is not loaded: {p['error']}",
               "Load it (`sudo modprobe nvidia`) or reboot after a driver install; check `dmesg | grep -i nvidia`.")
    elif "Mismatch" in kind or "mismatch" in p["error"]:
        yield ("error", f"NVML: driver/library version mismatch ({p['error']}): the kernel module and the user-space "
               "driver differ, usually after a driver upgrade without a reboot",
               "Reboot (or unload and reload the nvidia kernel modules) so both are the same version.")
    elif kind.startswith("NVMLError_NoPermission"):
        yield ("error", f"no permission to use the GPU: {p['error']}",
               "Add the user to the group owning /dev/nvidia* (often `video`), or fix the container's device mounts.")
    else:
        yield ("warning", f"NVML failed at {p.get('stage', '?')}: {kind or 'error'}: {p['error']}",
               "Run `nvidia-smi` to see whether the driver answers; reinstall nvidia-ml-py if the import failed.")


@check("probe.cuda-driver-unavailable", "probe", "the CUDA driver API (cuInit) could not be used")
def _cuinit(s):
    p = (s.get("probes") or {}).get("cuda") or {}
    ci = p.get("cuinit") or {}
    if p.get("error") and not p.get("timeout"):
        yield ("warning", f"the cuda-bindings probe failed at {p.get('stage', '?')}: {p['error']}",
               "Install cuda-bindings (`pip install cuda-bindings`) to read device attributes such as SM count "
               "and the opt-in shared-memory limit.")
        return
    if ci.get("error"):
        sev = "error" if gpus(s) else ("warning" if _expects_gpu(s) else "info")
        what = "the CUDA driver API is unavailable" if p.get("skipped") else "cuInit(0) failed"
        yield (sev, f"{what}: {ci.get('error_type', 'error')}: {ci['error']}",
               "Without libcuda.so.1 no CUDA program can run here: install the NVIDIA driver (or mount it into "
               "the container); if GPUs are listed by nvidia-smi, check that libcuda.so.1 is on the loader path.")


@check("probe.runtime-insufficient-driver", "probe", "the CUDA runtime reports error 35 (insufficient driver)")
def _rt35(s):
    rt = ((s.get("probes") or {}).get("cuda") or {}).get("runtime") or {}
    err = rt.get("device_count_error") or ""
    if "35" in err or "InsufficientDriver" in err:
        linked = rt.get("runtime_version")
        yield ("error" if gpus(s) else "info",
               f"cudaGetDeviceCount() returned {err}: the CUDA runtime "
               f"{_cuda_int(linked) if linked else ''} found no driver new enough (or no driver at all)".replace("  ", " "),
               "Install or upgrade the NVIDIA driver to one that supports the runtime's CUDA version.")
    elif err:
        yield ("error" if gpus(s) else "warning", f"cudaGetDeviceCount() returned {err}",
               "Check the driver with `nvidia-smi`; see the CUDA runtime error table for this code.")


def _cuda_int(v) -> str:
    return f"{v // 1000}.{v % 1000 // 10}" if isinstance(v, int) and v else str(v)


@check("probe.timeout", "probe", "a probe hung and was killed")
def _probe_timeout(s):
    for name, p in sorted((s.get("probes") or {}).items()):
        if isinstance(p, dict) and p.get("timeout"):
            yield ("error", f"the {name} probe did not answer in time and was killed: {p.get('error', '')}",
                   "A hung driver call usually means a GPU in a bad state: check `dmesg` for Xid errors; a GPU reset "
                   "(`nvidia-smi -r`) or a reboot may be needed.")


@check("probe.nvidia-smi-failed", "probe", "nvidia-smi is present but failed")
def _smi(s):
    p = (s.get("probes") or {}).get("nvidia_smi") or {}
    if p.get("path") and (p.get("returncode") or p.get("error")) and not p.get("timeout"):
        yield ("error", f"{p['path']} failed (exit {p.get('returncode', '?')}): "
               f"{(p.get('output') or p.get('error') or '').strip()[-300:]}",
               "Read its message: 'couldn't communicate with the NVIDIA driver' means the kernel module is not loaded.")


@check("probe.torch-import-failed", "probe", "torch is installed but `import torch` failed")
def _torch_import(s):
    p = (s.get("probes") or {}).get("torch_import") or {}
    if p.get("error"):
        yield ("error", f"torch {fw(s, 'torch').get('version', '')} is installed but importing it failed: {p['error']}",
               "Reinstall torch in this environment; an ImportError naming a .so usually means a CUDA library "
               "(nvidia-*-cu12 wheel) is missing or mismatched.")


# -- driver ------------------------------------------------------------------------------------------------

@check("driver.too-old-for-torch", "driver", "driver older than the CUDA torch was built with")
def _drv_torch(s):
    t = fw(s, "torch")
    if t.get("cuda"):
        yield from driver_verdict(s, f"torch {t.get('version', '')}", t["cuda"])


@check("driver.too-old-for-cuda-bindings", "driver", "driver older than cuda-bindings' CUDA major needs")
def _drv_bindings(s):
    v = ver(fw(s, "cuda-bindings").get("version") or (s.get("packages") or {}).get("cuda-bindings"))
    if v:
        yield from driver_verdict(s, f"cuda-bindings {'.'.join(map(str, v))}", f"{v[0]}.0")


@check("driver.too-old-for-nvcc", "driver", "driver older than the nvcc used to build kernels")
def _drv_nvcc(s):
    t = main_nvcc(s)
    if t:
        yield from driver_verdict(s, f"binaries from nvcc {t['version']} ({t['path']})",
                                  ".".join(map(str, ver(t["version"])[:2])))


@check("driver.too-old-for-jax", "driver", "driver older than the jax CUDA plugin needs")
def _drv_jax(s):
    for name, v in sorted((fw(s, "jax").get("plugins") or {}).items()):
        m = re.match(r"jax-cuda(\d+)-", name)
        if m:
            yield from driver_verdict(s, f"{name} {v}", f"{m[1]}.0")


@check("driver.too-old-for-cupy", "driver", "driver older than the cupy wheel's CUDA major")
def _drv_cupy(s):
    for name in sorted((fw(s, "cupy").get("packages") or {})):
        m = re.match(r"cupy-cuda(\d\d)x", name)
        if m:
            yield from driver_verdict(s, name, f"{m[1]}.0")


@check("driver.ptx-newer-than-driver", "driver", "PTX from a newer toolkit than the driver can JIT")
def _ptx_jit(s):
    d = driver(s)
    have = cuda_major_minor(d.get("cuda_version"))
    t = main_nvcc(s)
    if have and t and cuda_major_minor(t["version"]) and cuda_major_minor(t["version"]) > have:
        yield ("warning", f"nvcc {t['version']} emits PTX ISA newer than driver {d.get('version', '?')} (CUDA "
               f"{d['cuda_version']}) can JIT-compile: PTX-only code (compute_XX without matching sm_XX) fails with "
               "'the provided PTX was compiled with an unsupported toolchain'",
               "Build SASS for the device (`-gencode arch=compute_XY,code=sm_XY`), or upgrade the driver, or use a "
               f"toolkit no newer than CUDA {d['cuda_version']}.")


@check("driver.triton-ptxas-newer-than-driver", "driver", "Triton's bundled ptxas is newer than the driver")
def _triton_ptxas(s):
    t = fw(s, "triton")
    d = driver(s)
    have, pv = cuda_major_minor(d.get("cuda_version")), cuda_major_minor(t.get("ptxas_version"))
    if have and pv and pv[0] > have[0]:
        yield ("error", f"Triton {t.get('version')} compiles with its bundled ptxas {t['ptxas_version']} (CUDA {pv[0]}.x) "
               f"but driver {d.get('version')} supports CUDA {d['cuda_version']}: its cubins will not load",
               "Upgrade the driver, or point TRITON_PTXAS_PATH at a ptxas from a toolkit the driver supports.")


# -- gpu --------------------------------------------------------------------------------------------------------

@check("gpu.none-visible", "gpu", "the driver answers but lists no GPU")
def _no_gpu(s):
    p = (s.get("probes") or {}).get("nvml") or {}
    if driver(s).get("version") and not gpus(s) and not p.get("error"):
        yield ("error", f"driver {driver(s)['version']} is loaded but reports 0 GPUs",
               "Check `nvidia-smi -L`; in a container pass the devices (`--gpus all`); check NVIDIA_VISIBLE_DEVICES.")


@check("gpu.arch-not-in-torch", "gpu", "the device's compute capability is not in torch's arch list")
def _arch_torch(s):
    t = fw(s, "torch")
    arch = t.get("arch_list") or []
    if not t.get("cuda") or not arch:
        return
    for g in gpus(s):
        cc = g.get("compute_capability")
        got = arch_covers(arch, cc) if cc else "sass"
        if got == "":
            yield ("error", f"{gpu_label(g)} is not covered by torch {t.get('version')} (built for {' '.join(arch)}): "
                   f"expect 'no kernel image is available for execution on the device'",
                   f"Install a torch build whose arch list includes sm_{cc.replace('.', '')} (newer CUDA wheels cover "
                   "newer GPUs), or build from source with TORCH_CUDA_ARCH_LIST set to this CC.")
        elif got == "ptx":
            yield ("warning", f"{gpu_label(g)} runs torch {t.get('version')} only through PTX JIT (arch list: "
                   f"{' '.join(arch)}): the first launch of each kernel compiles for minutes and runs slower",
                   f"Install a torch build with sm_{cc.replace('.', '')} SASS; keep CUDA_CACHE_PATH on a persistent disk.")


@check("gpu.triton-cc-too-old", "gpu", "Triton on a GPU below compute capability 8.0")
def _triton_cc(s):
    t = fw(s, "triton")
    if not t:
        return
    for g in gpus(s):
        c = cc_tuple(g.get("compute_capability"))
        if c and c < (8, 0):
            yield ("warning", f"Triton {t.get('version')} on {gpu_label(g)}: Triton targets CC >= 8.0 for bf16, "
                   "tl.dot with tensor cores and most tuned kernels; older GPUs fail to compile or fall back",
                   "Run Triton kernels on an Ampere (CC 8.0) or newer GPU, or use fp16/fp32 paths without bf16.")


@check("gpu.nvcc-cannot-target", "gpu", "the nvcc in use cannot target the device's architecture")
def _nvcc_target(s):
    t = main_nvcc(s)
    if not t:
        return
    rng = _range_for(NVCC_ARCH_RANGE, ver(t["version"])[:2])
    if not rng:
        return
    lo, hi = rng
    for g in gpus(s):
        c = cc_tuple(g.get("compute_capability"))
        if c and c < lo:
            yield ("error", f"nvcc {t['version']} ({t['path']}) starts at sm_{lo[0]}{lo[1]}; {gpu_label(g)} is older: "
                   f"expect 'Unsupported gpu architecture'", f"Use a CUDA toolkit that still supports "
                   f"sm_{c[0]}{c[1]} (CUDA 12.x for sm_50..sm_72) for this GPU.")
        elif c and c > hi:
            yield ("error", f"nvcc {t['version']} ({t['path']}) knows architectures up to sm_{hi[0]}{hi[1]}; "
                   f"{gpu_label(g)} is newer", "Install a newer CUDA toolkit (12.8+ for Blackwell) and put it first.")


@check("gpu.arch-specific-mismatch", "gpu", "sm_XXa (arch-specific) code built for a different CC")
def _sm90a(s):
    want = set()
    for a in re.split(r"[;\s,]+", env(s).get("TORCH_CUDA_ARCH_LIST", "")):
        if re.fullmatch(r"\d+\.\d[af](?:\+PTX)?", a):
            want.add(a.split("+")[0])
    for a in fw(s, "torch").get("arch_list") or []:
        if re.fullmatch(r"sm_\d+[af]", a):
            c = cc_tuple(a)
            want.add(f"{c[0]}.{c[1]}{a[-1]}")
    for a in sorted(want):
        c = cc_tuple(a)
        for g in gpus(s):
            gc = cc_tuple(g.get("compute_capability"))
            if gc and c and (gc != c if a.endswith("a") else gc[0] != c[0] or gc < c):
                yield ("error", f"arch-specific target {a} (sm_{c[0]}{c[1]}{a[-1]}) runs only on CC "
                       f"{c[0]}.{c[1]}{'' if a.endswith('a') else ' family'}; {gpu_label(g)} cannot run it",
                       f"Build for sm_{gc[0]}{gc[1]} too (`-gencode arch=compute_{gc[0]}{gc[1]},code=sm_{gc[0]}{gc[1]}`), "
                       "or add a plain compute_XY PTX target.")


def _ecc(g):
    return g.get("ecc") or {}


@check("gpu.ecc-uncorrectable", "gpu", "uncorrectable ECC errors since the last reboot")
def _ecc_unc(s):
    for g in gpus(s):
        n = _ecc(g).get("volatile_uncorrected")
        if isinstance(n, int) and n > 0:
            yield ("error", f"{gpu_label(g)} has {n} uncorrectable ECC error(s) since boot: results on it cannot be trusted",
                   "Drain the GPU, check `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER` and `dmesg` for Xid 48/63/64, "
                   "reset it; repeated errors mean an RMA.")


@check("gpu.ecc-corrected", "gpu", "many corrected ECC errors")
def _ecc_corr(s):
    for g in gpus(s):
        n = _ecc(g).get("volatile_corrected")
        if isinstance(n, int) and n >= 100:
            yield ("warning", f"{gpu_label(g)} corrected {n} single-bit ECC errors since boot: memory is degrading",
                   "Watch the count; schedule a GPU health check (dcgmi diag -r 3) before it turns uncorrectable.")


@check("gpu.ecc-disabled", "gpu", "ECC off on a GPU that supports it")
def _ecc_off(s):
    for g in gpus(s):
        e = _ecc(g)
        if e.get("enabled") is False and not e.get("pending"):
            yield ("info", f"{gpu_label(g)} has ECC disabled: memory errors go undetected",
                   "Enable it for long runs: `sudo nvidia-smi -i N -e 1` and reboot.")


@check("gpu.ecc-pending", "gpu", "an ECC mode change waits for a reboot")
def _ecc_pending(s):
    for g in gpus(s):
        e = _ecc(g)
        if "enabled" in e and "pending" in e and e["enabled"] != e["pending"]:
            yield ("warning", f"{gpu_label(g)}: ECC is {'on' if e['enabled'] else 'off'} now but "
                   f"{'on' if e['pending'] else 'off'} after the next reboot; memory size and speed will change",
                   "Reboot (or reset the GPU) to apply the pending ECC mode before benchmarking.")


@check("gpu.retired-pages-pending", "gpu", "memory pages wait to be retired")
def _rp_pending(s):
    for g in gpus(s):
        if (g.get("retired_pages") or {}).get("pending"):
            yield ("error", f"{gpu_label(g)} has retired pages pending: the bad memory is still in use until a reset",
                   "Reset the GPU (`nvidia-smi -r -i N`) or reboot to retire them.")


@check("gpu.retired-pages", "gpu", "memory pages retired for ECC errors")
def _rp(s):
    for g in gpus(s):
        rp = g.get("retired_pages") or {}
        dbe, sbe = rp.get("double_bit_ecc") or 0, rp.get("single_bit_ecc") or 0
        if dbe + sbe > 0:
            yield ("error" if dbe + sbe >= 60 else "warning",
                   f"{gpu_label(g)} has retired {dbe} page(s) for double-bit and {sbe} for single-bit ECC errors",
                   "At 60+ retired pages (or any on a new GPU) ask for an RMA; run `dcgmi diag -r 3`.")


@check("gpu.row-remap-failure", "gpu", "row remapping failed")
def _rr_fail(s):
    for g in gpus(s):
        rr = g.get("remapped_rows") or {}
        if rr.get("failure"):
            yield ("error", f"{gpu_label(g)}: a row remapping failed (no spare rows left; uncorrectable: "
                   f"{rr.get('uncorrected', '?')}): the memory is faulty", "Take the GPU out of service and ask for an RMA.")


@check("gpu.row-remap-pending", "gpu", "a row remapping waits for a reset")
def _rr_pending(s):
    for g in gpus(s):
        rr = g.get("remapped_rows") or {}
        if rr.get("pending") and not rr.get("failure"):
            yield ("warning", f"{gpu_label(g)} has a row remapping pending ({rr.get('uncorrected', 0)} uncorrectable, "
                   f"{rr.get('corrected', 0)} correctable remaps)", "Reset the GPU (`nvidia-smi -r -i N`) to apply it.")


SLOWDOWN = {"hw_slowdown": "hardware slowdown", "hw_thermal_slowdown": "hardware thermal slowdown",
            "sw_thermal_slowdown": "software thermal slowdown", "hw_power_brake_slowdown": "power-brake slowdown"}


@check("gpu.throttled", "gpu", "clocks held down by thermal or power slowdown")
def _throttle(s):
    for g in gpus(s):
        hit = [SLOWDOWN[r] for r in g.get("throttle_reasons") or [] if r in SLOWDOWN]
        if hit:
            c = g.get("clocks_mhz") or {}
            yield ("warning", f"{gpu_label(g)} is throttled ({', '.join(hit)}); SM clock {c.get('sm', '?')} of "
                   f"{c.get('sm_max', '?')} MHz, {g.get('temperature_c', '?')} C: timings are not representative",
                   "Check cooling and power (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER`); do not benchmark now.")


@check("gpu.power-capped", "gpu", "clocks limited by the software power cap")
def _power_cap(s):
    for g in gpus(s):
        if "sw_power_cap" in (g.get("throttle_reasons") or []):
            yield ("info", f"{gpu_label(g)} is at its software power cap ({g.get('power_w', '?')} W): clocks are "
                   "lowered to stay under it", "Normal under full load; if the cap was lowered, restore it with "
                   "`nvidia-smi -pl`.")


@check("gpu.temperature-high", "gpu", "GPU temperature high")
def _temp(s):
    for g in gpus(s):
        t = g.get("temperature_c")
        if isinstance(t, (int, float)) and t >= 85:
            yield ("warning", f"{gpu_label(g)} is at {t} C", "Check fans/airflow; above ~87 C clocks drop.")


@check("gpu.mig-enabled", "gpu", "MIG partitions the GPU")
def _mig(s):
    for g in gpus(s):
        m = g.get("mig") or {}
        if m.get("enabled"):
            yield ("warning", f"{gpu_label(g)} is in MIG mode: a process sees one MIG instance, with a fraction "
                   f"of the SMs and memory (memory total reported: {gib(g.get('memory_total_bytes'))})",
                   "Select an instance by its MIG UUID in CUDA_VISIBLE_DEVICES (`nvidia-smi -L`); disable MIG "
                   "(`nvidia-smi -i N -mig 0`) for whole-GPU runs.")
        elif m.get("pending") and not m.get("enabled"):
            yield ("warning", f"{gpu_label(g)}: MIG mode becomes enabled after the next GPU reset",
                   "Reset the GPU or revert with `nvidia-smi -i N -mig 0`.")


@check("gpu.persistence-off", "gpu", "persistence mode off")
def _persist(s):
    off = [g for g in gpus(s) if g.get("persistence_mode") is False]
    if off:
        yield ("info", f"persistence mode is off on {len(off)} GPU(s): each new process pays driver "
               "initialisation (up to seconds) and the first timing is skewed",
               "`sudo nvidia-smi -pm 1` (or run nvidia-persistenced).")


@check("gpu.pcie-degraded", "gpu", "PCIe link narrower than it can be")
def _pcie(s):
    for g in gpus(s):
        p = g.get("pcie") or {}
        w, wmax = p.get("width"), p.get("width_max")
        if isinstance(w, int) and isinstance(wmax, int) and 0 < w < wmax:
            yield ("warning", f"{gpu_label(g)} PCIe link runs x{w} of x{wmax} (gen {p.get('gen', '?')} of "
                   f"{p.get('gen_max', '?')}): host<->device copies are slower",
                   "Reseat the card or check the riser/slot; the generation drops at idle by design, the width does not.")


@check("gpu.memory-in-use", "gpu", "most device memory already taken")
def _mem_used(s):
    for g in gpus(s):
        tot, free = g.get("memory_total_bytes"), g.get("memory_free_bytes")
        if isinstance(tot, int) and isinstance(free, int) and tot > 0 and free < 0.1 * tot:
            yield ("warning", f"{gpu_label(g)} has {gib(free)} free of {gib(tot)}: another process holds the memory",
                   "Find it with `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` before running.")


@check("gpu.compute-mode", "gpu", "compute mode restricts processes")
def _cmode(s):
    for g in gpus(s):
        m = g.get("compute_mode")
        if m == "prohibited":
            yield ("error", f"{gpu_label(g)} is in compute mode Prohibited: no CUDA context can be created",
                   "`sudo nvidia-smi -i N -c DEFAULT`.")
        elif m in ("exclusive_process", "exclusive_thread"):
            yield ("info", f"{gpu_label(g)} is in compute mode {m}: a second process gets 'all CUDA-capable "
                   "devices are busy or unavailable'", "Expected on shared clusters; otherwise `nvidia-smi -c DEFAULT`.")


# -- toolkit ------------------------------------------------------------------------------------------------------

@check("toolkit.nvcc-missing", "toolkit", "no nvcc although a CUDA framework needs one to build extensions")
def _nvcc_missing(s):
    if fw(s, "torch").get("cuda") and not tools(s, "nvcc"):
        yield ("info", f"torch {fw(s, 'torch').get('version')} targets CUDA {fw(s, 'torch')['cuda']} but no nvcc was "
               "found on PATH, CUDA_HOME or /usr/local/cuda*: CUDA extensions (cpp_extension, JIT loads) cannot build",
               f"Install the CUDA {fw(s, 'torch')['cuda']} toolkit and set CUDA_HOME, if you build extensions.")


@check("toolkit.several-cuda-on-path", "toolkit", "several CUDA toolkit versions reachable, the first one wins")
def _several(s):
    seen: dict[str, str] = {}
    for t in sorted(tools(s, "nvcc"), key=lambda t: (t.get("path_order") is None, t.get("path_order") or 0)):
        seen.setdefault(".".join(map(str, ver(t["version"])[:2])), t["path"])
    if len(seen) > 1:
        first = main_nvcc(s)
        yield ("warning", "several CUDA toolkits are installed: " + ", ".join(f"{v} ({p})" for v, p in seen.items())
               + f"; builds use {first['version']} ({first['path']})" if first else "",
               "Set CUDA_HOME and put $CUDA_HOME/bin first on PATH (and $CUDA_HOME/lib64 first on LD_LIBRARY_PATH) "
               "for the version your framework was built with.")


def _cuda_in(path: str) -> str | None:
    m = re.search(r"cuda[-_]?(\d+\.\d+)", path)
    return m[1] if m else None


@check("toolkit.ld-library-path-conflict", "toolkit", "LD_LIBRARY_PATH mixes CUDA versions or disagrees with PATH")
def _ldlp(s):
    dirs = [d for d in env(s).get("LD_LIBRARY_PATH", "").split(":") if d]
    vers = []
    for d in dirs:
        v = _cuda_in(d)
        if v and v not in vers:
            vers.append(v)
    if len(vers) > 1:
        yield ("warning", f"LD_LIBRARY_PATH holds libraries of CUDA {' and '.join(vers)} (first wins: {vers[0]}): "
               "a program can load libcudart/libcublas of one version and headers/nvcc of another",
               "Keep one CUDA lib64 on LD_LIBRARY_PATH, matching the nvcc first on PATH.")
    first = first_on_path(s, "nvcc")
    pv = _cuda_in(first["realpath"]) if first else None
    if vers and pv and vers[0] != pv:
        yield ("warning", f"the first nvcc on PATH is CUDA {pv} but LD_LIBRARY_PATH puts CUDA {vers[0]} libraries first",
               f"Reorder PATH and LD_LIBRARY_PATH so both point at the same CUDA ({pv} or {vers[0]}).")


@check("toolkit.cuda-home-mismatch", "toolkit", "CUDA_HOME's nvcc differs from the first on PATH")
def _cuda_home(s):
    home = env(s).get("CUDA_HOME") or env(s).get("CUDA_PATH")
    if not home:
        return
    at_home = [t for t in tools(s, "nvcc") if t["path"].startswith(home.rstrip("/") + "/")]
    first = first_on_path(s, "nvcc")
    if not at_home:
        yield ("warning", f"CUDA_HOME={home} has no bin/nvcc: torch.utils.cpp_extension and Triton will fail to find the toolkit",
               "Point CUDA_HOME at the toolkit's root (the directory holding bin/nvcc), or unset it.")
    elif first and ver(first["version"])[:2] != ver(at_home[0]["version"])[:2]:
        yield ("warning", f"CUDA_HOME={home} holds nvcc {at_home[0]['version']} but the first nvcc on PATH "
               f"({first['path']}) is {first['version']}: extension builds and your shell disagree",
               "Put $CUDA_HOME/bin first on PATH.")


@check("toolkit.host-compiler-too-new", "toolkit", "host compiler newer than nvcc supports")
def _host_cc(s):
    t = main_nvcc(s)
    if not t:
        return
    lim = _range_for(HOST_COMPILER_MAX, ver(t["version"])[:2])
    if not lim:
        return
    gcc_max, clang_max = lim
    for tool, top in (("gcc", gcc_max), ("g++", gcc_max), ("clang", clang_max)):
        for c in tools(s, tool)[:1]:
            major = ver(c["version"])[:1]
            if major and major[0] > top:
                yield ("error", f"{tool} {c['version']} ({c['path']}) is newer than nvcc {t['version']} supports "
                       f"({tool.rstrip('+')} <= {top}): nvcc stops with 'unsupported GNU version'",
                       f"Install {tool} {top} and pass it with `-ccbin` / CUDAHOSTCXX, or use a newer CUDA toolkit.")


@check("toolkit.ptxas-nvcc-mismatch", "toolkit", "the first ptxas on PATH differs from the nvcc")
def _ptxas(s):
    n, p = first_on_path(s, "nvcc"), first_on_path(s, "ptxas")
    if n and p and ver(n["version"])[:2] != ver(p["version"])[:2]:
        yield ("warning", f"the first ptxas on PATH ({p['path']}, {p['version']}) is not the first nvcc's "
               f"({n['path']}, {n['version']}): tools calling ptxas directly assemble for another ISA",
               "Put one toolkit's bin directory first on PATH.")


@check("toolkit.torch-nvcc-major-mismatch", "toolkit", "nvcc's CUDA major differs from torch's")
def _torch_nvcc(s):
    t, n = fw(s, "torch"), main_nvcc(s)
    if t.get("cuda") and n and ver(t["cuda"])[:1] != ver(n["version"])[:1]:
        yield ("warning", f"torch {t.get('version')} was built with CUDA {t['cuda']} but nvcc is {n['version']} "
               f"({n['path']}): cpp_extension refuses ('The detected CUDA version mismatches the version that was "
               "used to compile PyTorch')", f"Install the CUDA {t['cuda']} toolkit and set CUDA_HOME to it.")


@check("toolkit.compute-sanitizer-missing", "toolkit", "no compute-sanitizer for memcheck runs")
def _sanitizer(s):
    if tools(s, "nvcc") and not tools(s, "compute-sanitizer"):
        yield ("info", "compute-sanitizer is not installed next to nvcc: `diagnose run --sanitize` cannot run memcheck",
               "Install the toolkit's cuda-sanitizer package (e.g. `apt install cuda-sanitizer-13-0`).")


# -- frameworks ---------------------------------------------------------------------------------------------------

@check("frameworks.torch-cpu-only", "frameworks", "CPU-only torch on a machine with GPUs")
def _torch_cpu(s):
    t = fw(s, "torch")
    if t and not t.get("cuda") and not t.get("hip") and gpus(s):
        yield ("error", f"torch {t.get('version')} is a CPU-only build but {len(gpus(s))} GPU(s) are present: "
               "'Torch not compiled with CUDA enabled'",
               "Install a CUDA build, e.g. `pip install torch --index-url https://download.pytorch.org/whl/cu128`.")


@check("frameworks.torch-sees-no-gpu", "frameworks", "a CUDA torch that finds no usable GPU")
def _torch_nogpu(s):
    t = fw(s, "torch")
    if t.get("cuda") and t.get("imported") and t.get("is_available") is False and gpus(s):
        yield ("error", f"torch {t.get('version')} (CUDA {t['cuda']}) reports torch.cuda.is_available() == False "
               f"although {len(gpus(s))} GPU(s) are present", "Check CUDA_VISIBLE_DEVICES and the driver version "
               "against torch's CUDA (see the driver findings).")


@check("frameworks.torch-cudnn-missing", "frameworks", "a CUDA torch that cannot load cuDNN")
def _cudnn(s):
    t = fw(s, "torch")
    if t.get("cuda") and t.get("imported") and t.get("cudnn") is None:
        yield ("warning", f"torch {t.get('version')} (CUDA {t['cuda']}) loaded no cuDNN: convolutions fail or fall back",
               f"Install the matching nvidia-cudnn-cu{ver(t['cuda'])[0]} wheel; check LD_LIBRARY_PATH for an older libcudnn.")


@check("frameworks.jax-no-cuda-plugin", "frameworks", "jax without a CUDA plugin on a GPU machine")
def _jax_plugin(s):
    j = fw(s, "jax")
    if j and gpus(s) and not any(n.startswith("jax-cuda") for n in j.get("plugins") or {}):
        yield ("warning", f"jax {j.get('version')} has no CUDA plugin: it runs on the CPU although GPUs are present",
               "`pip install -U \"jax[cuda12]\"` (or cuda13).")


@check("frameworks.jax-plugin-mismatch", "frameworks", "jaxlib and its CUDA plugin differ in version")
def _jax_mismatch(s):
    j = fw(s, "jax")
    for n, v in sorted((j.get("plugins") or {}).items()):
        if n.startswith("jax-cuda") and n.endswith("-plugin") and j.get("jaxlib") and ver(v) != ver(j["jaxlib"]):
            yield ("error", f"{n} {v} does not match jaxlib {j['jaxlib']}: the plugin is not loaded "
                   "('jaxlib version ... is incompatible with plugin')", "Reinstall both together: "
                   f"`pip install -U \"jax[cuda{n[8:10]}]\"`.")


@check("frameworks.nvidia-wheels-mixed", "frameworks", "NVIDIA CUDA wheels of two majors installed")
def _mixed(s):
    majors = sorted({m[1] for n in s.get("packages") or {} for m in [re.search(r"^nvidia-.*-cu(\d\d)$", n)] if m})
    if len(majors) > 1:
        yield ("warning", f"NVIDIA library wheels for CUDA {' and '.join(majors)} are installed side by side: a "
               "framework may load libraries of the other major", "Uninstall the wheels of the CUDA major you do not use.")


@check("frameworks.cupy-several", "frameworks", "several cupy packages installed")
def _cupy(s):
    pk = (fw(s, "cupy").get("packages") or {})
    if len(pk) > 1:
        yield ("error", f"several cupy packages are installed ({', '.join(sorted(pk))}): they overwrite each other",
               "Uninstall all of them and install exactly one (cupy-cuda12x or cupy-cuda13x).")


@check("frameworks.pynvml-shim", "frameworks", "the deprecated pynvml package is installed")
def _pynvml(s):
    if "pynvml" in (s.get("packages") or {}):
        yield ("info", f"the PyPI package pynvml {s['packages']['pynvml']} is a deprecated shim over nvidia-ml-py; "
               "both install pynvml.py and may shadow each other", "`pip uninstall pynvml && pip install nvidia-ml-py`.")


@check("frameworks.triton-without-gpu-backend", "frameworks", "Triton with no NVIDIA GPU to run on")
def _triton_nogpu(s):
    t = fw(s, "triton")
    if t and not gpus(s):
        yield ("info", f"triton {t.get('version')} is installed but no GPU is visible: kernels can be compiled "
               "(to PTX/cubin) but launching them fails with '0 active drivers'",
               "Run on a GPU machine, or set TRITON_INTERPRET=1 for a (slow, not bit-exact) CPU interpreter.")


# -- env ------------------------------------------------------------------------------------------------------------

@check("env.cuda-visible-devices-hides-all", "env", "CUDA_VISIBLE_DEVICES hides every GPU")
def _cvd_none(s):
    v = env(s).get("CUDA_VISIBLE_DEVICES")
    if v is None:
        return
    entries = [e.strip() for e in v.split(",")]
    n = len(gpus(s))
    if v.strip() in ("", "-1", "NoDevFiles", "none") or (n and all(e.isdigit() and int(e) >= n for e in entries)):
        yield ("error" if n or _expects_gpu(s) else "warning",
               f"CUDA_VISIBLE_DEVICES={v!r} hides every GPU{f' (the machine has {n})' if n else ''}: CUDA reports "
               "'no CUDA-capable device is detected'", "Unset it or list real indices/UUIDs (`nvidia-smi -L`).")


@check("env.cuda-visible-devices-invalid", "env", "CUDA_VISIBLE_DEVICES names a device that does not exist")
def _cvd_bad(s):
    v = env(s).get("CUDA_VISIBLE_DEVICES")
    n = len(gpus(s))
    if not v or not n:
        return
    entries = [e.strip() for e in v.split(",") if e.strip()]
    uuids = {str(g.get("uuid")) for g in gpus(s)}
    bad = [e for e in entries if (e.isdigit() and int(e) >= n) or
           (e.startswith(("GPU-", "MIG-")) and not any(u.startswith(e) for u in uuids) and e.startswith("GPU-"))]
    if bad and len(bad) < len(entries):
        yield ("warning", f"CUDA_VISIBLE_DEVICES={v!r}: {', '.join(bad)} do(es) not exist on this {n}-GPU machine; "
               "CUDA stops at the first invalid entry, so the devices after it are hidden too",
               "List only existing indices/UUIDs (`nvidia-smi -L`).")


@check("env.cuda-launch-blocking", "env", "CUDA_LAUNCH_BLOCKING left on")
def _clb(s):
    if env(s).get("CUDA_LAUNCH_BLOCKING", "0") not in ("", "0"):
        yield ("warning", f"CUDA_LAUNCH_BLOCKING={env(s)['CUDA_LAUNCH_BLOCKING']}: every kernel launch waits for the "
               "GPU; any timing taken now is invalid", "Unset it except while locating an asynchronous CUDA error.")


@check("env.triton-interpret", "env", "TRITON_INTERPRET left on")
def _ti(s):
    if env(s).get("TRITON_INTERPRET", "0") not in ("", "0"):
        yield ("warning", "TRITON_INTERPRET=1: Triton kernels run in the numpy interpreter, not on the GPU; timings are "
               "meaningless and device asserts/out-of-bounds behave differently", "Unset TRITON_INTERPRET.")


@check("env.torch-cuda-arch-list-misses-device", "env", "TORCH_CUDA_ARCH_LIST omits the device's arch")
def _tcal(s):
    v = env(s).get("TORCH_CUDA_ARCH_LIST")
    if not v:
        return
    archs = []
    for a in re.split(r"[;\s,]+", v):
        m = re.fullmatch(r"(\d+)\.(\d)([af]?)(\+PTX)?", a)
        if m:
            archs.append(f"sm_{m[1]}{m[2]}{m[3]}")
            if m[4]:
                archs.append(f"compute_{m[1]}{m[2]}")
    for g in gpus(s):
        cc = g.get("compute_capability")
        if cc and archs and not arch_covers(archs, cc):
            yield ("error", f"TORCH_CUDA_ARCH_LIST={v!r} does not include {gpu_label(g)}: extensions built here "
                   "fail with 'no kernel image is available'", f"Add {cc} to TORCH_CUDA_ARCH_LIST and rebuild.")


@check("env.memory-caching-off", "env", "PyTorch's CUDA caching allocator disabled")
def _nocache(s):
    if env(s).get("PYTORCH_NO_CUDA_MEMORY_CACHING", "0") not in ("", "0"):
        yield ("warning", "PYTORCH_NO_CUDA_MEMORY_CACHING=1: every allocation goes to cudaMalloc; runs are slow and "
               "memory figures differ from normal runs", "Unset it unless you are debugging memory with a sanitizer.")


@check("env.cuda-cache-disabled", "env", "the CUDA JIT cache is disabled")
def _jitcache(s):
    if env(s).get("CUDA_CACHE_DISABLE", "0") not in ("", "0"):
        yield ("warning", "CUDA_CACHE_DISABLE=1: PTX is JIT-compiled again in every process (slow starts, skewed timings)",
               "Unset CUDA_CACHE_DISABLE.")


@check("env.nccl-transport-disabled", "env", "NCCL transports disabled")
def _nccl(s):
    off = [k for k in ("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NVLS_ENABLE")
           if env(s).get(k) in (("1",) if k != "NCCL_NVLS_ENABLE" else ("0",))]
    if off:
        yield ("info", f"{', '.join(f'{k}={env(s)[k]}' for k in off)}: collectives use slower transports",
               "Remove these unless they work around a known hang; NCCL_DEBUG=INFO shows the chosen transport.")


@check("env.cuda-device-order", "env", "CUDA and nvidia-smi may number GPUs differently")
def _order(s):
    if len(gpus(s)) > 1 and env(s).get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID" and env(s).get("CUDA_VISIBLE_DEVICES"):
        names = {g.get("name") for g in gpus(s)}
        if len(names) > 1:
            yield ("info", f"mixed GPUs ({', '.join(sorted(map(str, names)))}) and CUDA_VISIBLE_DEVICES set without "
                   "CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA orders fastest first, nvidia-smi by PCI bus",
                   "export CUDA_DEVICE_ORDER=PCI_BUS_ID")


@check("env.xla-preallocate", "env", "JAX preallocates most GPU memory")
def _xla(s):
    if fw(s, "jax") and gpus(s) and env(s).get("XLA_PYTHON_CLIENT_PREALLOCATE", "").lower() not in ("false", "0") \
            and "torch" in (s.get("frameworks") or {}):
        yield ("info", "jax and torch are both installed and JAX preallocates 75% of GPU memory on first use: "
               "torch in the same process then runs out of memory", "export XLA_PYTHON_CLIENT_PREALLOCATE=false "
               "when mixing frameworks.")


# -- host ----------------------------------------------------------------------------------------------------------

@check("host.disk-low-for-caches", "host", "little disk space where kernel caches are written")
def _disk(s):
    seen = set()
    for name, d in sorted(((s.get("host") or {}).get("disk") or {}).items()):
        free = d.get("free_bytes")
        if not isinstance(free, int) or (d.get("checked"), free) in seen:
            continue
        seen.add((d.get("checked"), free))
        if free < 1 << 30:
            yield ("error", f"{gib(free)} free on the disk holding the {name} cache ({d.get('path')}): compiles fail "
                   "with 'No space left on device'", f"Free space or point the cache elsewhere "
                   f"({'TRITON_CACHE_DIR' if name == 'triton' else 'TORCHINDUCTOR_CACHE_DIR' if name == 'torchinductor' else 'CUDA_CACHE_PATH' if name == 'cuda_jit' else 'TMPDIR'}).")
        elif free < 5 << 30:
            yield ("warning", f"only {gib(free)} free on the disk holding the {name} cache ({d.get('path')})",
                   "Free some space before long autotuning or compile runs.")


@check("host.memory-low", "host", "little host memory available")
def _hostmem(s):
    m = (s.get("host") or {}).get("memory") or {}
    a = m.get("available_bytes")
    if isinstance(a, int) and a < 2 << 30:
        yield ("warning", f"{gib(a)} of host memory available (of {gib(m.get('total_bytes'))}): compilation and data "
               "loading may be OOM-killed (exit -9)", "Close other jobs or run on a larger machine.")


@check("host.glibc-old", "host", "glibc older than current framework wheels need")
def _glibc(s):
    g = ver((s.get("host") or {}).get("glibc"))
    if g and g < (2, 28):
        yield ("warning", f"glibc {'.'.join(map(str, g))} is older than 2.28 (manylinux_2_28): recent torch, jaxlib and "
               "triton wheels do not install or fail with 'GLIBC_2.28 not found'", "Use a newer OS image or a container.")


@check("host.wsl", "host", "running under WSL")
def _wsl(s):
    if (s.get("host") or {}).get("wsl"):
        yield ("info", "running under WSL2: the driver is the Windows host's; libcuda comes from /usr/lib/wsl/lib and "
               "NVML reports less (no ECC/clock details)", "Install the driver on Windows only, never inside WSL.")


@check("host.python-old", "host", "Python older than current frameworks support")
def _py(s):
    p = ver((s.get("host") or {}).get("python"))
    if p and p < (3, 10):
        yield ("warning", f"Python {'.'.join(map(str, p))}: torch >= 2.6, jax >= 0.4.31 and triton 3.x need Python >= 3.10",
               "Use Python 3.10 or newer.")
