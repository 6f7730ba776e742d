"""Driver-side probes (NVML, CUDA driver/runtime API, torch), run in a child process with a timeout.

A broken driver can hang inside nvmlInit or cuInit; in a child the hang costs a timeout, not the tool.
Each probe returns plain data; every failed call is recorded as {"error": ..., "error_type": ...}.
Run as `python -S -c ... KIND`; prints one JSON object.
"""
from __future__ import annotations

import json
import sys


def _err(e: BaseException) -> dict:
    return {"error": str(e).strip() or type(e).__name__, "error_type": type(e).__name__}


def _call(out: dict, key: str, fn, *args):
    """out[key] = fn(*args), or out[key + '_error'] = the message; never raises."""
    try:
        v = fn(*args)
    except Exception as e:  # every vendor call may fail on some GPU / driver: record, go on
        out[key.lstrip("_") + "_error"] = _err(e)["error"]
        return None
    if isinstance(v, bytes):
        v = v.decode(errors="replace")
    out[key] = v
    return v


# NVML clock-event (throttle) reason bits, from nvml.h.
THROTTLE_BITS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def nvml_probe() -> dict:
    out: dict = {"gpus": []}
    try:
        import pynvml as N
    except Exception as e:
        out.update(_err(e), stage="import pynvml")
        return out
    try:
        N.nvmlInit()
    except Exception as e:
        out.update(_err(e), stage="nvmlInit")
        return out
    try:
        _call(out, "driver_version", N.nvmlSystemGetDriverVersion)
        v = _call(out, "cuda_driver_version_int", N.nvmlSystemGetCudaDriverVersion)
        if isinstance(v, int) and v:
            out["cuda_driver_version"] = f"{v // 1000}.{v % 1000 // 10}"
        _call(out, "nvml_version", N.nvmlSystemGetNVMLVersion)
        n = _call(out, "device_count", N.nvmlDeviceGetCount) or 0
        for i in range(n):
            out["gpus"].append(_nvml_gpu(N, i))
    finally:
        try:
            N.nvmlShutdown()
        except Exception:
            pass
    return out


def _nvml_gpu(N, i: int) -> dict:
    g: dict = {"index": i}
    try:
        h = N.nvmlDeviceGetHandleByIndex(i)
    except Exception as e:
        g.update(_err(e))
        return g
    _call(g, "name", N.nvmlDeviceGetName, h)
    _call(g, "uuid", N.nvmlDeviceGetUUID, h)
    pci = _call(g, "_pci", N.nvmlDeviceGetPciInfo, h)
    g.pop("_pci", None)
    if pci is not None:
        bus = pci.busId.decode() if isinstance(pci.busId, bytes) else str(pci.busId)
        g["pci_bus_id"] = bus.lower()
    cc = _call(g, "_cc", N.nvmlDeviceGetCudaComputeCapability, h)
    g.pop("_cc", None)
    if cc:
        g["compute_capability"] = f"{cc[0]}.{cc[1]}"
    mem = _call(g, "_mem", N.nvmlDeviceGetMemoryInfo, h)
    g.pop("_mem", None)
    if mem is not None:
        g.update(memory_total_bytes=int(mem.total), memory_free_bytes=int(mem.free), memory_used_bytes=int(mem.used))
    ecc: dict = {}
    modes = _call(ecc, "_mode", N.nvmlDeviceGetEccMode, h)
    ecc.pop("_mode", None)
    if modes:
        ecc.update(enabled=bool(modes[0]), pending=bool(modes[1]))
        if modes[0]:
            for name, etype, ctype in (("volatile_uncorrected", 1, 0), ("volatile_corrected", 0, 0),
                                       ("aggregate_uncorrected", 1, 1), ("aggregate_corrected", 0, 1)):
                _call(ecc, name, N.nvmlDeviceGetTotalEccErrors, h, etype, ctype)
    g["ecc"] = ecc
    mig: dict = {}
    m = _call(mig, "_mode", N.nvmlDeviceGetMigMode, h)
    mig.pop("_mode", None)
    if m:
        mig.update(enabled=bool(m[0]), pending=bool(m[1]))
        if m[0]:
            n = _call(mig, "instances", N.nvmlDeviceGetMaxMigDeviceCount, h) or 0
            mig["devices"] = _mig_devices(N, h, n)
    g["mig"] = mig
    g["fabric"] = _fabric(N, h)
    g["nvlink"] = _nvlink(N, h)
    p = _call(g, "persistence_mode", N.nvmlDeviceGetPersistenceMode, h)
    if p is not None:
        g["persistence_mode"] = bool(p)
    cm = _call(g, "compute_mode", N.nvmlDeviceGetComputeMode, h)
    if cm is not None:
        g["compute_mode"] = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}.get(cm, cm)
    clocks: dict = {}
    for name, fn, kind in (("sm", N.nvmlDeviceGetClockInfo, N.NVML_CLOCK_SM),
                           ("memory", N.nvmlDeviceGetClockInfo, N.NVML_CLOCK_MEM),
                           ("sm_max", N.nvmlDeviceGetMaxClockInfo, N.NVML_CLOCK_SM),
                           ("memory_max", N.nvmlDeviceGetMaxClockInfo, N.NVML_CLOCK_MEM)):
        _call(clocks, name, fn, h, kind)
    g["clocks_mhz"] = clocks
    reasons_fn = getattr(N, "nvmlDeviceGetCurrentClocksEventReasons", None) or N.nvmlDeviceGetCurrentClocksThrottleReasons
    tr: dict = {}
    bits = _call(tr, "bits", reasons_fn, h)
    if isinstance(bits, int):
        g["throttle_reasons"] = [name for bit, name in THROTTLE_BITS.items() if bits & bit]
    pcie: dict = {}
    for name, fn in (("gen", N.nvmlDeviceGetCurrPcieLinkGeneration), ("gen_max", N.nvmlDeviceGetMaxPcieLinkGeneration),
                     ("width", N.nvmlDeviceGetCurrPcieLinkWidth), ("width_max", N.nvmlDeviceGetMaxPcieLinkWidth)):
        _call(pcie, name, fn, h)
    g["pcie"] = pcie
    rp: dict = {}
    for name, cause in (("single_bit_ecc", N.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS),
                        ("double_bit_ecc", N.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)):
        pages = _call(rp, name, N.nvmlDeviceGetRetiredPages, h, cause)
        if pages is not None:
            rp[name] = len(pages)
    pend = _call(rp, "pending", N.nvmlDeviceGetRetiredPagesPendingStatus, h)
    if pend is not None:
        rp["pending"] = bool(pend)
    g["retired_pages"] = rp
    rr: dict = {}
    rows = _call(rr, "_rows", N.nvmlDeviceGetRemappedRows, h)
    rr.pop("_rows", None)
    if rows:
        rr.update(corrected=rows[0], uncorrected=rows[1], pending=bool(rows[2]), failure=bool(rows[3]))
    g["remapped_rows"] = rr
    _call(g, "temperature_c", N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU)
    pw = _call(g, "power_w", N.nvmlDeviceGetPowerUsage, h)
    if isinstance(pw, int):
        g["power_w"] = round(pw / 1000, 1)
    return g


