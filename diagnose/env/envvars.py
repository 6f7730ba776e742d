"""Section `env`: environment variables that change what CUDA, torch, Triton, NCCL and JAX do."""
from __future__ import annotations

from diagnose.env.arch import arch_covers, torch_arch_list
from diagnose.env.gpu import suffix_is_the_cause
from diagnose.env.registry import check, hit
from diagnose.env.snap import env, fw, gpus, live_gpus


def _on(s, name, off=("", "0")) -> bool:
    v = env(s).get(name)
    return v is not None and v.strip().lower() not in off


@check("cuda-visible-devices", "env", "CUDA_VISIBLE_DEVICES hides GPUs or names ones that do not exist",
       "missing-library")
def _cvd(s):
    v = env(s).get("CUDA_VISIBLE_DEVICES")
    if v is None:
        return
    n = len(gpus(s))
    entries = [e.strip() for e in v.split(",") if e.strip()]
    if v.strip() in ("", "-1", "NoDevFiles", "none"):
        if n or fw(s, "torch").get("cuda"):
            yield hit("error", f"CUDA_VISIBLE_DEVICES={v!r} hides every GPU"
                      + (f" (the machine has {n})" if n else "") + ": CUDA reports 'no CUDA-capable device is detected'",
                      "Unset it or list real indices/UUIDs (`nvidia-smi -L`).")
        return
    if not n:
        return
    uuids = [str(g.get("uuid", "")) for g in gpus(s)]
    migs = [str(d.get("uuid", "")) for g in gpus(s) for d in (g.get("mig", {}).get("devices") or []
                                                             if isinstance(g.get("mig"), dict) and
                                                             isinstance(g["mig"].get("devices"), list) else [])
            if isinstance(d, dict)]

    def known(e):
        if e.isdigit():
            return int(e) < n
        if e.startswith("GPU-"):
            return any(u.startswith(e) for u in uuids)
        if e.startswith("MIG-"):
            return any(u.startswith(e) for u in migs) if migs else None
        return False
    bad = [e for e in entries if known(e) is False]
    if not bad:
        return
    first_bad = next(i for i, e in enumerate(entries) if known(e) is False)
    if first_bad == 0:
        yield hit("error", f"CUDA_VISIBLE_DEVICES={v!r}: {entries[0]} does not exist on this {n}-GPU machine, and CUDA "
                  "stops at the first invalid entry: no GPU is visible", "List only existing indices or UUIDs "
                  "(`nvidia-smi -L`).", facts={"unknown": bad})
    else:
        yield hit("warning", f"CUDA_VISIBLE_DEVICES={v!r}: {', '.join(bad)} do(es) not exist on this {n}-GPU machine; "
                  f"CUDA stops at the first invalid entry, so only the {first_bad} before it are visible",
                  "List only existing indices or UUIDs (`nvidia-smi -L`).", facts={"unknown": bad})


@check("cuda-launch-blocking", "env", "CUDA_LAUNCH_BLOCKING left on")
def _clb(s):
    if _on(s, "CUDA_LAUNCH_BLOCKING"):
        yield hit("warning", f"CUDA_LAUNCH_BLOCKING={env(s)['CUDA_LAUNCH_BLOCKING']}: every kernel launch waits for "
                  "the GPU; any timing taken now is invalid", "Unset it except while locating an asynchronous CUDA "
                  "error.")


@check("triton-interpret", "env", "TRITON_INTERPRET left on")
def _ti(s):
    if _on(s, "TRITON_INTERPRET"):
        yield hit("warning", "TRITON_INTERPRET=1: Triton kernels run in the numpy interpreter, not on the GPU; timings "
                  "are meaningless and device asserts/out-of-bounds behave differently", "Unset TRITON_INTERPRET.")


@check("torch-cuda-arch-list-misses-device", "env", "TORCH_CUDA_ARCH_LIST omits the device's arch", "arch-mismatch")
def _tcal(s):
    v = env(s).get("TORCH_CUDA_ARCH_LIST")
    archs = torch_arch_list(v or "")
    if not archs:
        return
    for g in live_gpus(s):
        cc = g.get("compute_capability")
        if isinstance(cc, str) and not arch_covers(archs, cc) and not suffix_is_the_cause(archs, cc):
            yield hit("error", f"TORCH_CUDA_ARCH_LIST={v!r} does not include it: extensions built here fail with 'no "
                      "kernel image is available'", f"Add {cc} to TORCH_CUDA_ARCH_LIST and rebuild.", gpu=g)


@check("memory-caching-off", "env", "PyTorch's CUDA caching allocator disabled")
def _nocache(s):
    if _on(s, "PYTORCH_NO_CUDA_MEMORY_CACHING"):
        yield hit("warning", "PYTORCH_NO_CUDA_MEMORY_CACHING=1: every allocation goes to cudaMalloc; runs are slow "
                  "and memory figures differ from normal runs", "Unset it unless you are debugging memory with a "
                  "sanitizer.")


@check("cuda-cache-disabled", "env", "the CUDA JIT cache is disabled")
def _jitcache(s):
    if _on(s, "CUDA_CACHE_DISABLE"):
        yield hit("warning", "CUDA_CACHE_DISABLE=1: PTX is JIT-compiled again in every process (slow starts, skewed "
                  "timings)", "Unset CUDA_CACHE_DISABLE.")


@check("nccl-transport-disabled", "env", "NCCL transports disabled")
def _nccl(s):
    e = env(s)
    off = [k for k in ("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE") if e.get(k) == "1"]
    off += [k for k in ("NCCL_NVLS_ENABLE",) if e.get(k) == "0"]
    if off:
        yield hit("info", f"{', '.join(f'{k}={e[k]}' for k in off)}: collectives use slower transports",
                  "Remove these unless they work around a known hang; NCCL_DEBUG=INFO shows the chosen transport.")


@check("cuda-device-order", "env", "CUDA and nvidia-smi may number GPUs differently")
def _order(s):
    if len(live_gpus(s)) > 1 and env(s).get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID" and env(s).get("CUDA_VISIBLE_DEVICES"):
        names = {str(g.get("name")) for g in live_gpus(s)}
        if len(names) > 1:
            yield hit("info", f"mixed GPUs ({', '.join(sorted(names))}) and CUDA_VISIBLE_DEVICES set without "
                      "CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA orders fastest first, nvidia-smi by PCI bus",
                      "export CUDA_DEVICE_ORDER=PCI_BUS_ID")


@check("xla-preallocate", "env", "JAX preallocates most GPU memory")
def _xla(s):
    if fw(s, "jax") and live_gpus(s) and env(s).get("XLA_PYTHON_CLIENT_PREALLOCATE", "").lower() not in ("false", "0") \
            and fw(s, "torch"):
        yield hit("info", "jax and torch are both installed and JAX preallocates 75% of GPU memory on first use: "
                  "torch in the same process then runs out of memory", "export XLA_PYTHON_CLIENT_PREALLOCATE=false "
                  "when mixing frameworks.")
