"""`diagnose run` on real failing programs (tests/fixtures/programs): bundles, exit status, kills, big output."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli.commands.run import wants_rerun
from probes.capture import scan_compile_output

PROGRAMS = Path(__file__).parent / "fixtures" / "programs"
DIAGNOSE = [sys.executable, "-m", "cli", "run"]


def drun(tmp_path, *cmd, opts=(), timeout=120):
    out = tmp_path / "bundle"
    r = subprocess.run(DIAGNOSE + ["-q", "--json", "--no-env", "--out", str(out), *opts, "--", *cmd],
                       capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return r, out


def result(r):
    return json.loads(r.stdout)


def test_torch_shape_error(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed: the torch shape-error capture is skipped")
    out = tmp_path / "bundle"
    r = subprocess.run(DIAGNOSE + ["-q", "--json", "--out", str(out), "--", sys.executable,
                                   str(PROGRAMS / "torch_shape_error.py")], capture_output=True, timeout=120)
    assert r.returncode == 1
    res = result(r)
    assert res["diagnosis"]["family"] == "shape-stride-mismatch"
    assert res["capture"]["exit_code"] == 1 and res["capture"]["state"] == "exited"
    for name in ("capture.json", "output.log", "stdout.log", "stderr.log", "timeline.tsv", "env.json"):
        assert (out / name).exists(), name
    log = (out / "output.log").read_bytes()
    assert log.startswith(b"multiplying (4, 3) by (4, 5)\n")
    assert b"mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)" in (out / "stderr.log").read_bytes()
    assert len(log) == len((out / "stdout.log").read_bytes()) + len((out / "stderr.log").read_bytes())
    env = json.loads((out / "env.json").read_text())
    assert env["schema"] == "diagnose.env/1" and env["findings"]
    cap = json.loads((out / "capture.json").read_text())
    assert cap["command"][-1].endswith("torch_shape_error.py") and cap["cwd"] == os.getcwd()
    assert cap["peak_rss_bytes"] > 50 << 20          # torch itself is bigger than that
    # the bundle is what classify/explain read
    c = subprocess.run([sys.executable, "-m", "cli", "classify", "-f", "jsonl", str(out)], capture_output=True, text=True)
    assert json.loads(c.stdout)["family"] == "shape-stride-mismatch"


def test_nvcc_kernel_with_too_much_shared_memory(tmp_path):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc is not installed")
    r, out = drun(tmp_path, "nvcc", "-c", "-arch=sm_90", str(PROGRAMS / "too_much_smem.cu"), "-o", str(tmp_path / "k.o"))
    res = result(r)
    assert r.returncode == res["capture"]["exit_code"] != 0
    assert b"uses too much shared data (0x40000 bytes, 0xc000 max)" in (out / "compile.log").read_bytes()
    facts = json.loads((out / "compile_facts.json").read_text())["facts"]
    assert facts == {"shared_memory_requested_bytes": 262144, "shared_memory_limit_bytes": 49152}
    assert res["diagnosis"]["family"] == "shared-memory-exceeded"


def test_ptxas_verbose_resource_usage_becomes_facts(tmp_path):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc is not installed")
    src = tmp_path / "spill.cu"
    src.write_text("__global__ void k(float *o, const float *a) {\n  float r[64];\n"
                   "  for (int i = 0; i < 64; ++i) r[i] = a[threadIdx.x * 64 + i] * i;\n"
                   "  float s = 0; for (int i = 0; i < 64; ++i) s += r[(i * 7) % 64] * r[i];\n  o[threadIdx.x] = s;\n}\n")
    r, out = drun(tmp_path, "nvcc", "-c", "-arch=sm_90", "-maxrregcount=24", str(src), "-o", str(tmp_path / "k.o"),
                  opts=("--ptxas-verbose",))
    assert r.returncode == 0, r.stderr
    cf = json.loads((out / "compile_facts.json").read_text())
    (fn,) = cf["functions"]
    assert fn["function"] == "_Z1kPfPKf" and fn["arch"] == "sm_90" and 0 < fn["registers"] <= 32
    assert fn["spill_stores_bytes"] > 0 and cf["facts"]["spilling_functions"] == ["_Z1kPfPKf"]   # 24 registers spill
    assert json.loads((out / "capture.json").read_text())["env_added"]["NVCC_APPEND_FLAGS"].endswith("-Xptxas -v")


def test_child_killed_by_a_signal(tmp_path):
    r, out = drun(tmp_path, sys.executable, str(PROGRAMS / "killed_by_signal.py"))
    assert r.returncode == 128 + signal.SIGKILL
    cap = result(r)["capture"]
    assert cap["signal"] == "SIGKILL" and cap["exit_code"] is None
    assert (out / "output.log").read_bytes() == b"working...\nabout to be killed\n"
    assert result(r)["diagnosis"]["family"] == "unknown"


def test_hang_past_timeout_kills_the_whole_group(tmp_path):
    t0 = time.monotonic()
    r, out = drun(tmp_path, sys.executable, str(PROGRAMS / "hang.py"), opts=("--timeout", "2", "--kill-grace", "1"))
    assert time.monotonic() - t0 < 30
    res = result(r)
    assert res["capture"]["timed_out"] and res["capture"]["state"] == "timed-out"
    assert r.returncode == 128 + signal.SIGKILL        # it ignored SIGTERM, so the grace period ended in SIGKILL
    assert res["diagnosis"]["family"] == "timeout-hang"
    grandchild = int((out / "stdout.log").read_text().split()[1])
    for _ in range(50):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"grandchild {grandchild} survived the timeout")


def test_a_child_printing_100_mb(tmp_path):
    r, out = drun(tmp_path, sys.executable, str(PROGRAMS / "print_100mb.py"), timeout=300)
    assert r.returncode == 3
    stdout = (out / "stdout.log").read_bytes()
    stderr = (out / "stderr.log").read_bytes()
    merged = (out / "output.log").read_bytes()
    assert len(stdout) >= 100 * 2**20 and len(merged) == len(stdout) + len(stderr)
    lines = merged.split(b"\n")
    # whole lines only: the streams interleave line by line, each in its own order
    assert [x for x in lines if x and not x.startswith((b"progress", b"RuntimeError"))] == stdout.split(b"\n")[:-1]
    assert [x for x in lines if x.startswith((b"progress", b"RuntimeError"))] == stderr.split(b"\n")[:-1]
    timeline = (out / "timeline.tsv").read_text().splitlines()
    assert timeline[0] == "offset\tstream\tseconds\tbytes" and len(timeline) > 2
    assert result(r)["capture"]["bytes"]["output"] == len(merged)


def test_exit_status_is_the_childs_and_no_command_is_a_usage_error(tmp_path):
    r, _ = drun(tmp_path, "sh", "-c", "echo out; exit 7")
    assert r.returncode == 7
    r = subprocess.run(DIAGNOSE + ["--out", str(tmp_path / "x")], capture_output=True, text=True)
    assert r.returncode == 2 and "no command" in r.stderr
    r = subprocess.run(DIAGNOSE + ["--", "no-such-program-xyz"], capture_output=True, text=True)
    assert r.returncode == 2 and "no-such-program-xyz" in r.stderr


def test_logs_are_on_disk_while_running_and_survive_diagnose_being_killed(tmp_path):
    out = tmp_path / "bundle"
    p = subprocess.Popen(DIAGNOSE + ["-q", "--no-env", "--out", str(out), "--", sys.executable, "-c",
                                     "import time; print('first line', flush=True); time.sleep(60)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(100):
            if (out / "output.log").exists() and (out / "output.log").read_bytes():
                break
            time.sleep(0.1)
        assert json.loads((out / "capture.json").read_text())["state"] == "running"
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        assert (out / "output.log").read_bytes() == b"first line\n"
    finally:
        cap = json.loads((out / "capture.json").read_text())
        if cap.get("pid"):
            try:
                os.killpg(cap["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_ctrl_c_kills_the_group_and_reports(tmp_path):
    out = tmp_path / "bundle"
    p = subprocess.Popen(DIAGNOSE + ["-q", "--json", "--no-env", "--out", str(out), "--", sys.executable, "-c",
                                     "import time; print('started', flush=True); time.sleep(60)"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(100):
        if (out / "output.log").exists() and (out / "output.log").read_bytes():
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    stdout, _ = p.communicate(timeout=30)
    res = json.loads(stdout)
    assert res["capture"]["interrupted"] and res["capture"]["signal"] == "SIGTERM"
    assert p.returncode == 128 + signal.SIGTERM


def test_rerun_keeps_both_captures_with_launch_blocking(tmp_path):
    prog = "import os, sys; print('CLB=' + os.environ.get('CUDA_LAUNCH_BLOCKING', '-')); sys.exit(1)"
    r, out = drun(tmp_path, sys.executable, "-c", prog, opts=("--rerun", "always"))
    assert r.returncode == 1
    assert (out / "output.log").read_bytes() == b"CLB=-\n"
    assert (out / "rerun-blocking" / "output.log").read_bytes() == b"CLB=1\n"
    cap = json.loads((out / "capture.json").read_text())
    assert cap["reruns"][0]["dir"] == "rerun-blocking" and cap["reruns"][0]["exit_status"] == 1


def test_rerun_decision():
    assert wants_rerun("auto", "illegal-memory-access", b"")
    assert wants_rerun("auto", "unknown", b"CUDA kernel errors might be asynchronously reported at some other API call")
    assert not wants_rerun("auto", "shape-stride-mismatch", b"RuntimeError: mat1 and mat2")
    assert not wants_rerun(None, "illegal-memory-access", b"")


def test_sanitize_without_compute_sanitizer_says_so(tmp_path):
    if shutil.which("compute-sanitizer"):
        pytest.skip("compute-sanitizer is installed here")
    r, out = drun(tmp_path, "sh", "-c", "exit 0", opts=("--sanitize",))
    assert r.returncode == 0
    assert "not on PATH" in json.loads((out / "capture.json").read_text())["reruns"][0]["error"]


def test_compile_scan_parses_ptxas_info(tmp_path):
    log = tmp_path / "c.log"
    log.write_bytes(b"ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_80'\n"
                    b"ptxas info    : Function properties for _Z3fooPf\n"
                    b"    48 bytes stack frame, 40 bytes spill stores, 40 bytes spill loads\n"
                    b"ptxas info    : Used 24 registers, 1024 bytes smem, 356 bytes cmem[0]\n")
    got = scan_compile_output(str(log))
    (fn,) = got["functions"]
    assert fn["registers"] == 24 and fn["smem_bytes"] == 1024 and fn["arch"] == "sm_80"
    assert fn["stack_frame_bytes"] == 48 and fn["spill_stores_bytes"] == 40 and fn["spill_loads_bytes"] == 40
    assert got["facts"]["spilling_functions"] == ["_Z3fooPf"]
    assert got["facts"]["max_registers"] == 24


def test_triton_compile_with_ptxas_verbose_keeps_resource_usage(tmp_path):
    pytest.importorskip("triton", reason="triton is not installed: the Triton compile capture is skipped")
    out = tmp_path / "bundle"
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))      # a cold cache: ptxas really runs
    r = subprocess.run(DIAGNOSE + ["-q", "--json", "--no-env", "--ptxas-verbose", "--out", str(out), "--",
                                   sys.executable, str(PROGRAMS / "triton_compile.py")],
                       capture_output=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((out / "capture.json").read_text())["env_added"]["TRITON_DUMP_PTXAS_LOG"] == "1"
    (fn,) = json.loads((out / "compile_facts.json").read_text())["functions"]
    assert fn["function"] == "add" and fn["arch"].startswith("sm_90") and fn["registers"] > 0
    assert fn["spill_stores_bytes"] == 0
