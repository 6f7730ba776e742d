"""Section `toolkit`: the CUDA toolkits and host compilers a build would use."""
from __future__ import annotations

import re

from diagnose.env.registry import check, hit
from diagnose.env.snap import env, first_on_path, fw, main_nvcc, tools, ver, vstr
from diagnose.env.tables import table


@check("nvcc-missing", "toolkit", "no nvcc although a CUDA framework needs one to build extensions")
def _nvcc_missing(s):
    t = fw(s, "torch")
    if t.get("cuda") and not tools(s, "nvcc"):
        yield hit("info", f"torch {t.get('version')} targets CUDA {t['cuda']} but no nvcc was found on PATH, "
                  "CUDACXX, CUDA_HOME or /usr/local/cuda*: CUDA extensions (cpp_extension, JIT loads) cannot build",
                  f"Install the CUDA {t['cuda']} toolkit and set CUDA_HOME, if you build extensions.")


@check("several-cuda", "toolkit", "several CUDA toolkit versions reachable; one wins")
def _several(s):
    seen: dict[str, str] = {}
    for t in sorted(tools(s, "nvcc"), key=lambda t: (not isinstance(t.get("path_order"), int),
                                                      t.get("path_order") if isinstance(t.get("path_order"), int) else 0)):
        seen.setdefault(vstr(ver(t["version"])[:2]), t["path"])
    first = main_nvcc(s)
    if len(seen) > 1 and first:
        yield hit("warning", "several CUDA toolkits are installed: " + ", ".join(f"{v} ({p})" for v, p in seen.items())
                  + f"; builds use {first['version']} ({first['path']})",
                  "Set CUDA_HOME (and CUDACXX for CMake) to the toolkit your framework was built with, and put "
                  "$CUDA_HOME/bin first on PATH.", facts={"toolkits": seen})


@check("cuda-home-mismatch", "toolkit", "CUDA_HOME / CUDACXX disagree with the nvcc first on PATH")
def _cuda_home(s):
    e = env(s)
    first = first_on_path(s, "nvcc")
    home = e.get("CUDA_HOME") or e.get("CUDA_PATH")
    if home:
        at_home = [t for t in tools(s, "nvcc") if t["path"].startswith(home.rstrip("/") + "/")]
        if not at_home:
            yield hit("warning", f"CUDA_HOME={home} has no bin/nvcc: torch.utils.cpp_extension and Triton will fail "
                      "to find the toolkit", "Point CUDA_HOME at the toolkit's root (the directory holding bin/nvcc), "
                      "or unset it.")
        elif first and ver(first["version"])[:2] != ver(at_home[0]["version"])[:2]:
            yield hit("warning", f"CUDA_HOME={home} holds nvcc {at_home[0]['version']} but the first nvcc on PATH "
                      f"({first['path']}) is {first['version']}: extension builds and your shell disagree",
                      "Put $CUDA_HOME/bin first on PATH.")
    cxx = e.get("CUDACXX")
    if cxx:
        t = next((t for t in tools(s, "nvcc") if cxx in (t["path"], t.get("realpath"))), None)
        if t is None:
            yield hit("error", f"CUDACXX={cxx} is not a working nvcc: CMake's CUDA language fails at configure",
                      "Point CUDACXX at an nvcc (`which nvcc`) or unset it.")
        elif first and ver(first["version"])[:2] != ver(t["version"])[:2]:
            yield hit("warning", f"CUDACXX={cxx} is nvcc {t['version']} but the first nvcc on PATH is "
                      f"{first['version']} ({first['path']}): CMake builds and nvcc on the command line differ",
                      "Make CUDACXX and PATH name the same toolkit.")


@check("host-compiler-too-new", "toolkit", "host compiler newer than nvcc supports", "compile-error")
def _host_cc(s):
    t = main_nvcc(s)
    if not t:
        return
    v = ver(t["version"])[:2]
    rows = [r for r in table("nvcc")["host_compiler"] if v >= ver(r["nvcc"])]
    if not rows:
        return
    lim = {"gcc": rows[-1]["gcc"], "clang": rows[-1]["clang"]}
    by_version: dict[tuple, list[dict]] = {}
    for tool in ("gcc", "g++", "clang", "clang++"):
        for c in tools(s, tool)[:1]:
            family = "clang" if tool.startswith("clang") else "gcc"
            major = ver(c["version"])[:1]
            if major and major[0] > lim[family]:
                by_version.setdefault((family, c["version"]), []).append(c)
    for (family, version), cs in by_version.items():      # gcc and g++ of one version: one row
        names = " and ".join(f"{c['tool']} ({c['path']})" for c in cs)
        top = lim[family]
        yield hit("error", f"{names} {version} is newer than nvcc {t['version']} supports ({family} <= {top}): nvcc "
                  "stops with 'unsupported GNU version' / 'unsupported clang version'",
                  f"Install {family} {top} and pass it with `-ccbin` / CUDAHOSTCXX (e.g. `export CUDAHOSTCXX="
                  f"/usr/bin/{'g++' if family == 'gcc' else 'clang++'}-{top}`), or use a newer CUDA toolkit.",
                  facts={"compiler": family, "version": version, "max_major": top})


@check("ptxas-nvcc-mismatch", "toolkit", "the first ptxas on PATH differs from the nvcc")
def _ptxas(s):
    n, p = first_on_path(s, "nvcc"), first_on_path(s, "ptxas")
    if n and p and ver(n["version"])[:2] != ver(p["version"])[:2]:
        yield hit("warning", f"the first ptxas on PATH ({p['path']}, {p['version']}) is not the first nvcc's "
                  f"({n['path']}, {n['version']}): tools calling ptxas directly assemble for another ISA",
                  "Put one toolkit's bin directory first on PATH.")


@check("torch-nvcc-major-mismatch", "toolkit", "nvcc's CUDA major differs from torch's")
def _torch_nvcc(s):
    t, n = fw(s, "torch"), main_nvcc(s)
    if isinstance(t.get("cuda"), str) and n and ver(t["cuda"])[:1] != ver(n["version"])[:1]:
        yield hit("warning", f"torch {t.get('version')} was built with CUDA {t['cuda']} but nvcc is {n['version']} "
                  f"({n['path']}): cpp_extension refuses ('The detected CUDA version mismatches the version that was "
                  "used to compile PyTorch')", f"Install the CUDA {t['cuda']} toolkit and set CUDA_HOME to it.")


@check("compute-sanitizer-missing", "toolkit", "no compute-sanitizer for memcheck runs")
def _sanitizer(s):
    if tools(s, "nvcc") and not tools(s, "compute-sanitizer"):
        n = main_nvcc(s)
        mm = ver(n["version"])[:2] if n else ()
        pkg = f"cuda-sanitizer-{mm[0]}-{mm[1]}" if len(mm) == 2 else "cuda-sanitizer-<major>-<minor>"
        yield hit("info", "compute-sanitizer is not installed next to nvcc: `diagnose run --sanitize` cannot run "
                  "memcheck", f"Install the toolkit's sanitizer package (`apt install {pkg}`).")


_ = re
