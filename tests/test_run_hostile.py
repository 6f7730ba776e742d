"""`diagnose run` against hostile commands: floods, setsid grandchildren, signals, a killed diagnose, symlinks."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DIAGNOSE = [sys.executable, "-m", "cli", "run"]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def _wait_for(pred, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:                                   # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def test_reading_a_flood_on_stderr_keeps_memory_bounded(tmp_path):
    # 200 MB on stderr: the compiler-line scan used to read it whole (300 MB -> 616 MB RSS).
    flood = "import os\nb = (b'x' * 1023 + b'\\n') * 1024\nfor _ in range(200): os.write(2, b)\n"
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = tmp_path / "b"
    p = subprocess.run([sys.executable, "-c", probe, *DIAGNOSE, "-q", "--no-env", "--out", str(out), "--",
                        sys.executable, "-c", flood], capture_output=True, text=True, timeout=300, env=ENV)
    peak_mb = int(p.stdout.split()[-1]) / 1024
    assert (out / "stderr.log").stat().st_size == 200 << 20
    assert peak_mb < 150, f"peak RSS {peak_mb:.0f} MB for 200 MB of stderr"


def test_timeout_kills_a_grandchild_that_left_the_group(tmp_path):
    prog = ("import subprocess, sys, time\n"
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
            "print('grandchild', g.pid, flush=True)\ntime.sleep(600)\n")
    out = tmp_path / "b"
    r = subprocess.run(DIAGNOSE + ["-q", "--json", "--no-env", "--timeout", "1.5", "--kill-grace", "0.5",
                                   "--out", str(out), "--", sys.executable, "-c", prog],
                       capture_output=True, timeout=120, env=ENV)
    assert json.loads(r.stdout)["capture"]["timed_out"]
    grandchild = int((out / "stdout.log").read_text().split()[1])
    try:
        assert _wait_for(lambda: not _alive(grandchild), 10), f"setsid grandchild {grandchild} survived --timeout"
    finally:
        if _alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def test_sigterm_mid_flood_keeps_output_log_complete(tmp_path):
    prog = "import sys\ni = 0\nwhile True:\n    sys.stdout.write(f'line {i} ' + 'y' * 200 + '\\n'); i += 1\n"
    out = tmp_path / "b"
    p = subprocess.Popen(DIAGNOSE + ["-q", "--json", "--no-env", "--out", str(out), "--", sys.executable, "-c", prog],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    assert _wait_for(lambda: (out / "output.log").exists() and (out / "output.log").stat().st_size > 5 << 20)
    for _ in range(20):                 # a burst, as a supervisor or a user at the keyboard might send
        p.send_signal(signal.SIGTERM)
        time.sleep(0.01)
    p.communicate(timeout=60)        # once the bundle is whole, a late signal may end diagnose itself
    cap = json.loads((out / "capture.json").read_text())
    assert cap["interrupted"] and cap["state"] == "interrupted"
    merged, raw = (out / "output.log").read_bytes(), (out / "stdout.log").read_bytes()
    assert merged == raw and len(merged) == cap["bytes"]["output"]      # not a chunk lost


def test_a_killed_diagnose_leaves_the_bundle_interrupted_and_the_command_dead(tmp_path):
    out = tmp_path / "b"
    p = subprocess.Popen(DIAGNOSE + ["-q", "--no-env", "--out", str(out), "--", sys.executable, "-c",
                                     "import time; print('first line', flush=True); time.sleep(600)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=ENV)
    assert _wait_for(lambda: (out / "output.log").exists() and (out / "output.log").read_bytes())
    child = json.loads((out / "capture.json").read_text())["pid"]
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    try:
        assert _wait_for(lambda: json.loads((out / "capture.json").read_text())["state"] == "interrupted")
        assert _wait_for(lambda: not _alive(child), 10), "the command outlived diagnose"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
    c = subprocess.run([sys.executable, "-m", "cli", "classify", "-f", "jsonl", str(out)], capture_output=True,
                       text=True, env=ENV, timeout=120)
    d = json.loads(c.stdout)
    assert d["family"] == "unknown" and d["signature"] == "capture.interrupted" and d["confidence"] <= 0.3
    assert any("diagnose itself was killed" in n for n in d["notes"])


def test_a_bundle_stuck_at_running_is_not_called_clean(tmp_path):
    from diagnose.engine import diagnose_file

    b = tmp_path / "b"
    b.mkdir()
    (b / "output.log").write_text("step 1 ok\n")
    (b / "capture.json").write_text(json.dumps({"state": "running", "pid": 1}))
    d = diagnose_file(b)
    assert d.family == "unknown" and d.signature == "capture.interrupted"
    (b / "capture.json").write_text(json.dumps({"state": "exited", "exit_code": 0}))
    assert diagnose_file(b).family == "none"


def test_a_dangling_symlink_out_is_a_clear_error(tmp_path):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere")
    r = subprocess.run(DIAGNOSE + ["-q", "--out", str(link), "--", "true"], capture_output=True, text=True,
                       env=ENV, timeout=60)
    assert r.returncode == 2 and "dangling symbolic link" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(DIAGNOSE + ["-q", "--out", "/dev/null/x", "--", "true"], capture_output=True, text=True,
                       env=ENV, timeout=60)
    assert r.returncode == 2 and "cannot create the bundle directory" in r.stderr


def test_bundle_files_are_never_written_through_a_symlink(tmp_path):
    from probes.capture import run_capture

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    b = tmp_path / "b"
    b.mkdir()
    (b / "output.log").symlink_to(victim)
    with pytest.raises(OSError):
        run_capture(["true"], str(b), echo=False)
    assert victim.read_text() == "precious\n"
