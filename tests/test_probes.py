"""The probes, for real, on this machine: no driver, no GPU; each failure becomes a finding, never a crash."""
import ctypes
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probes import device, gather
from diagnose.env import run_checks as _run_checks, snapshot_json
from probes.schema import SCHEMA, SnapshotError, validate


def run_checks(snap):
    """The findings as a snapshot stores them (dicts), folded findings listed in `facts.also`."""
    return [snapshot_json(f) for f in _run_checks(snap)]


def folded(findings, fid):
    return " ".join(a for f in findings for a in f["facts"].get("also", []) if a.startswith(fid + ":"))

FIX = Path(__file__).parent / "fixtures" / "snapshots"
DIAGNOSE = [sys.executable, "-m", "cli"]


def _loadable(name):
    try:
        ctypes.CDLL(name)
        return True
    except OSError:
        return False


no_driver = pytest.mark.skipif(_loadable("libnvidia-ml.so.1") or _loadable("libcuda.so.1"),
                               reason="an NVIDIA driver is installed here: the no-driver paths cannot be exercised")


@no_driver
def test_nvml_probe_without_driver_reports_library_not_found():
    out = device.nvml_probe()
    assert out["error_type"] == "NVMLError_LibraryNotFound" and out["stage"] == "nvmlInit"
    assert out["gpus"] == []


@no_driver
def test_cuda_probe_without_driver_cuinit_raises_and_runtime_says_35():
    pytest.importorskip("cuda.bindings")
    out = device.cuda_probe()
    assert out["cuinit"]["error_type"] == "DynamicLibNotFoundError"
    assert "35" in out["runtime"]["device_count_error"]
    assert out["devices"] == []


@no_driver
def test_full_snapshot_turns_each_probe_failure_into_a_finding():
    pytest.importorskip("cuda.bindings")
    snap = gather.snapshot(full=True)
    fs = run_checks(snap)
    ids = {f["id"]: f for f in fs}
    assert "NVMLError_LibraryNotFound" in ids["env.probe.nvml-unavailable"]["message"]
    # one cause, one row: no driver explains cuInit's failure and the runtime's error 35
    assert "DynamicLibNotFoundError" in folded(fs, "env.probe.cuda-driver-unavailable")
    assert "cudaErrorInsufficientDriver (35)" in folded(fs, "env.probe.runtime-insufficient-driver")
    assert "env.probe.cuda-driver-unavailable" not in ids
    assert snap["gpus"] == [] and snap["driver"]["error"] == "NVML Shared Library Not Found"


@no_driver
def test_default_snapshot_skips_driver_children_when_the_libraries_cannot_load_and_says_so():
    snap = gather.snapshot()
    assert snap["probes"]["cuda"]["skipped"] is True and snap["probes"]["nvml"]["skipped"] is True
    fs = run_checks(snap)
    ids = {f["id"]: f for f in fs}
    assert "libcuda.so.1" in folded(fs, "env.probe.cuda-driver-unavailable")
    assert "libnvidia-ml.so.1" in ids["env.probe.nvml-unavailable"]["message"]


def test_torch_probe_reports_a_cpu_build_or_the_missing_import():
    out = device.torch_probe()
    try:
        import torch
    except ImportError:
        assert out["stage"] == "import torch"
        return
    assert out["version"] == torch.__version__ and out["cuda"] == torch.version.cuda


def test_packages_read_without_importlib_metadata_agree_with_it():
    pkgs = gather.installed_packages()
    for name in ("rich", "psutil", "nvidia-ml-py", "pytest"):
        assert pkgs[name]["version"] == importlib.metadata.version(name), name


def test_torch_static_matches_torch_without_importing_it():
    meta = gather.installed_packages().get("torch")
    if not meta:
        pytest.skip("torch is not installed: nothing to read")
    static = gather.torch_static(meta["location"])
    assert static["version"] == importlib.metadata.version("torch")
    code = ("import sys, json; from probes.gather import snapshot; s = snapshot(); "
            "print(json.dumps({'imported': 'torch' in sys.modules, 'torch': s['frameworks'].get('torch')}))")
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert out["imported"] is False, "gather must not import torch in its own process"
    assert out["torch"]["version"] == static["version"]
    if static.get("cuda") is None:
        assert out["torch"]["arch_list"] == [] and out["torch"]["imported"] is False


def test_toolkits_found_with_versions():
    nvcc = [t for t in gather.toolkit_candidates() if t["tool"] == "nvcc"]
    if not nvcc:
        pytest.skip("no nvcc installed here")
    snap = gather.snapshot()
    found = [t for t in snap["toolkits"] if t["tool"] == "nvcc"]
    real = subprocess.run([nvcc[0]["path"], "--version"], capture_output=True, text=True).stdout
    assert found and found[0]["version"] and f"V{found[0]['version']}" in real


