"""Env-aware diagnosis: (diagnosis from the log, environment snapshot) -> a sharper diagnosis.

The snapshot is the JSON of `diagnose env --json` (schema diagnose.env/1): `gpus[]` with
`compute_capability` and `memory_total_bytes`, `driver.version` / `driver.cuda_version`,
`frameworks.torch.{version,cuda,arch_list}`, `frameworks.triton.version`. Missing keys are fine:
each rule uses only what is there.
"""
from __future__ import annotations

import copy

from diagnose.env.arch import arch_covers
from diagnose.env.snap import driver as _driver, fw, live_gpus
from signatures.facts import format_bytes


def torch_wheel_hint(cc: str) -> str:
    major = int(cc.split(".")[0])
    if major >= 12:
        return "a torch wheel built with CUDA 12.8 or newer (e.g. `pip install torch --index-url https://download.pytorch.org/whl/cu128`)"
    if major >= 9:
        return "a torch wheel built with CUDA 12.x (e.g. `pip install torch --index-url https://download.pytorch.org/whl/cu126`)"
    return "a torch wheel whose arch list includes this GPU (CUDA 11.8 or 12.x builds cover sm_50..sm_90)"


def fuse(d, snap: dict | None):
    if not snap:
        return d
    d = copy.deepcopy(d)
    gpus = live_gpus(snap)
    torch = fw(snap, "torch")
    driver = _driver(snap)

    if d.family == "arch-mismatch" and gpus:
        cc = gpus[0].get("compute_capability")
        arch_list = [a for a in torch.get("arch_list") or [] if isinstance(a, str)] \
            if isinstance(torch.get("arch_list"), list) else []
        if isinstance(cc, str) and arch_list and arch_covers(arch_list, cc) == "":
            d.env.append(f"confirmed: the device is CC {cc} ({gpus[0].get('name', 'GPU')}) and the installed "
                         f"torch {torch.get('version', '?')} is built for {' '.join(arch_list)} only")
            d.fix = f"Install {torch_wheel_hint(cc)}; then re-run. " + d.fix
            if "pytorch" not in d.ecosystems:      # the snapshot shows torch is the build that lacks the arch
                d.ecosystems = ["pytorch"] + [e for e in d.ecosystems if e != "pytorch"]
            d.confidence = max(d.confidence, 0.97)
            d.facts.setdefault("device_cc", cc)
        elif cc and arch_list:
            d.env.append(f"the installed torch covers CC {cc}; the missing kernel image is from another "
                         "extension or binary (check how it was built: TORCH_CUDA_ARCH_LIST / -gencode)")

    if d.family == "oom" and gpus:
        g = gpus[0]
        total, free = g.get("memory_total_bytes"), g.get("memory_free_bytes")
        if total:
            msg = f"device 0 is a {g.get('name', 'GPU')} with {format_bytes(total)} in total"
            if free is not None:
                msg += f", {format_bytes(free)} free when the snapshot was taken"
            d.env.append(msg)
            d.facts.setdefault("device_total_bytes", total)
            want = d.facts.get("requested_bytes")
            if isinstance(want, int) and want > total:
                d.env.append("the single allocation is larger than the whole device: no allocator setting "
                             "can help; shrink the batch/shape or shard the tensor")

    no_driver = not driver.get("version") and "LibraryNotFound" in str(driver.get("error_type", ""))
    if d.family == "driver-mismatch" and no_driver and not gpus:
        # CUDA reports "driver version is insufficient" (error 35) even when no driver is installed at all.
        d.env.append("confirmed: no NVIDIA driver is installed on this machine (NVML library not found); "
                     "CUDA reports that as an insufficient driver")
        d.family, d.origin = "missing-library", "environment"
        d.fix = ("Install the NVIDIA driver (or run on a machine with a GPU); inside a container, start it "
                 "with the NVIDIA container toolkit (`--gpus all`).")
        d.confidence = max(d.confidence, 0.9)
    if d.family in ("driver-mismatch", "missing-library") and driver:
        if driver.get("version"):
            d.env.append(f"driver {driver['version']} (supports CUDA up to {driver.get('cuda_version', '?')})")
        if torch.get("cuda"):
            d.env.append(f"torch {torch.get('version', '?')} is built with CUDA {torch['cuda']}")
    if d.family == "missing-library" and gpus and torch and not torch.get("cuda"):
        d.env.append("confirmed: a CPU-only torch build on a machine with GPUs")
        d.confidence = max(d.confidence, 0.95)

    if d.family == "shared-memory-exceeded" and gpus:
        limit = gpus[0].get("shared_memory_per_block_optin_bytes")
        if limit:
            d.env.append(f"the device allows {format_bytes(limit)} of shared memory per block (opt-in)")
    return d
