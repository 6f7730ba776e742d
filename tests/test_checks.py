"""Every check fires on a snapshot that shows its problem, and stays quiet on a healthy one.

The healthy baseline is a made-up 2x H100 snapshot (tests/fixtures/snapshots/h100-healthy.madeup.json);
each case below changes only what the check is about.
"""
import copy
import json
from pathlib import Path

import pytest

from probes.checks import CHECKS, arch_covers, run_checks, ver

FIX = Path(__file__).parent / "fixtures" / "snapshots"
HEALTHY = json.loads((FIX / "h100-healthy.madeup.json").read_text())
G = 1 << 30


def g0(s):
    return s["gpus"][0]


def tk(tool, path, version, via="PATH", order=None):
    return {"tool": tool, "path": path, "realpath": path, "via": via, "path_order": order, "version": version}


def no_gpu(s):
    s["gpus"] = []


def set_in(d, **kw):
    d.update(kw)


CASES = {
    # probe
    "probe.nvml-unavailable": lambda s: (s["probes"].__setitem__("nvml", {
        "error": "NVML Shared Library Not Found", "error_type": "NVMLError_LibraryNotFound", "stage": "nvmlInit"}),
        no_gpu(s)),
    "probe.cuda-driver-unavailable": lambda s: s["probes"]["cuda"].__setitem__("cuinit", {
        "error": '"cuda" is an NVIDIA driver library and can only be found via system search.',
        "error_type": "DynamicLibNotFoundError"}),
    "probe.runtime-insufficient-driver": lambda s: s["probes"]["cuda"]["runtime"].__setitem__(
        "device_count_error", "cudaErrorInsufficientDriver (35)"),
    "probe.timeout": lambda s: s["probes"].__setitem__("nvml", {"error": "the nvml probe did not answer", "timeout": True}),
    "probe.nvidia-smi-failed": lambda s: s["probes"].__setitem__("nvidia_smi", {
        "path": "/usr/bin/nvidia-smi", "returncode": 9,
        "output": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."}),
    "probe.torch-import-failed": lambda s: s["probes"].__setitem__("torch_import", {
        "error": "libcudnn.so.9: cannot open shared object file", "stage": "import torch"}),
    # driver
    "driver.too-old-for-torch": lambda s: s["driver"].update(version="470.239.06", cuda_version="11.4"),
    "driver.too-old-for-cuda-bindings": lambda s: (s["frameworks"]["cuda-bindings"].update(version="13.0.1")),
    "driver.too-old-for-nvcc": lambda s: s["toolkits"].__setitem__(0, tk("nvcc", "/usr/local/cuda-13.0/bin/nvcc",
                                                                             "13.0.88", "PATH", 0)) or
        s["env"].pop("CUDA_HOME"),
    "driver.too-old-for-jax": lambda s: s["frameworks"].__setitem__("jax", {
        "version": "0.7.0", "jaxlib": "0.7.0", "plugins": {"jax-cuda13-plugin": "0.7.0"}}),
    "driver.too-old-for-cupy": lambda s: s["frameworks"].__setitem__("cupy", {"packages": {"cupy-cuda13x": "13.6.0"}}),
    "driver.ptx-newer-than-driver": lambda s: s["driver"].update(version="570.124.06", cuda_version="12.6")
        or s["toolkits"].__setitem__(0, tk("nvcc", "/usr/local/cuda-12.8/bin/nvcc", "12.8.93", "PATH", 0)),
    "driver.triton-ptxas-newer-than-driver": lambda s: s["frameworks"]["triton"].update(ptxas_version="13.0.48"),
    # gpu
    "gpu.none-visible": lambda s: no_gpu(s),
    "gpu.arch-not-in-torch": lambda s: s["frameworks"]["torch"].update(arch_list=["sm_50", "sm_60", "sm_70", "sm_80"]),
    "gpu.triton-cc-too-old": lambda s: g0(s).update(compute_capability="7.0", name="Tesla V100-SXM2-16GB"),
    "gpu.nvcc-cannot-target": lambda s: (g0(s).update(compute_capability="7.0", name="Tesla V100-SXM2-16GB"),
                                         s["toolkits"].__setitem__(3, tk("nvcc", "/usr/local/cuda-13.0/bin/nvcc",
                                                                         "13.0.88", "/usr/local/cuda-13.0")),
                                         s["env"].update(CUDA_HOME="/usr/local/cuda-13.0")),
    "gpu.arch-specific-mismatch": lambda s: (g0(s).update(compute_capability="8.0", name="NVIDIA A100-SXM4-80GB"),
                                             s["env"].update(TORCH_CUDA_ARCH_LIST="9.0a")),
    "gpu.ecc-uncorrectable": lambda s: g0(s)["ecc"].update(volatile_uncorrected=2),
    "gpu.ecc-corrected": lambda s: g0(s)["ecc"].update(volatile_corrected=4312),
    "gpu.ecc-disabled": lambda s: g0(s)["ecc"].update(enabled=False, pending=False),
    "gpu.ecc-pending": lambda s: g0(s)["ecc"].update(enabled=True, pending=False),
    "gpu.retired-pages-pending": lambda s: g0(s)["retired_pages"].update(pending=True),
    "gpu.retired-pages": lambda s: g0(s)["retired_pages"].update(double_bit_ecc=3),
    "gpu.row-remap-failure": lambda s: g0(s)["remapped_rows"].update(failure=True, uncorrected=9),
    "gpu.row-remap-pending": lambda s: g0(s)["remapped_rows"].update(pending=True, uncorrected=1),
    "gpu.throttled": lambda s: (g0(s).update(throttle_reasons=["hw_thermal_slowdown", "sw_thermal_slowdown"],
                                             temperature_c=91), g0(s)["clocks_mhz"].update(sm=1095)),
    "gpu.power-capped": lambda s: g0(s).update(throttle_reasons=["sw_power_cap"], power_w=699.2),
    "gpu.temperature-high": lambda s: g0(s).update(temperature_c=88),
    "gpu.mig-enabled": lambda s: g0(s)["mig"].update(enabled=True, instances=7),
    "gpu.persistence-off": lambda s: g0(s).update(persistence_mode=False),
    "gpu.pcie-degraded": lambda s: g0(s)["pcie"].update(width=8, gen=4),
    "gpu.memory-in-use": lambda s: g0(s).update(memory_free_bytes=2 * G),
    "gpu.compute-mode": lambda s: g0(s).update(compute_mode="prohibited"),
    # toolkit
    "toolkit.nvcc-missing": lambda s: s.__setitem__("toolkits", [t for t in s["toolkits"] if t["tool"] != "nvcc"]),
    "toolkit.several-cuda-on-path": lambda s: s["toolkits"].append(tk("nvcc", "/usr/bin/nvcc", "12.0.140", "PATH", 2)),
    "toolkit.ld-library-path-conflict": lambda s: s["env"].update(
        LD_LIBRARY_PATH="/usr/local/cuda-12.1/lib64:/usr/local/cuda-12.8/lib64"),
    "toolkit.cuda-home-mismatch": lambda s: s["env"].update(CUDA_HOME="/opt/cuda-missing"),
    "toolkit.host-compiler-too-new": lambda s: s["toolkits"].__setitem__(4, tk("gcc", "/usr/bin/gcc", "15.1.0")),
    "toolkit.ptxas-nvcc-mismatch": lambda s: s["toolkits"].__setitem__(1, tk("ptxas", "/opt/bin/ptxas", "12.4.131", "PATH", 0)),
    "toolkit.torch-nvcc-major-mismatch": lambda s: s["frameworks"]["torch"].update(cuda="13.0") or
        s["driver"].update(version="580.65.06", cuda_version="13.0"),
    "toolkit.compute-sanitizer-missing": lambda s: s.__setitem__(
        "toolkits", [t for t in s["toolkits"] if t["tool"] != "compute-sanitizer"]),
    # frameworks
    "frameworks.torch-cpu-only": lambda s: s["frameworks"]["torch"].update(version="2.7.0+cpu", cuda=None, arch_list=[]),
    "frameworks.torch-sees-no-gpu": lambda s: s["frameworks"]["torch"].update(is_available=False, device_count=0),
    "frameworks.torch-cudnn-missing": lambda s: s["frameworks"]["torch"].update(cudnn=None),
    "frameworks.jax-no-cuda-plugin": lambda s: s["frameworks"].__setitem__("jax", {"version": "0.6.2", "jaxlib": "0.6.2", "plugins": {}}),
    "frameworks.jax-plugin-mismatch": lambda s: s["frameworks"].__setitem__("jax", {
        "version": "0.6.2", "jaxlib": "0.6.2", "plugins": {"jax-cuda12-plugin": "0.5.3", "jax-cuda12-pjrt": "0.5.3"}}),
    "frameworks.nvidia-wheels-mixed": lambda s: s["packages"].update({"nvidia-cuda-runtime-cu13": "13.0.48"}),
    "frameworks.cupy-several": lambda s: s["frameworks"].__setitem__("cupy", {"packages": {"cupy-cuda11x": "13.0.0",
                                                                                          "cupy-cuda12x": "13.4.1"}}),
    "frameworks.pynvml-shim": lambda s: s["packages"].update(pynvml="12.0.0"),
    "frameworks.triton-without-gpu-backend": lambda s: no_gpu(s),
    # env
    "env.cuda-visible-devices-hides-all": lambda s: s["env"].update(CUDA_VISIBLE_DEVICES=""),
    "env.cuda-visible-devices-invalid": lambda s: s["env"].update(CUDA_VISIBLE_DEVICES="0,5"),
    "env.cuda-launch-blocking": lambda s: s["env"].update(CUDA_LAUNCH_BLOCKING="1"),
    "env.triton-interpret": lambda s: s["env"].update(TRITON_INTERPRET="1"),
    "env.torch-cuda-arch-list-misses-device": lambda s: s["env"].update(TORCH_CUDA_ARCH_LIST="8.0;8.6"),
    "env.memory-caching-off": lambda s: s["env"].update(PYTORCH_NO_CUDA_MEMORY_CACHING="1"),
    "env.cuda-cache-disabled": lambda s: s["env"].update(CUDA_CACHE_DISABLE="1"),
    "env.nccl-transport-disabled": lambda s: s["env"].update(NCCL_P2P_DISABLE="1"),
    "env.cuda-device-order": lambda s: (s["gpus"][1].update(name="NVIDIA L40S", compute_capability="8.9"),
                                        s["env"].update(CUDA_VISIBLE_DEVICES="1")),
    "env.xla-preallocate": lambda s: s["frameworks"].__setitem__("jax", {
        "version": "0.6.2", "jaxlib": "0.6.2", "plugins": {"jax-cuda12-plugin": "0.6.2", "jax-cuda12-pjrt": "0.6.2"}}),
    # host
    "host.disk-low-for-caches": lambda s: s["host"]["disk"]["triton"].update(free_bytes=300 << 20),
    "host.memory-low": lambda s: s["host"]["memory"].update(available_bytes=1 * G),
    "host.glibc-old": lambda s: s["host"].update(glibc="2.17"),
    "host.wsl": lambda s: s["host"].update(wsl=True),
    "host.python-old": lambda s: s["host"].update(python="3.8.10"),
}

EXPECTED_SEVERITY = {
    "probe.timeout": "error", "gpu.arch-not-in-torch": "error", "driver.too-old-for-torch": "error",
    "gpu.ecc-uncorrectable": "error", "frameworks.torch-cpu-only": "error", "env.cuda-launch-blocking": "warning",
    "env.cuda-visible-devices-hides-all": "error", "gpu.mig-enabled": "warning", "host.disk-low-for-caches": "error",
    "toolkit.host-compiler-too-new": "error", "gpu.nvcc-cannot-target": "error", "gpu.arch-specific-mismatch": "error",
}


def test_enough_checks_and_every_one_has_a_case():
    ids = [c.id for c in CHECKS]
    assert len(ids) >= 40
    assert len(set(ids)) == len(ids), "check ids must be unique"
    assert set(ids) == set(CASES), f"untested: {set(ids) - set(CASES)}; stale: {set(CASES) - set(ids)}"


def test_healthy_snapshot_has_no_findings():
    assert run_checks(copy.deepcopy(HEALTHY)) == []


@pytest.mark.parametrize("check_id", sorted(CASES))
def test_check_fires_on_its_problem(check_id):
    snap = copy.deepcopy(HEALTHY)
    CASES[check_id](snap)
    found = [f for f in run_checks(snap) if f["id"] == check_id]
    assert found, f"{check_id} did not fire"
    for f in found:
        assert f["severity"] in ("error", "warning", "info")
        assert f["message"] and f["fix"], f
        assert f["section"] == check_id.split(".")[0]
    if check_id in EXPECTED_SEVERITY:
        assert found[0]["severity"] == EXPECTED_SEVERITY[check_id]
    assert not [f for f in run_checks(snap) if f["id"] == "probe.check-crashed"]


def test_messages_carry_the_facts():
    snap = copy.deepcopy(HEALTHY)
    snap["driver"].update(version="470.239.06", cuda_version="11.4")
    (f,) = [f for f in run_checks(snap) if f["id"] == "driver.too-old-for-torch"]
    assert "470.239.06" in f["message"] and "12.8" in f["message"] and "11.4" in f["message"]
    assert "525.60.13" in f["fix"]


def test_minor_version_compatibility_is_a_warning_not_an_error():
    snap = copy.deepcopy(HEALTHY)
    snap["driver"].update(version="560.35.03", cuda_version="12.6")    # >= 525: 12.8 runs under minor compat
    (f,) = [f for f in run_checks(snap) if f["id"] == "driver.too-old-for-torch"]
    assert f["severity"] == "warning" and "minor-version compatibility" in f["message"]


def test_arch_coverage_rules():
    assert arch_covers(["sm_80"], "8.6") == "sass"          # same major, lower minor: binary compatible
    assert arch_covers(["sm_86"], "8.0") == ""               # higher minor does not run on lower
    assert arch_covers(["sm_80", "compute_80"], "9.0") == "ptx"
    assert arch_covers(["sm_90a"], "9.0") == "sass"
    assert arch_covers(["sm_90a"], "10.0") == ""             # arch-specific code runs on its own CC only
    assert arch_covers(["compute_90a"], "10.0") == ""


def test_ver():
    assert ver("570.124.06") == (570, 124, 6) and ver("2.13.0+cpu") == (2, 13, 0) and ver(None) == ()


def test_a_malformed_snapshot_does_not_crash_the_checks():
    snap = copy.deepcopy(HEALTHY)
    snap["gpus"][0]["ecc"] = "garbage"
    findings = run_checks(snap)
    assert any(f["id"] == "probe.check-crashed" and "gpu.ecc" in f["message"] for f in findings)