def test_parse_tool_versions():
    assert gather.parse_tool_version("nvcc", "Cuda compilation tools, release 13.0, V13.0.88") == "13.0.88"
    assert gather.parse_tool_version("gcc", "12.2.0\n") == "12.2.0"
    assert gather.parse_tool_version("clang", "Debian clang version 14.0.6\n") == "14.0.6"


def test_a_hung_nvidia_smi_is_killed_and_becomes_a_finding(tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nsleep 60\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    snap = gather.snapshot(timeout=2.0, env=env)
    assert snap["probes"]["nvidia_smi"].get("timeout") is True
    assert snap["probes"]["elapsed_s"] < 10
    assert any(f["id"] == "env.probe.timeout" and "nvidia_smi" in f["message"] for f in run_checks(snap))


def test_secrets_never_recorded():
    env = gather.env_vars({"CUDA_HOME": "/usr/local/cuda", "NCCL_API_KEY": "x", "TORCH_HUB_TOKEN": "y", "HOME": "/root"})
    assert env == {"CUDA_HOME": "/usr/local/cuda"}


def test_validate_names_the_file_and_fills_sections():
    with pytest.raises(SnapshotError, match="f.json"):
        validate({"gpus": []}, "f.json")
    with pytest.raises(SnapshotError, match="schema"):
        validate({"schema": "diagnose.env/two"}, "f.json")
    newer = validate({"schema": "diagnose.env/9", "gpus": [], "host": {"python": "3.12.1"}}, "f.json")
    assert any(f["id"] == "env.probe.schema-newer" for f in run_checks(newer))   # read, and said so
    assert validate({"schema": SCHEMA}, "f.json")["gpus"] == []


# -- the command ------------------------------------------------------------------------------------------

def test_env_json_is_a_valid_snapshot_and_exit_status_follows_errors(tmp_path):
    r = subprocess.run(DIAGNOSE + ["env", "--json", "-o", str(tmp_path / "s.json")], capture_output=True, text=True)
    snap = json.loads(r.stdout)
    assert snap["schema"] == SCHEMA and validate(snap)
    errors = [f for f in snap["findings"] if f["severity"] == "error"]
    assert r.returncode == (1 if errors else 0)
    assert json.loads((tmp_path / "s.json").read_text())["schema"] == SCHEMA


def test_env_from_a_recorded_snapshot_judges_that_machine(tmp_path):
    snap = json.loads((FIX / "h100-healthy.madeup.json").read_text())
    snap["frameworks"]["torch"].update(version="2.7.0+cpu", cuda=None, arch_list=[])
    p = tmp_path / "cpu-torch.json"
    p.write_text(json.dumps(snap))
    r = subprocess.run(DIAGNOSE + ["env", "--from", str(p)], capture_output=True, text=True,
                       env=dict(os.environ, COLUMNS="200"))
    assert r.returncode == 1
    assert "env.frameworks.torch-cpu-only" in r.stdout and "H100" in r.stdout
    flat = " ".join(r.stdout.split())
    assert "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128" in flat
    ok = subprocess.run(DIAGNOSE + ["env", "--from", str(FIX / "h100-healthy.madeup.json")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_env_from_a_bad_file_exits_2_naming_it(tmp_path):
    p = tmp_path / "notes.json"
    p.write_text('{"hello": 1}')
    r = subprocess.run(DIAGNOSE + ["env", "--from", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and "notes.json" in r.stderr and "diagnose env --json" in r.stderr
    r = subprocess.run(DIAGNOSE + ["env", "--from", str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "missing.json" in r.stderr


def test_recorded_snapshots_of_this_machine_still_check():
    recorded = sorted(FIX.glob("recorded-*.json"))
    assert recorded
    for p in recorded:
        snap = validate(json.loads(p.read_text()), p.name)
        fs = run_checks(snap)
        ids = {f["id"] for f in fs}
        assert "env.probe.nvml-unavailable" in ids, p.name
        assert not [f for f in fs if f["severity"] != "info"], p.name     # no GPU meant, none missing: no alarm
        if "-full-" in p.name:      # recorded with --full: pynvml, cuInit and cudaGetDeviceCount all answered
            assert folded(fs, "env.probe.cuda-driver-unavailable") and folded(fs, "env.probe.runtime-insufficient-driver")


def test_help_does_not_import_the_probes():
    code = "import sys; from cli.main import build_parser; build_parser(); print(sorted(m for m in sys.modules if m.split('.')[0] in ('probes', 'psutil', 'pynvml', 'cuda', 'rich', 'torch')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the GPU path, on a stand-in for pynvml (no GPU here): mapping and fail-soft per call ----------------

class _FakeNVML:
    """Answers like pynvml does on one H100; calls listed in `unsupported` raise as on GPUs that lack them."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 0, 1

    class NVMLError_NotSupported(Exception):
        pass

    def __init__(self, unsupported=()):
        self.unsupported = set(unsupported)

    def __getattr__(self, name):
        answers = {
            "nvmlInit": None, "nvmlShutdown": None, "nvmlSystemGetDriverVersion": "570.124.06",
            "nvmlSystemGetCudaDriverVersion": 12080, "nvmlSystemGetNVMLVersion": "12.570.124.06",
            "nvmlDeviceGetCount": 1, "nvmlDeviceGetHandleByIndex": "h0", "nvmlDeviceGetName": "NVIDIA H100 80GB HBM3",
            "nvmlDeviceGetUUID": "GPU-1234", "nvmlDeviceGetCudaComputeCapability": (9, 0),
            "nvmlDeviceGetPciInfo": type("Pci", (), {"busId": b"00000000:18:00.0"})(),
            "nvmlDeviceGetMemoryInfo": type("Mem", (), {"total": 85520809984, "free": 85000000000, "used": 520809984})(),
            "nvmlDeviceGetEccMode": [1, 1], "nvmlDeviceGetTotalEccErrors": 0, "nvmlDeviceGetMigMode": [0, 0],
            "nvmlDeviceGetPersistenceMode": 1, "nvmlDeviceGetComputeMode": 0, "nvmlDeviceGetClockInfo": 1980,
            "nvmlDeviceGetMaxClockInfo": 1980, "nvmlDeviceGetCurrentClocksEventReasons": 0x1 | 0x40,
            "nvmlDeviceGetCurrPcieLinkGeneration": 5, "nvmlDeviceGetMaxPcieLinkGeneration": 5,
            "nvmlDeviceGetCurrPcieLinkWidth": 8, "nvmlDeviceGetMaxPcieLinkWidth": 16,
            "nvmlDeviceGetRetiredPages": [], "nvmlDeviceGetRetiredPagesPendingStatus": 0,
            "nvmlDeviceGetRemappedRows": (0, 0, 0, 0), "nvmlDeviceGetTemperature": 41, "nvmlDeviceGetPowerUsage": 71500,
        }
        if name not in answers:
            raise AttributeError(name)
        value = answers[name]

        def call(*args):
            if name in self.unsupported:
                raise self.NVMLError_NotSupported("Not Supported")
            return value
        return call


def test_nvml_gpu_mapping_and_one_failing_call_does_not_lose_the_rest(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _FakeNVML(unsupported={"nvmlDeviceGetRemappedRows", "nvmlDeviceGetPowerUsage"}))
    out = device.nvml_probe()
    assert out["driver_version"] == "570.124.06" and out["cuda_driver_version"] == "12.8"
    (g,) = out["gpus"]
    assert g["compute_capability"] == "9.0" and g["pci_bus_id"] == "00000000:18:00.0"
    assert g["ecc"]["enabled"] is True and g["ecc"]["volatile_uncorrected"] == 0
    assert g["throttle_reasons"] == ["gpu_idle", "hw_thermal_slowdown"]
    assert g["pcie"] == {"gen": 5, "gen_max": 5, "width": 8, "width_max": 16}
    assert g["power_w_error"] == "Not Supported" and g["remapped_rows"] == {"rows_error": "Not Supported"}
    snap = {"schema": SCHEMA, "gpus": gather.merge_gpus(out["gpus"], [{"index": 0, "pci_bus_id": "00000000:18:00.0",
                                                                      "sm_count": 132,
                                                                      "shared_memory_per_block_optin_bytes": 232448}]),
            "driver": {"version": out["driver_version"], "cuda_version": out["cuda_driver_version"]}}
    assert snap["gpus"][0]["sm_count"] == 132 and snap["gpus"][0]["shared_memory_per_block_optin_bytes"] == 232448
    ids = {f["id"] for f in run_checks(validate(snap))}
    assert {"env.gpu.thermal", "env.gpu.pcie-degraded"} <= ids


# -- the host probes added for issue #18, on files laid out as the kernel and the loader lay them out ----

def test_library_inventory_orders_ld_library_path_then_wheels_then_ldconfig(tmp_path):
    ld = tmp_path / "cuda-12.1" / "lib64"
    ld.mkdir(parents=True)
    (ld / "libcudart.so.12.1.105").write_bytes(b"")
    (ld / "libcudart.so.12").symlink_to("libcudart.so.12.1.105")
    (ld / "libcudnn.so.9").write_bytes(b"")
    site = tmp_path / "site"
    wheel = site / "nvidia" / "cudnn" / "lib"
    wheel.mkdir(parents=True)
    (wheel / "libcudnn.so.9").write_bytes(b"")
    ldconfig = ("3 libs found in cache `/etc/ld.so.cache'\n"
                "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda-12.8/lib64/libcudart.so.12\n"
                "\tlibfoo.so.1 (libc6,x86-64) => /usr/lib/libfoo.so.1\n")
    inv = gather.library_inventory({"LD_LIBRARY_PATH": str(ld)}, ldconfig, path=[str(site)],
                                   wheel_versions={"cudnn": "9.7.1.26"})
    cudart = inv["libcudart"]["candidates"]
    assert [c["via"] for c in cudart] == ["LD_LIBRARY_PATH", "ldconfig"]
    assert cudart[0]["soname"] == "libcudart.so.12" and cudart[0]["version"] == "12.1.105"
    cudnn = inv["libcudnn"]["candidates"]
    assert [c["via"] for c in cudnn] == ["LD_LIBRARY_PATH", "wheel:cudnn"] and cudnn[1]["version"] == "9.7.1.26"
    assert "libfoo" not in inv


def test_kernel_log_xids_and_an_unreadable_log(tmp_path):
    log = tmp_path / "kmsg"
    log.write_text("6,1,2,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
                   "4,2,3,-;NVRM: Xid (PCI:0000:4a:00): 79, pid=0, name=, GPU has fallen off the bus.\n")
    out = gather.kernel_log_xids(str(log))
    assert out["readable"] and out["xid"] == [{"pci": "0000:4a:00", "code": 79, "text": out["xid"][0]["text"]}]
    missing = gather.kernel_log_xids(str(tmp_path / "nope"))
    assert missing["readable"] is False and "nope" in missing["error"]


def test_nvidia_params_devices_and_amd_topology(tmp_path):
    params = tmp_path / "params"
    params.write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n")
    assert gather.nvidia_params(str(params)) == {"RmProfilingAdminOnly": "1"}
    assert gather.nvidia_params(str(tmp_path / "none")) == {}
    dev = tmp_path / "dev"
    (dev / "vfio").mkdir(parents=True)
    for n in ("nvidia0", "nvidiactl", "neuron0", "accel0", "kfd", "null"):
        (dev / n).write_text("")
    (dev / "vfio" / "0").write_text("")
    d = gather.device_nodes(str(dev))
    assert d["nvidia"] == [str(dev / "nvidia0"), str(dev / "nvidiactl")] and d["neuron"] == [str(dev / "neuron0")]
    assert d["accel"] == [str(dev / "accel0")] and d["vfio"] == [str(dev / "vfio" / "0")]
    node = tmp_path / "nodes" / "1"
    node.mkdir(parents=True)
    (node / "properties").write_text("cpu_cores_count 0\ngfx_target_version 90010\n")
    (tmp_path / "nodes" / "0").mkdir()
    (tmp_path / "nodes" / "0" / "properties").write_text("cpu_cores_count 64\ngfx_target_version 0\n")
    assert gather.amd_gpus(str(tmp_path / "nodes")) == [{"node": 1, "gfx": "gfx90a"}]


def test_nvml_mig_fabric_and_nvlink_probes():
    class Fake(_FakeNVML):
        def __getattr__(self, name):
            extra = {"nvmlDeviceGetMigMode": [1, 1], "nvmlDeviceGetMaxMigDeviceCount": 2,
                     "nvmlDeviceGetGpuFabricInfo": type("F", (), {"state": 3, "status": 0})()}
            if name in extra:
                return lambda *a: extra[name]
            if name == "nvmlDeviceGetMigDeviceHandleByIndex":
                def mig(h, i):
                    if i == 1:
                        raise self.NVMLError_NotSupported("Not Found")
                    return "m0"
                return mig
            if name == "nvmlDeviceGetNvLinkState":
                def link(h, i):
                    if i >= 4:
                        raise self.NVMLError_NotSupported("Not Supported")
                    return 0 if i == 2 else 1
                return link
            return super().__getattr__(name)
    N = Fake()
    g = device._nvml_gpu(N, 0)
    assert g["mig"]["enabled"] is True and [d["index"] for d in g["mig"]["devices"]] == [0]
    assert g["mig"]["devices"][0]["memory_total_bytes"] == 85520809984
    assert g["fabric"] == {"state": "completed", "status": "success"}
    assert g["nvlink"] == {"supported": True, "active": 3, "inactive": [2]}
