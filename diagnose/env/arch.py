"""The one arch-coverage rule: can code built for these targets run on a GPU of this compute capability?

Used by the env checks (torch's arch list, TORCH_CUDA_ARCH_LIST) and by `diagnose/fusion.py`; the rule
and its sources are in data/arch.toml.
"""
from __future__ import annotations

import functools
import re

from diagnose.env.snap import cc_tuple


def runs_on(target: str, cc) -> str:
    """'sass' when the target's SASS runs on `cc`, 'ptx' when only its PTX can be JIT-compiled there,
    '' when it cannot run there; None when the target or the CC cannot be read."""
    if not isinstance(target, str) or not isinstance(cc, str):
        return None
    return _runs_on(target, cc)


@functools.lru_cache(maxsize=4096)
def _runs_on(target: str, cc: str):
    want, got = cc_tuple(cc), cc_tuple(target)
    if not want or not got:
        return None
    m = re.search(r"\d([af]?)$", target)
    kind = m[1] if m else ""
    if kind == "a":
        ok = got == want
    elif kind == "f":
        ok = got[0] == want[0] and got[1] <= want[1]
    elif target.startswith("compute_"):
        ok = got <= want
    else:
        ok = got[0] == want[0] and got[1] <= want[1]
    if not ok:
        return ""
    return "ptx" if target.startswith("compute_") else "sass"


def arch_covers(arch_list, cc) -> str:
    """'sass' when some target's SASS runs on `cc`, 'ptx' when only PTX can be JIT-compiled for it,
    '' when nothing in the list can run there. An unreadable CC (or no readable target) -> 'sass':
    nothing is claimed that the data does not show."""
    if not cc_tuple(cc):
        return "sass"
    results = [runs_on(a, cc) for a in arch_list or () if isinstance(a, str)]
    results = [r for r in results if r is not None]
    if not results:
        return "sass"
    if "sass" in results:
        return "sass"
    return "ptx" if "ptx" in results else ""


def torch_arch_list(value: str) -> list[str]:
    """TORCH_CUDA_ARCH_LIST ('8.0;9.0a;12.0+PTX') as nvcc targets (sm_80, sm_90a, sm_120, compute_120)."""
    out = []
    for a in re.split(r"[;\s,]+", value or ""):
        m = re.fullmatch(r"(\d+)\.(\d)([af]?)(\+PTX)?", a)
        if m:
            out.append(f"sm_{m[1]}{m[2]}{m[3]}")
            if m[4]:
                out.append(f"compute_{m[1]}{m[2]}{m[3]}")
    return out
