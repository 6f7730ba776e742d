"""Every env check fires on a snapshot that shows its problem, and stays quiet on a healthy one.

The healthy baseline is a made-up 2x H100 snapshot (tests/fixtures/snapshots/h100-healthy.madeup.json);
each case below changes only what the check is about (the check's positive fixture; the baseline is the
negative one for all of them). Whole machines are in test_env_machines.py.
"""
import copy
import json
from pathlib import Path

import pytest

from diagnose.env import CHECKS, run_checks
from diagnose.env.arch import arch_covers, runs_on
from diagnose.env.snap import ver

FIX = Path(__file__).parent / "fixtures" / "snapshots"
HEALTHY = json.loads((FIX / "h100-healthy.madeup.json").read_text())
G = 1 << 30


def g0(s):
    return s["gpus"][0]


def tk(tool, path, version, via="PATH", order=None):
    return {"tool": tool, "path": path, "realpath": path, "via": via, "path_order": order, "version": version}


def no_gpu(s):
    s["gpus"] = []


def devices(s, **kw):
    s["host"]["devices"] = {"nvidia": ["/dev/nvidia0"], "neuron": [], "accel": [], "vfio": [], "kfd": [], **kw}


def lib(s, name, *cands):
    s.setdefault("libraries", {})[name] = {"candidates": [dict(c) for c in cands]}


def cand(path, version, via, soname):
    return {"path": path, "realpath": path, "version": version, "via": via, "soname": soname}