def _mig_devices(N, h, n: int) -> list[dict]:
    """The MIG instances that exist (their own name, UUID and memory, not the parent's)."""
    out = []
    for i in range(int(n or 0)):
        try:
            mh = N.nvmlDeviceGetMigDeviceHandleByIndex(h, i)
        except Exception:            # NVML_ERROR_NOT_FOUND: no instance in this slot
            continue
        d: dict = {"index": i}
        _call(d, "name", N.nvmlDeviceGetName, mh)
        _call(d, "uuid", N.nvmlDeviceGetUUID, mh)
        mem = _call(d, "_mem", N.nvmlDeviceGetMemoryInfo, mh)
        d.pop("_mem", None)
        if mem is not None:
            d["memory_total_bytes"] = int(mem.total)
        out.append(d)
    return out


FABRIC_STATE = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}


def _fabric(N, h) -> dict:
    """NVSwitch fabric state (Hopper and newer HGX: set by the fabric manager); {} where NVML has no such call."""
    fn = getattr(N, "nvmlDeviceGetGpuFabricInfo", None)
    if fn is None:
        return {}
    out: dict = {}
    info = _call(out, "_info", fn, h)
    out.pop("_info", None)
    if info is not None:
        out["state"] = FABRIC_STATE.get(int(getattr(info, "state", 0)), int(getattr(info, "state", 0)))
        status = int(getattr(info, "status", 0))
        out["status"] = "success" if status == 0 else status
    return out


