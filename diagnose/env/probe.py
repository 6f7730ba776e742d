"""Section `probe`: what could not be learnt, and why (no driver, a hung probe, a failed import)."""
from __future__ import annotations

from diagnose.env.registry import check, hit
from diagnose.env.snap import frameworks, fw, gpus, probe, section

NO_DRIVER_TYPES = ("NVMLError_LibraryNotFound", "LibraryNotLoadable")


def expects_gpu(s) -> bool:
    """Does this machine look meant for GPU work (a CUDA build, a GPU listed, nvidia-smi output)?"""
    return bool(gpus(s) or fw(s, "torch").get("cuda") or probe(s, "nvidia_smi").get("output"))


def no_driver(s) -> bool:
    p = probe(s, "nvml")
    return bool(p.get("error")) and p.get("error_type") in NO_DRIVER_TYPES and not p.get("timeout")


@check("no-data", "probe", "the snapshot holds no facts to judge")
def _no_data(s):
    keys = ("gpus", "driver", "packages", "toolkits", "host", "probes", "frameworks")
    if not any(s.get(k) for k in keys if isinstance(s, dict)):
        yield hit("error", "the snapshot holds no facts (no driver, GPU, package, toolkit, host or probe data): "
                  "nothing can be judged, so this is not a healthy machine",
                  "Record it with `diagnose env --json > FILE` on the machine in question.")


@check("nvml-unavailable", "probe", "NVML (libnvidia-ml) could not be loaded or initialised", "missing-library",
       folds=("env.probe.cuda-driver-unavailable", "env.probe.runtime-insufficient-driver",
              "env.probe.nvidia-smi-failed"))
def _nvml_unavailable(s):
    p = probe(s, "nvml")
    err = p.get("error")
    if not isinstance(err, str) or not err or p.get("timeout"):
        return
    kind = str(p.get("error_type") or "")
    ev = [f"probes.nvml.error = {err}"]
    if kind in NO_DRIVER_TYPES:
        how = f"nvmlInit() raised {kind} ({err})" if kind != "LibraryNotLoadable" else err
        yield hit("error" if expects_gpu(s) else "info",
                  f"no NVIDIA driver: {how}; GPU facts (devices, ECC, clocks) are unknown",
                  "On a GPU machine install the NVIDIA driver (check `ls /dev/nvidia*` and `ldconfig -p | grep "
                  "libnvidia-ml`); in a container run it with `--gpus all` / the NVIDIA runtime.", evidence=ev)
    elif kind == "NVMLError_DriverNotLoaded":
        yield hit("error", f"the NVIDIA kernel module is not loaded: {err}",
                  "Load it (`sudo modprobe nvidia`) or reboot after a driver install; check `dmesg | grep -i nvidia`.",
                  evidence=ev)
    elif "Mismatch" in kind or "mismatch" in err:
        yield hit("error", f"NVML: driver/library version mismatch ({err}): the kernel module and the user-space "
                  "driver differ, usually after a driver upgrade without a reboot",
                  "Reboot (or unload and reload the nvidia kernel modules) so both are the same version.",
                  family="driver-mismatch", evidence=ev)
    elif kind.startswith("NVMLError_NoPermission"):
        yield hit("error", f"no permission to use the GPU: {err}",
                  "Add the user to the group owning /dev/nvidia* (often `video`), or fix the container's device "
                  "mounts.", evidence=ev)
    else:
        yield hit("warning", f"NVML failed at {p.get('stage', '?')}: {kind or 'error'}: {err}",
                  "Run `nvidia-smi` to see whether the driver answers; reinstall nvidia-ml-py if the import failed.",
                  evidence=ev)


