"""Section `host`: disk, memory, glibc, Python, WSL."""
from __future__ import annotations

from diagnose.env.registry import check, hit
from diagnose.env.snap import gib, host, num, sub, ver, vstr

CACHE_VAR = {"triton": "TRITON_CACHE_DIR", "torchinductor": "TORCHINDUCTOR_CACHE_DIR", "cuda_jit": "CUDA_CACHE_PATH",
             "tmp": "TMPDIR"}


@check("disk-low-for-caches", "host", "little disk space where kernel caches are written", origin="resource-limit")
def _disk(s):
    by_disk: dict[tuple, list[str]] = {}
    for name, d in sorted(sub(host(s), "disk").items()):
        if isinstance(d, dict) and num(d.get("free_bytes")) is not None:
            by_disk.setdefault((str(d.get("checked")), d["free_bytes"]), []).append(name)
    for (checked, free), names in by_disk.items():          # one disk, one row
        what = ", ".join(f"{n} ({sub(sub(host(s), 'disk'), n).get('path')})" for n in names)
        if free < 1 << 30:
            yield hit("error", f"{gib(free)} free on the disk holding the {what} cache(s): compiles fail with 'No space "
                      "left on device'", "Free space or point the caches elsewhere ("
                      + ", ".join(CACHE_VAR.get(n, n) for n in names) + ").")
        elif free < 5 << 30:
            yield hit("warning", f"only {gib(free)} free on the disk holding the {what} cache(s)",
                      "Free some space before long autotuning or compile runs.")


@check("memory-low", "host", "little host memory available", origin="resource-limit")
def _hostmem(s):
    m = sub(host(s), "memory")
    a = num(m.get("available_bytes"))
    if a is not None and a < 2 << 30:
        yield hit("warning", f"{gib(a)} of host memory available (of {gib(m.get('total_bytes'))}): compilation and "
                  "data loading may be OOM-killed (exit -9)", "Close other jobs or run on a larger machine.")


@check("glibc-old", "host", "glibc older than current framework wheels need")
def _glibc(s):
    g = ver(host(s).get("glibc"))
    if g and g < (2, 28):
        yield hit("warning", f"glibc {vstr(g)} is older than 2.28 (manylinux_2_28): recent torch, jaxlib and triton "
                  "wheels do not install or fail with 'GLIBC_2.28 not found'", "Use a newer OS image or a container.")


@check("wsl", "host", "running under WSL")
def _wsl(s):
    if host(s).get("wsl") is True:
        yield hit("info", "running under WSL2: the driver is the Windows host's; libcuda comes from /usr/lib/wsl/lib "
                  "and NVML reports less (no ECC/clock details)", "Install the driver on Windows only, never inside "
                  "WSL.")


@check("python-old", "host", "Python older than current frameworks support")
def _py(s):
    p = ver(host(s).get("python"))
    if p and p < (3, 10):
        yield hit("warning", f"Python {vstr(p)}: torch >= 2.6, jax >= 0.4.31 and triton 3.x need Python >= 3.10",
                  "Use Python 3.10 or newer.")
