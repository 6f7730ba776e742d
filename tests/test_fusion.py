"""Env-aware diagnosis: (log, snapshot) -> diagnosis."""
import copy
import json
from pathlib import Path

from diagnose.engine import diagnose_text
from diagnose.env.arch import arch_covers
from diagnose.fusion import fuse


def _arch_covers(archs, cc):
    return arch_covers(archs, cc) != ""

SNAP = json.loads((Path(__file__).parent / "fixtures" / "snapshots" / "h100-healthy.madeup.json").read_text())
NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 GiB. GPU 0 has a total capacity of "
       "79.19 GiB of which 60.00 GiB is free.\n")


def _snap(arch_list, cc="9.0"):
    s = copy.deepcopy(SNAP)
    s["frameworks"]["torch"]["arch_list"] = arch_list
    for g in s["gpus"]:
        g["compute_capability"] = cc
    return s


def test_arch_cover_rules():
    assert _arch_covers(["sm_80", "sm_90"], "9.0")
    assert _arch_covers(["sm_80", "sm_86"], "8.9")          # same major, lower minor SASS runs
    assert not _arch_covers(["sm_80", "sm_86"], "9.0")       # other major: no SASS
    assert _arch_covers(["sm_80", "compute_80"], "9.0")      # PTX JIT-compiles forward
    assert not _arch_covers(["sm_90a"], "10.0")              # arch-specific code runs only on its own CC


def test_no_kernel_image_becomes_confirmed_arch_mismatch_naming_the_wheel():
    d = diagnose_text(NO_IMAGE)
    assert d.family == "arch-mismatch"
    fused = diagnose_text(NO_IMAGE, snapshot=_snap(["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"]))
    assert fused.family == "arch-mismatch" and fused.confidence >= 0.95
    assert any("confirmed" in e and "9.0" in e for e in fused.env)
    assert "cu12" in fused.fix and fused.facts["device_cc"] == "9.0"


def test_no_kernel_image_with_a_covering_torch_points_elsewhere():
    fused = diagnose_text(NO_IMAGE, snapshot=_snap(["sm_80", "sm_90"]))
    assert any("another" in e and "extension" in e for e in fused.env)
    # the snapshot does not confirm the usual reading: the confidence stays the log's own (by kind)
    assert fused.confidence == diagnose_text(NO_IMAGE).confidence and not any("confirmed" in e for e in fused.env)


def test_oom_names_the_device_memory_and_a_too_large_request():
    fused = diagnose_text(OOM, snapshot=SNAP)
    assert fused.family == "oom"
    assert any("in total" in e and SNAP["gpus"][0]["name"] in e for e in fused.env)
    assert any("larger than the whole device" in e for e in fused.env)


def test_fuse_is_pure_and_tolerates_missing_keys():
    d = diagnose_text(NO_IMAGE)
    before = d.to_json()
    fuse(d, {"schema": "diagnose.env/1"})
    fuse(d, {"gpus": [{}], "frameworks": {}})
    assert d.to_json() == before


def test_insufficient_driver_with_no_driver_at_all_is_missing_library():
    snap = json.loads((Path(__file__).parent / "fixtures" / "snapshots" /
                       "recorded-nogpu-cpu-torch-2026-11-30.json").read_text())
    log = "cudaGetDeviceCount failed: CUDA driver version is insufficient for CUDA runtime version\n"
    assert diagnose_text(log).family == "driver-mismatch"
    fused = diagnose_text(log, snapshot=snap)
    assert fused.family == "missing-library" and any("no NVIDIA driver" in e for e in fused.env)
    assert diagnose_text(log, snapshot=SNAP).family == "driver-mismatch"   # a machine with a driver and GPUs


def test_bundle_capture_timeout_and_signal(tmp_path):
    from diagnose.engine import diagnose_file

    b = tmp_path / "bundle"
    b.mkdir()
    (b / "output.log").write_text("step 1\nstep 2\n")
    (b / "capture.json").write_text(json.dumps({"timed_out": True, "wall_s": 30.0, "signal": "SIGKILL"}))
    d = diagnose_file(b)
    assert d.family == "timeout-hang" and any("30.0 s" in e for e in d.notes)
    (b / "capture.json").write_text(json.dumps({"timed_out": False, "signal": "SIGKILL", "exit_code": None}))
    d = diagnose_file(b)
    assert d.family == "unknown" and "SIGKILL" in d.title