@check("cuda-driver-unavailable", "probe", "the CUDA driver API (cuInit) could not be used", "missing-library")
def _cuinit(s):
    p = probe(s, "cuda")
    ci = p.get("cuinit") if isinstance(p.get("cuinit"), dict) else {}
    if isinstance(p.get("error"), str) and not p.get("timeout"):
        yield hit("info" if not expects_gpu(s) else "warning",
                  f"the cuda-bindings probe failed at {p.get('stage', '?')}: {p['error']}: SM count and the opt-in "
                  "shared-memory limit are unknown",
                  "Install cuda-bindings for the driver's CUDA major (`pip install \"cuda-bindings==12.*\"` for a "
                  "CUDA 12 driver) to read device attributes.")
        return
    if isinstance(ci.get("error"), str):
        sev = "error" if gpus(s) else ("warning" if expects_gpu(s) else "info")
        what = "the CUDA driver API is unavailable" if p.get("skipped") else "cuInit(0) failed"
        yield hit(sev, f"{what}: {ci.get('error_type', 'error')}: {ci['error']}",
                  "Without libcuda.so.1 no CUDA program can run here: install the NVIDIA driver (or mount it into "
                  "the container); if nvidia-smi lists GPUs, check that libcuda.so.1 is on the loader path.")


@check("runtime-insufficient-driver", "probe", "the CUDA runtime reports error 35 (insufficient driver)",
       "driver-mismatch")
def _rt35(s):
    rt = probe(s, "cuda").get("runtime")
    rt = rt if isinstance(rt, dict) else {}
    err = rt.get("device_count_error")
    if not isinstance(err, str) or not err:
        return
    if "35" in err or "InsufficientDriver" in err:
        yield hit("error" if gpus(s) else "info",
                  f"cudaGetDeviceCount() returned {err}: the CUDA runtime linked into cuda-bindings found no driver "
                  "new enough (or no driver at all)",
                  "Install cuda-bindings for the driver's CUDA major, or upgrade the driver (see the driver findings).")
    else:
        yield hit("error" if gpus(s) else "warning", f"cudaGetDeviceCount() returned {err}",
                  "Check the driver with `nvidia-smi`; see the CUDA runtime error table for this code.")


@check("timeout", "probe", "a probe hung and was killed", "hardware-fault", origin="hardware")
def _probe_timeout(s):
    for name, p in sorted(section(s, "probes").items()):
        if isinstance(p, dict) and p.get("timeout"):
            yield hit("error", f"the {name} probe did not answer in time and was killed: {p.get('error', '')}",
                      "A hung driver call usually means a GPU in a bad state: check `dmesg` for Xid errors; a GPU "
                      "reset (`nvidia-smi -r`) or a reboot may be needed.")


@check("nvidia-smi-failed", "probe", "nvidia-smi is present but failed")
def _smi(s):
    p = probe(s, "nvidia_smi")
    if p.get("path") and (p.get("returncode") or p.get("error")) and not p.get("timeout"):
        yield hit("error", f"{p['path']} failed (exit {p.get('returncode', '?')}): "
                  f"{str(p.get('output') or p.get('error') or '').strip()[-300:]}",
                  "Read its message: 'couldn't communicate with the NVIDIA driver' means the kernel module is not "
                  "loaded.")


@check("torch-import-failed", "probe", "torch is installed but `import torch` failed", "missing-library")
def _torch_import(s):
    p = probe(s, "torch_import")
    if isinstance(p.get("error"), str) and p["error"]:
        yield hit("error", f"torch {fw(s, 'torch').get('version', '')} is installed but importing it failed: "
                  f"{p['error'][:300]}",
                  "Reinstall torch in this environment; an ImportError naming a .so usually means a CUDA library "
                  "(nvidia-*-cu12 wheel) is missing or shadowed (see the libraries findings).")


@check("schema-newer", "probe", "the snapshot was written by a newer diagnose")
def _schema(s):
    sc = s.get("schema") if isinstance(s, dict) else None
    if isinstance(sc, str) and sc.startswith("diagnose.env/"):
        tail = sc.split("/", 1)[1]
        if tail.isdigit() and int(tail) > 1:
            yield hit("warning", f"schema {sc!r} is newer than this diagnose reads (diagnose.env/1): keys it does "
                      "not know are ignored, so a problem recorded there may be missed",
                      "Judge it with the diagnose version that recorded it (`tool.version` in the snapshot).")


_ = frameworks  # re-exported for sections that need it
