"""Snapshot accessors: the one way checks and fusion read a `diagnose env --json` snapshot.

Every accessor tolerates a hand-edited or fuzzed snapshot: a key of the wrong type reads as absent
(an empty dict, list or None), never as an exception.
"""
from __future__ import annotations

import re


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x) -> list:
    return x if isinstance(x, list) else []


def section(s, name: str) -> dict:
    return _d(_d(s).get(name))


def gpus(s) -> list[dict]:
    """The GPUs NVML (or the CUDA driver) answered for, lost ones included (they carry `error`)."""
    return [g for g in _l(_d(s).get("gpus")) if isinstance(g, dict)]


def live_gpus(s) -> list[dict]:
    """GPUs that answered: no handle error."""
    return [g for g in gpus(s) if not g.get("error")]


def driver(s) -> dict:
    return section(s, "driver")


def cuda(s) -> dict:
    return section(s, "cuda")


def fw(s, name: str) -> dict:
    return _d(section(s, "frameworks").get(name))


def frameworks(s) -> dict:
    return section(s, "frameworks")


def packages(s) -> dict:
    return {k: v for k, v in section(s, "packages").items() if isinstance(v, str)}


def env(s) -> dict:
    return {k: v for k, v in section(s, "env").items() if isinstance(v, str)}


def host(s) -> dict:
    return section(s, "host")


def probe(s, name: str) -> dict:
    return _d(section(s, "probes").get(name))


def libraries(s) -> dict:
    return {k: v for k, v in section(s, "libraries").items() if isinstance(v, dict)}


def sub(d, key: str) -> dict:
    return _d(_d(d).get(key))


def toolkits(s) -> list[dict]:
    return [t for t in _l(_d(s).get("toolkits")) if isinstance(t, dict)]


def tools(s, tool: str) -> list[dict]:
    return [t for t in toolkits(s) if t.get("tool") == tool and isinstance(t.get("version"), str)
            and isinstance(t.get("path"), str)]


def first_on_path(s, tool: str) -> dict | None:
    on = [t for t in tools(s, tool) if t.get("via") == "PATH" and isinstance(t.get("path_order"), int)]
    return min(on, key=lambda t: t["path_order"]) if on else None


def main_nvcc(s) -> dict | None:
    """The nvcc a build would use: CUDACXX's (CMake), else CUDA_HOME's, else the first on PATH, else any."""
    e = env(s)
    if e.get("CUDACXX"):
        for t in tools(s, "nvcc"):
            if t["path"] == e["CUDACXX"] or t.get("realpath") == e["CUDACXX"]:
                return t
    home = e.get("CUDA_HOME") or e.get("CUDA_PATH")
    if home:
        for t in tools(s, "nvcc"):
            if t["path"].startswith(home.rstrip("/") + "/"):
                return t
    return first_on_path(s, "nvcc") or next(iter(tools(s, "nvcc")), None)


def ver(text) -> tuple[int, ...]:
    """'12.8' -> (12, 8); '570.124.06' -> (570, 124, 6); '2.13.0+cpu' -> (2, 13, 0); junk -> ()."""
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text)) if isinstance(text, (str, int, float)) else None
    return tuple(int(x) for x in m[1].split(".")[:6]) if m else ()


def vstr(t: tuple) -> str:
    return ".".join(map(str, t))


def cuda_mm(v) -> tuple[int, int] | None:
    """CUDA (major, minor) from '12.8', '12.8.93' or the runtime's 12080."""
    if isinstance(v, int) and not isinstance(v, bool) and v > 1000:
        return (v // 1000, v % 1000 // 10)
    t = ver(v)
    return (t[0], t[1] if len(t) > 1 else 0) if t else None


def cc_tuple(cc) -> tuple[int, int] | None:
    """'9.0' / 'sm_90a' / 'compute_120f' / '12.0' -> (9, 0) / (12, 0); junk -> None."""
    if not isinstance(cc, str):
        return None
    t = cc.strip()
    m = re.fullmatch(r"(\d{1,2})\.(\d)[af]?", t) or re.fullmatch(r"(?:sm_|compute_)(\d{1,2}?)(\d)[af]?", t)
    return (int(m[1]), int(m[2])) if m else None


def gib(n) -> str:
    return f"{n / 2**30:.1f} GiB" if isinstance(n, (int, float)) and not isinstance(n, bool) else "?"


def num(x):
    """x when it is a real number (not a bool), else None."""
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None