CASES = {
    # accelerators
    "env.accelerators.libtpu-on-gpu-host": lambda s: (s["packages"].update(libtpu="0.0.17"), devices(s)),
    "env.accelerators.neuron-mismatch": lambda s: s["packages"].update({"torch-neuronx": "2.9.0.2.15.32035",
                                                                         "neuronx-cc": "2.24.5133.0"}),
    "env.accelerators.neuron-without-device": lambda s: (s["packages"].update({"neuronx-cc": "2.28.7631.0"}),
                                                         devices(s)),
    "env.accelerators.torch-xla-mismatch": lambda s: s["packages"].update({"torch-xla": "2.5.1"}),
    "env.accelerators.rocm-arch": lambda s: s["frameworks"]["torch"].update(hip="6.2.41133", cuda=None,
                                                                            version="2.5.1+rocm6.2"),
    # driver
    "env.driver.too-old": lambda s: s["driver"].update(version="470.239.06", cuda_version="11.4")
        or s["cuda"].update(driver_api_version="11.4") or s["frameworks"]["torch"].update(imported=False),
    "env.driver.forward-compat": lambda s: s["driver"].update(version="535.230.02", cuda_version="12.2"),
    "env.driver.cuda-bindings-too-new": lambda s: s["frameworks"]["cuda-bindings"].update(version="13.0.1"),
    "env.driver.triton-ptxas-newer-than-driver": lambda s: s["frameworks"]["triton"].update(ptxas_version="13.0.48"),
    # env
    "env.env.cuda-visible-devices": lambda s: s["env"].update(CUDA_VISIBLE_DEVICES="0,5"),
    "env.env.cuda-launch-blocking": lambda s: s["env"].update(CUDA_LAUNCH_BLOCKING="1"),
    "env.env.triton-interpret": lambda s: s["env"].update(TRITON_INTERPRET="1"),
    "env.env.torch-cuda-arch-list-misses-device": lambda s: s["env"].update(TORCH_CUDA_ARCH_LIST="8.0;8.6"),
    "env.env.memory-caching-off": lambda s: s["env"].update(PYTORCH_NO_CUDA_MEMORY_CACHING="1"),
    "env.env.cuda-cache-disabled": lambda s: s["env"].update(CUDA_CACHE_DISABLE="1"),
    "env.env.nccl-transport-disabled": lambda s: s["env"].update(NCCL_P2P_DISABLE="1"),
    "env.env.cuda-device-order": lambda s: (s["gpus"][1].update(name="NVIDIA L40S", compute_capability="8.9"),
                                            s["env"].update(CUDA_VISIBLE_DEVICES="1")),
    "env.env.xla-preallocate": lambda s: s["frameworks"].__setitem__("jax", {
        "version": "0.6.2", "jaxlib": "0.6.2", "plugins": {"jax-cuda12-plugin": "0.6.2", "jax-cuda12-pjrt": "0.6.2"}}),
    # frameworks
    "env.frameworks.torch-cpu-only": lambda s: s["frameworks"]["torch"].update(version="2.7.0+cpu", cuda=None,
                                                                               arch_list=[]),
    "env.frameworks.torch-sees-no-gpu": lambda s: s["frameworks"]["torch"].update(is_available=False, device_count=0),
    "env.frameworks.torch-cudnn-missing": lambda s: s["frameworks"]["torch"].update(cudnn=None),
    "env.frameworks.triton-torch-mismatch": lambda s: s["frameworks"]["triton"].update(version="3.5.0"),
    "env.frameworks.jax-no-cuda-plugin": lambda s: s["frameworks"].__setitem__("jax", {"version": "0.6.2",
                                                                                       "jaxlib": "0.6.2", "plugins": {}}),
    "env.frameworks.jax-plugin-mismatch": lambda s: s["frameworks"].__setitem__("jax", {
        "version": "0.6.2", "jaxlib": "0.6.2", "plugins": {"jax-cuda12-plugin": "0.5.3", "jax-cuda12-pjrt": "0.5.3"}}),
    "env.frameworks.nvidia-wheels-mixed": lambda s: s["packages"].update({"nvidia-cuda-runtime-cu13": "13.0.48"}),
    "env.frameworks.cupy-several": lambda s: s["packages"].update({"cupy-cuda11x": "13.0.0", "cupy-cuda12x": "13.4.1"}),
    "env.frameworks.pynvml-shim": lambda s: s["packages"].update(pynvml="12.0.0"),
    "env.frameworks.triton-without-gpu": lambda s: no_gpu(s),
    # gpu
    "env.gpu.none-visible": lambda s: no_gpu(s),
    "env.gpu.lost": lambda s: s["gpus"].__setitem__(1, {"index": 1, "error": "GPU is lost",
                                                         "error_type": "NVMLError_GpuIsLost"}),
    "env.gpu.count-mismatch": lambda s: s["cuda"].update(device_count=1),
    "env.gpu.xid": lambda s: s["probes"].__setitem__("kmsg", {"readable": True, "xid": [
        {"pci": "0000:18:00", "code": 79, "text": "NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has fallen off the bus."}]}),
    "env.gpu.fabric-not-ready": lambda s: g0(s).update(fabric={"state": "in_progress", "status": "success"}),
    "env.gpu.nvlink-down": lambda s: g0(s).update(nvlink={"supported": True, "active": 16, "inactive": [3, 7]}),
    "env.gpu.arch-not-in-torch": lambda s: s["frameworks"]["torch"].update(arch_list=["sm_50", "sm_60", "sm_70",
                                                                                      "sm_80"]),
    "env.gpu.triton-cannot-target": lambda s: g0(s).update(compute_capability="6.0", name="Tesla P100-PCIE-16GB"),
    "env.gpu.no-bf16": lambda s: g0(s).update(compute_capability="7.0", name="Tesla V100-SXM2-16GB"),
    "env.gpu.nvcc-cannot-target": lambda s: (g0(s).update(compute_capability="7.0", name="Tesla V100-SXM2-16GB"),
                                             s["toolkits"].__setitem__(3, tk("nvcc", "/usr/local/cuda-13.0/bin/nvcc",
                                                                             "13.0.88", "/usr/local/cuda-13.0")),
                                             s["env"].update(CUDA_HOME="/usr/local/cuda-13.0")),
    "env.gpu.arch-specific-mismatch": lambda s: (g0(s).update(compute_capability="10.3", name="NVIDIA B300"),
                                                 s["env"].update(TORCH_CUDA_ARCH_LIST="9.0;10.0a")),
    "env.gpu.ecc-uncorrectable": lambda s: g0(s)["ecc"].update(volatile_uncorrected=2),
    "env.gpu.ecc-corrected": lambda s: g0(s)["ecc"].update(volatile_corrected=4312),
    "env.gpu.ecc-disabled": lambda s: g0(s)["ecc"].update(enabled=False, pending=False),
    "env.gpu.ecc-pending": lambda s: g0(s)["ecc"].update(enabled=True, pending=False),
    "env.gpu.memory-pending-reset": lambda s: g0(s)["remapped_rows"].update(pending=True, corrected=1),
    "env.gpu.retired-pages": lambda s: g0(s)["retired_pages"].update(double_bit_ecc=3),
    "env.gpu.row-remap-failure": lambda s: g0(s)["remapped_rows"].update(failure=True, uncorrected=9),
    "env.gpu.thermal": lambda s: (g0(s).update(throttle_reasons=["hw_thermal_slowdown", "sw_thermal_slowdown"],
                                               temperature_c=91), g0(s)["clocks_mhz"].update(sm=1095)),
    "env.gpu.power-capped": lambda s: g0(s).update(throttle_reasons=["sw_power_cap"], power_w=699.2),
    "env.gpu.mig": lambda s: g0(s)["mig"].update(enabled=True, instances=7, devices=[
        {"index": 0, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb", "uuid": "MIG-aaaa", "memory_total_bytes": 40 * G}]),
    "env.gpu.persistence-off": lambda s: g0(s).update(persistence_mode=False),
    "env.gpu.pcie-degraded": lambda s: g0(s)["pcie"].update(width=8, gen=4),
    "env.gpu.memory-in-use": lambda s: g0(s).update(memory_free_bytes=2 * G),
    "env.gpu.compute-mode": lambda s: g0(s).update(compute_mode="prohibited"),
    "env.gpu.profiling-restricted": lambda s: s["host"].update(euid=1000, nvidia_params={"RmProfilingAdminOnly": "1"}),
    # host
    "env.host.disk-low-for-caches": lambda s: s["host"]["disk"]["triton"].update(free_bytes=300 << 20),
    "env.host.memory-low": lambda s: s["host"]["memory"].update(available_bytes=1 * G),
    "env.host.glibc-old": lambda s: s["host"].update(glibc="2.17"),
    "env.host.wsl": lambda s: s["host"].update(wsl=True),
    "env.host.python-old": lambda s: s["host"].update(python="3.8.10"),
    # libraries
    "env.libraries.shadowed-wheel": lambda s: lib(s, "libcudnn",
                                                  cand("/opt/cudnn8/lib/libcudnn.so.9", "9.1.0", "LD_LIBRARY_PATH",
                                                       "libcudnn.so.9"),
                                                  cand("/venv/nvidia/cudnn/lib/libcudnn.so.9", "9.7.1.26",
                                                       "wheel:cudnn", "libcudnn.so.9")),
    "env.libraries.ld-library-path-mixed": lambda s: lib(s, "libcudart",
                                                         cand("/usr/local/cuda-12.1/lib64/libcudart.so.12", "12.1.105",
                                                              "LD_LIBRARY_PATH", "libcudart.so.12"),
                                                         cand("/usr/local/cuda-12.8/lib64/libcudart.so.12", "12.8.90",
                                                              "LD_LIBRARY_PATH", "libcudart.so.12")),
    "env.libraries.runtime-libs-mismatch": lambda s: (
        lib(s, "libcudart", cand("/usr/local/cuda-12.8/lib64/libcudart.so.12", "12.8.90", "ldconfig", "libcudart.so.12")),
        lib(s, "libcublas", cand("/usr/lib/x86_64-linux-gnu/libcublas.so.11", "11.11.3.6", "ldconfig",
                                 "libcublas.so.11"))),
    # probe
    "env.probe.no-data": lambda s: [s.__setitem__(k, type(s[k])()) for k in
                                    ("gpus", "driver", "packages", "toolkits", "host", "probes", "frameworks")],
    "env.probe.nvml-unavailable": lambda s: (s["probes"].__setitem__("nvml", {
        "error": "NVML Shared Library Not Found", "error_type": "NVMLError_LibraryNotFound", "stage": "nvmlInit"}),
        no_gpu(s)),
    "env.probe.cuda-driver-unavailable": lambda s: s["probes"]["cuda"].__setitem__("cuinit", {
        "error": '"cuda" is an NVIDIA driver library and can only be found via system search.',
        "error_type": "DynamicLibNotFoundError"}),
    "env.probe.runtime-insufficient-driver": lambda s: s["probes"]["cuda"]["runtime"].__setitem__(
        "device_count_error", "cudaErrorInsufficientDriver (35)"),
    "env.probe.timeout": lambda s: s["probes"].__setitem__("nvml", {"error": "the nvml probe did not answer",
                                                                    "timeout": True}),
    "env.probe.nvidia-smi-failed": lambda s: s["probes"].__setitem__("nvidia_smi", {
        "path": "/usr/bin/nvidia-smi", "returncode": 9,
        "output": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."}),
    "env.probe.torch-import-failed": lambda s: s["probes"].__setitem__("torch_import", {
        "error": "libcudnn.so.9: cannot open shared object file", "stage": "import torch"}),
    "env.probe.schema-newer": lambda s: s.update(schema="diagnose.env/2"),
    # toolkit
    "env.toolkit.nvcc-missing": lambda s: s.__setitem__("toolkits", [t for t in s["toolkits"] if t["tool"] != "nvcc"]),
    "env.toolkit.several-cuda": lambda s: s["toolkits"].append(tk("nvcc", "/usr/bin/nvcc", "12.0.140", "PATH", 2)),
    "env.toolkit.cuda-home-mismatch": lambda s: s["env"].update(CUDA_HOME="/opt/cuda-missing"),
    "env.toolkit.host-compiler-too-new": lambda s: (s["toolkits"].__setitem__(4, tk("gcc", "/usr/bin/gcc", "15.1.0")),
                                                    s["toolkits"].__setitem__(5, tk("g++", "/usr/bin/g++", "15.1.0"))),
    "env.toolkit.ptxas-nvcc-mismatch": lambda s: s["toolkits"].__setitem__(1, tk("ptxas", "/opt/bin/ptxas", "12.4.131",
                                                                                 "PATH", 0)),
    "env.toolkit.torch-nvcc-major-mismatch": lambda s: s["frameworks"]["torch"].update(cuda="13.0",
                                                                                       version="2.9.1+cu130")
        or s["driver"].update(version="580.65.06", cuda_version="13.0"),
    "env.toolkit.compute-sanitizer-missing": lambda s: s.__setitem__(
        "toolkits", [t for t in s["toolkits"] if t["tool"] != "compute-sanitizer"]),
}

EXPECTED_SEVERITY = {
    "env.probe.timeout": "error", "env.gpu.arch-not-in-torch": "error", "env.driver.too-old": "error",
    "env.gpu.ecc-uncorrectable": "error", "env.frameworks.torch-cpu-only": "error", "env.env.cuda-launch-blocking":
    "warning", "env.env.cuda-visible-devices": "warning", "env.gpu.mig": "warning",
    "env.host.disk-low-for-caches": "error", "env.toolkit.host-compiler-too-new": "error",
    "env.gpu.nvcc-cannot-target": "error", "env.gpu.arch-specific-mismatch": "error", "env.gpu.lost": "error",
    "env.driver.forward-compat": "info", "env.driver.cuda-bindings-too-new": "info", "env.probe.no-data": "error",
    "env.libraries.shadowed-wheel": "error",
}


def test_every_check_has_a_case_and_ids_are_unique_and_sectioned():
    ids = [c.id for c in CHECKS]
    assert len(ids) >= 70
    assert len(set(ids)) == len(ids), "check ids must be unique"
    assert set(ids) == set(CASES), f"untested: {set(ids) - set(CASES)}; stale: {set(CASES) - set(ids)}"
    for c in CHECKS:
        assert c.id == f"env.{c.section}.{c.id.split('.', 2)[2]}" and c.summary


def test_healthy_snapshot_has_no_findings():
    assert run_checks(copy.deepcopy(HEALTHY)) == []


@pytest.mark.parametrize("check_id", sorted(CASES))
def test_check_fires_on_its_problem(check_id):
    snap = copy.deepcopy(HEALTHY)
    CASES[check_id](snap)
    fs = run_checks(snap)
    found = [f for f in fs if f.id == check_id]
    assert found, f"{check_id} did not fire: {[(f.id, f.title) for f in fs]}"
    for f in found:
        assert f.reader == "env" and f.title and f.fix, f
        assert f.facts["section"] == check_id.split(".")[1]
    if check_id in EXPECTED_SEVERITY:
        assert found[0].severity == EXPECTED_SEVERITY[check_id], found[0]
    assert not [f for f in fs if f.id == "env.probe.check-crashed"]


def test_the_driver_row_carries_the_facts_and_an_exact_build():
    snap = copy.deepcopy(HEALTHY)
    CASES["env.driver.too-old"](snap)
    (f,) = [f for f in run_checks(snap) if f.id == "env.driver.too-old"]
    assert "470.239.06" in f.title and "12.8" in f.title and "11.4" in f.title and "nvcc 12.8.93" in f.title
    assert "525.60.13" in f.fix
    # H100 (CC 9.0) on a CUDA 11.4 driver: the newest listed wheel with sm_90 SASS it runs is 2.7.1+cu118
    assert "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118" in f.fix
    assert "cuda-compat-12-8" in f.fix          # data-center GPUs: forward compatibility is an option


def test_minor_version_compatibility_is_a_warning_not_an_error():
    snap = copy.deepcopy(HEALTHY)
    snap["driver"].update(version="560.35.03", cuda_version="12.6")    # >= 525: 12.8 runs under minor compat
    snap["cuda"].update(driver_api_version="12.6")
    snap["frameworks"]["torch"].update(imported=False)
    (f,) = [f for f in run_checks(snap) if f.id == "env.driver.too-old"]
    assert f.severity == "warning" and "minor-version compatibility" in f.title


def test_gpu_rows_group_identical_findings():
    snap = copy.deepcopy(HEALTHY)
    for g in snap["gpus"]:
        g["ecc"]["volatile_uncorrected"] = 1
    (f,) = [f for f in run_checks(snap) if f.id == "env.gpu.ecc-uncorrectable"]
    assert f.title.startswith("GPUs 0, 1 (2x NVIDIA H100 80GB HBM3, CC 9.0)") and f.facts["gpus"] == [0, 1]


def test_gcc_and_gpp_of_one_version_are_one_row():
    snap = copy.deepcopy(HEALTHY)
    CASES["env.toolkit.host-compiler-too-new"](snap)
    (f,) = [f for f in run_checks(snap) if f.id == "env.toolkit.host-compiler-too-new"]
    assert "gcc (/usr/bin/gcc) and g++ (/usr/bin/g++) 15.1.0" in f.title


def test_ecc_with_a_pending_remap_says_reset_before_use_once():
    snap = copy.deepcopy(HEALTHY)
    g0(snap)["ecc"].update(volatile_uncorrected=3)
    g0(snap)["remapped_rows"].update(pending=True, uncorrected=3)
    fs = run_checks(snap)
    (f,) = [f for f in fs if f.id == "env.gpu.ecc-uncorrectable"]
    assert "reset before use" in f.title
    assert not [f for f in fs if f.id == "env.gpu.memory-pending-reset"]


def test_a_malformed_field_never_crashes_a_check():
    snap = copy.deepcopy(HEALTHY)
    snap["gpus"][0]["ecc"] = "garbage"
    snap["env"]["CUDA_VISIBLE_DEVICES"] = 7
    assert not [f for f in run_checks(snap) if f.id == "env.probe.check-crashed"]


# -- the one arch-coverage rule -----------------------------------------------------------------------------

# Found by running both former rules (diagnose/fusion.py `_arch_covers` and probes/checks.py `arch_covers`)
# on every single-arch target (sm_/compute_ x plain/a/f) of the 22 CCs 3.5 .. 12.1 against each of those CCs:
# 44 disagreements, all one kind: compute_XYa / compute_XYf on its own CC X.Y (fusion "runs", the checks "does
# not"). The 14 below are those of the 7 CCs 7.0 .. 10.0. Arch- and family-specific PTX is JIT-compiled on its
# own CC (data/arch.toml sources), so fusion was right there; the checks were right that sm_XYa runs on X.Y
# only; both were wrong for family-specific sm_XYf on a later CC of its family (it runs: sm_100f on 10.3).
DISAGREED = [("compute_70a", "7.0"), ("compute_70f", "7.0"), ("compute_75a", "7.5"), ("compute_75f", "7.5"),
             ("compute_80a", "8.0"), ("compute_80f", "8.0"), ("compute_86a", "8.6"), ("compute_86f", "8.6"),
             ("compute_89a", "8.9"), ("compute_89f", "8.9"), ("compute_90a", "9.0"), ("compute_90f", "9.0"),
             ("compute_100a", "10.0"), ("compute_100f", "10.0")]


@pytest.mark.parametrize("target,cc", DISAGREED)
def test_the_cases_the_two_old_rules_disagreed_on(target, cc):
    assert arch_covers([target], cc) == "ptx"


def test_arch_coverage_rules():
    assert arch_covers(["sm_80"], "8.6") == "sass"          # same major, lower minor: binary compatible
    assert arch_covers(["sm_86"], "8.0") == ""               # higher minor does not run on lower
    assert arch_covers(["sm_80", "compute_80"], "9.0") == "ptx"
    assert arch_covers(["sm_90a"], "9.0") == "sass"
    assert arch_covers(["sm_90a"], "10.0") == ""             # arch-specific code runs on its own CC only
    assert arch_covers(["compute_90a"], "10.0") == ""
    assert arch_covers(["sm_100f"], "10.3") == "sass"        # family-specific: later CCs of the family
    assert arch_covers(["sm_103f"], "10.0") == "" and arch_covers(["sm_100f"], "12.0") == ""
    assert arch_covers(["sm_120"], "12.1") == "sass" and arch_covers(["sm_90"], "12.0") == ""
    assert arch_covers(["junk"], "9.0") == "sass" and arch_covers(["sm_80"], None) == "sass"   # unknown: no claim
    assert runs_on("compute_75", "12.0") == "ptx"


def test_fusion_and_the_checks_use_the_same_rule():
    import diagnose.env.gpu as gpu_checks
    import diagnose.fusion as fusion

    assert fusion.arch_covers is arch_covers and gpu_checks.arch_covers is arch_covers


def test_ver():
    assert ver("570.124.06") == (570, 124, 6) and ver("2.13.0+cpu") == (2, 13, 0) and ver(None) == ()
    assert ver(["12"]) == () and ver({"a": 1}) == ()
