"""How long `diagnose env` takes, beside `python -m torch.utils.collect_env`, `import torch` and cuda-doctor.

Goals (issue 4): without torch installed, <= 0.25 s wall; with torch installed, <= `import torch` + 0.15 s.
"Without torch" is a real second virtualenv holding only what `diagnose env` needs (rich, psutil,
nvidia-ml-py, cuda-bindings) plus cuda-doctor, created once under $TMPDIR; the diagnose sources are on its
PYTHONPATH. Prints medians of --runs runs (after one warm-up) and the measured ratios. Run: make bench-env
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NO_TORCH_VENV = Path(tempfile.gettempdir()) / "diagnose-bench-venv"
# what `diagnose env` itself imports (not torch); a stale venv missing one is rebuilt
NO_TORCH_PKGS = ["rich", "psutil", "nvidia-ml-py", "cuda-bindings", "google-re2", "numpy", "cuda-doctor"]


def timed(argv: list[str], runs: int, env: dict | None = None) -> tuple[float | None, str]:
    """Median wall seconds of `runs` runs after one warm-up (which also writes .pyc files)."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)       # an installed tool has its bytecode cached
    try:
        first = subprocess.run(argv, capture_output=True, env=env, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if first.returncode not in (0, 1):         # 1 = findings; anything else is a failure, not a time
        tail = first.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return None, f"exit {first.returncode}: {tail[0][:80]} (no time: it failed)"
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, timeout=300)
        times.append(time.perf_counter() - t)
    return statistics.median(times), f"exit {first.returncode}"


def no_torch_venv() -> tuple[Path | None, str]:
    py = NO_TORCH_VENV / "bin" / "python"
    if py.exists():
        ok = subprocess.run([str(py), "-c", "import rich, pynvml, cuda.bindings, re2, numpy"],
                            capture_output=True).returncode == 0
        if ok:
            return py, f"reused {NO_TORCH_VENV}"
    shutil.rmtree(NO_TORCH_VENV, ignore_errors=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(NO_TORCH_VENV)], check=True, capture_output=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *NO_TORCH_PKGS],
                       check=True, capture_output=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        err = getattr(e, "stderr", b"") or b""
        return None, f"could not build it: {e} {err.decode(errors='replace')[-300:]}"
    return py, f"created {NO_TORCH_VENV}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-venv", action="store_true", help="skip the torch-less virtualenv (and cuda-doctor)")
    a = ap.parse_args()
    rows: list[tuple[str, float | None, str]] = []

    def row(label, argv, env=None):
        t, note = timed(argv, a.runs, env)
        rows.append((label, t, note))
        print(f"{label:<58} {'%.3f s' % t if t is not None else 'n/a':>9}   {note}", flush=True)
        return t

    print(f"diagnose env speed, median of {a.runs} runs after a warm-up; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}\n")
    py = sys.executable
    has_torch = subprocess.run([py, "-c", "import importlib.util as u; exit(u.find_spec('torch') is None)"]).returncode == 0

    row("python -c pass (interpreter start: shows how loaded the machine is)", [py, "-S", "-c", "pass"])
    print("with torch installed (this virtualenv):" if has_torch else "this virtualenv has no torch:")
    d_human = row("  diagnose env", [py, "-m", "cli", "env"])
    d_json = row("  diagnose env --json", [py, "-m", "cli", "env", "--json"])
    row("  diagnose env --full (pynvml + cuda-bindings even with no driver)", [py, "-m", "cli", "env", "--full"])
    row("  diagnose env --import-frameworks always", [py, "-m", "cli", "env", "--import-frameworks", "always"])
    imp = collect = None
    if has_torch:
        imp = row("  python -c 'import torch'", [py, "-c", "import torch"])
        collect = row("  python -m torch.utils.collect_env", [py, "-m", "torch.utils.collect_env"])

    nd_human = nd_json = doctor = None
    if not a.no_venv:
        vpy, note = no_torch_venv()
        print(f"\nwithout torch (virtualenv {NO_TORCH_VENV}: {note}):")
        if vpy:
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            nd_human = row("  diagnose env", [str(vpy), "-m", "cli", "env"], env)
            nd_json = row("  diagnose env --json", [str(vpy), "-m", "cli", "env", "--json"], env)
            row("  diagnose env --full", [str(vpy), "-m", "cli", "env", "--full"], env)
            cd = vpy.parent / "cuda-doctor"
            if cd.exists():
                doctor = row("  cuda-doctor diagnose (cuda-doctor 0.2.0)", [str(cd), "diagnose"])
            else:
                print("  cuda-doctor: not installed (pip could not install it): skipped")
        else:
            print("  skipped: the torch-less virtualenv could not be built; cuda-doctor skipped too")

    print("\ngoals:")
    if nd_human is not None:
        print(f"  without torch: diagnose env {nd_human:.3f} s (--json {nd_json:.3f} s), goal <= 0.25 s: "
              f"{'MET' if nd_human <= 0.25 else 'NOT MET'}")
    if has_torch and imp is not None:
        print(f"  with torch: diagnose env {d_human:.3f} s vs import torch {imp:.3f} s + 0.15 = {imp + 0.15:.3f} s: "
              f"{'MET' if d_human <= imp + 0.15 else 'NOT MET'} (ratio to import torch {d_human / imp:.2f})")
        print(f"  vs python -m torch.utils.collect_env: {collect / d_human:.1f}x faster")
    if doctor is not None and nd_human is not None:
        print(f"  vs cuda-doctor: {doctor / nd_human:.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