def _nvlink(N, h) -> dict:
    """How many NVLink links are up and which are down; {"supported": False} on PCIe-only GPUs."""
    up, down = 0, []
    for link in range(int(getattr(N, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            st = N.nvmlDeviceGetNvLinkState(h, link)
        except Exception:            # NOT_SUPPORTED / INVALID_ARGUMENT past the last link
            break
        if st:
            up += 1
        else:
            down.append(link)
    if not up and not down:
        return {"supported": False}
    return {"supported": True, "active": up, "inactive": down}


def cuda_probe() -> dict:
    """CUDA driver API (cuInit, device attributes) and the runtime linked into cuda-bindings."""
    out: dict = {"devices": []}
    try:
        from cuda.bindings import driver as D, runtime as R
    except Exception as e:
        out.update(_err(e), stage="import cuda.bindings")
        return out
    rt: dict = {}
    _rt_call(rt, "driver_version", R.cudaDriverGetVersion)
    _rt_call(rt, "runtime_version", R.cudaRuntimeGetVersion)
    _rt_call(rt, "device_count", R.cudaGetDeviceCount)
    out["runtime"] = rt
    try:
        err, = D.cuInit(0)
    except Exception as e:  # cuda-bindings 13 raises DynamicLibNotFoundError when libcuda is absent
        out["cuinit"] = _err(e)
        return out
    if int(err) != 0:
        out["cuinit"] = {"error": f"{_name(err)} ({int(err)})", "error_type": _name(err)}
        return out
    out["cuinit"] = {"ok": True}
    err, v = D.cuDriverGetVersion()
    if int(err) == 0:
        out["driver_api_version"] = f"{v // 1000}.{v % 1000 // 10}"
    err, n = D.cuDeviceGetCount()
    if int(err) != 0:
        out["device_count_error"] = _name(err)
        return out
    A = D.CUdevice_attribute
    attrs = {
        "cc_major": "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR", "cc_minor": "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR",
        "sm_count": "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
        "shared_memory_per_block_bytes": "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK",
        "shared_memory_per_block_optin_bytes": "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        "shared_memory_per_sm_bytes": "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
        "registers_per_block": "CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK",
        "max_threads_per_block": "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
        "l2_cache_bytes": "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE", "warp_size": "CU_DEVICE_ATTRIBUTE_WARP_SIZE",
        "pci_domain": "CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID", "pci_bus": "CU_DEVICE_ATTRIBUTE_PCI_BUS_ID",
        "pci_device": "CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID",
    }
    for i in range(n):
        dev: dict = {"index": i}
        err, h = D.cuDeviceGet(i)
        if int(err) != 0:
            dev["error"] = _name(err)
            out["devices"].append(dev)
            continue
        err, name = D.cuDeviceGetName(256, h)
        if int(err) == 0:
            dev["name"] = name.split(b"\0", 1)[0].decode(errors="replace")
        err, total = D.cuDeviceTotalMem(h)
        if int(err) == 0:
            dev["memory_total_bytes"] = int(total)
        for key, attr in attrs.items():
            if hasattr(A, attr):
                err, val = D.cuDeviceGetAttribute(getattr(A, attr), h)
                if int(err) == 0:
                    dev[key] = int(val)
        if "cc_major" in dev:
            dev["compute_capability"] = f"{dev.pop('cc_major')}.{dev.pop('cc_minor', 0)}"
        if "pci_bus" in dev:
            dev["pci_bus_id"] = f"{dev.pop('pci_domain', 0):08x}:{dev.pop('pci_bus'):02x}:{dev.pop('pci_device', 0):02x}.0"
        out["devices"].append(dev)
    return out


def _name(err) -> str:
    return getattr(err, "name", str(err))


def _rt_call(out: dict, key: str, fn) -> None:
    try:
        err, *rest = fn()
    except Exception as e:
        out[key + "_error"] = _err(e)["error"]
        return
    if int(err) != 0:
        out[key + "_error"] = f"{_name(err)} ({int(err)})"
    else:
        out[key] = rest[0] if rest else None


def torch_probe() -> dict:
    """What only an import can tell: the arch list the build carries, the cuDNN it loads, the devices it sees."""
    out: dict = {}
    try:
        import torch
    except Exception as e:
        out.update(_err(e), stage="import torch")
        return out
    out["version"] = torch.__version__
    out["cuda"] = torch.version.cuda
    out["hip"] = getattr(torch.version, "hip", None)
    try:
        out["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception as e:
        out["arch_list_error"] = _err(e)["error"]
    try:
        out["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:
        out["cudnn_error"] = _err(e)["error"]
    try:
        out["is_available"] = bool(torch.cuda.is_available())
        out["device_count"] = torch.cuda.device_count()
    except Exception as e:
        out["cuda_error"] = _err(e)["error"]
        return out
    devs = []
    for i in range(out.get("device_count") or 0):
        try:
            p = torch.cuda.get_device_properties(i)
            devs.append({"index": i, "name": p.name, "capability": f"{p.major}.{p.minor}",
                         "gcn_arch": getattr(p, "gcnArchName", None), "memory_total_bytes": int(p.total_memory)})
        except Exception as e:
            devs.append({"index": i, "error": _err(e)["error"]})
    out["devices"] = devs
    return out


PROBES = {"nvml": nvml_probe, "cuda": cuda_probe, "torch": torch_probe}


def main(argv: list[str]) -> int:
    kind = argv[0] if argv else ""
    fn = PROBES.get(kind)
    if fn is None:
        print(json.dumps({"error": f"unknown probe {kind!r}"}))
        return 2
    try:
        out = fn()
    except Exception as e:  # a bug in a probe is still data, not a crash of `diagnose env`
        out = _err(e)
        out["stage"] = "probe"
    sys.stdout.write(json.dumps(out, default=str))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
