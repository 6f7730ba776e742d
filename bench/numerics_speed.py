"""`make bench-numerics`: how long `diagnose numerics` takes against a bare numpy process that loads
both tensors and calls allclose (16M elements, runs alternated, medians), and its peak memory on
1G elements (memory-mapped .npy, 4 GiB per tensor).

The arrays are a real fp32 computation against its fp64 reference (rows of an fp32 sum), written
under bench/_data/ (regenerated when missing; about 12.5 GiB for both sizes: `--skip-1g` to keep to
the 16M pair). Figures are printed, never typed in: rerun it, and say the machine was shared."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "_data"


def make_pair(name: str, rows: int, cols: int, ref_dtype=np.float64) -> tuple[Path, Path]:
    """out: fp32 sums of 16 fp32-rounded terms; ref: the same sums in fp64 (written a block at a time)."""
    out_p, ref_p = DATA / f"{name}_out.npy", DATA / f"{name}_ref.npy"
    if out_p.exists() and ref_p.exists():
        return out_p, ref_p
    DATA.mkdir(parents=True, exist_ok=True)
    o = np.lib.format.open_memmap(out_p, mode="w+", dtype=np.float32, shape=(rows, cols))
    r = np.lib.format.open_memmap(ref_p, mode="w+", dtype=ref_dtype, shape=(rows, cols))
    rng = np.random.default_rng(0)
    step = max(1, (1 << 22) // cols)
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        acc32 = np.zeros((r1 - r0, cols), np.float32)
        acc64 = np.zeros((r1 - r0, cols), np.float64)
        for _ in range(4):
            t = rng.standard_normal((r1 - r0, cols), dtype=np.float32)
            acc32 += t
            acc64 += t
        o[r0:r1] = acc32
        r[r0:r1] = acc64
    o.flush()
    r.flush()
    del o, r
    return out_p, ref_p


def peak_rss_kib(cmd: list[str], keep_stdout: bool = False) -> tuple[float, int, str]:
    """Run one command and return (wall seconds, its peak RSS in KiB via wait4, its stdout if kept)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE if keep_stdout else subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = p.stdout.read().decode() if keep_stdout else ""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({code}): {p.stderr.read().decode()[-2000:]}")
    return wall, ru.ru_maxrss, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skip-1g", action="store_true", help="only the 16M-element ratio")
    args = ap.parse_args(argv)
    py = sys.executable
    out_p, ref_p = make_pair("16m", 4096, 4096)
    bare = [py, "-c", "import sys, numpy as np; a = np.load(sys.argv[1]); b = np.load(sys.argv[2]); "
            "np.allclose(a, b)", str(out_p), str(ref_p)]
    ours = [py, "-m", "cli", "numerics", str(out_p), str(ref_p), "--json"]
    times = {"bare": [], "ours": []}
    rss = {"bare": 0, "ours": 0}
    for _ in range(args.runs):                      # alternated, so load on the machine hits both alike
        for name, cmd in (("bare", bare), ("ours", ours)):
            w, kib, _ = peak_rss_kib(cmd)
            times[name].append(w)
            rss[name] = max(rss[name], kib)
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    print(f"16M elements (4096 x 4096, out fp32 {out_p.stat().st_size >> 20} MiB, ref fp64 "
          f"{ref_p.stat().st_size >> 20} MiB), {args.runs} alternated runs, medians:")
    print(f"  bare numpy load + allclose process : {med['bare']:.2f} s, peak RSS {rss['bare'] / 1024:.0f} MiB")
    print(f"  diagnose numerics OUT REF --json   : {med['ours']:.2f} s, peak RSS {rss['ours'] / 1024:.0f} MiB")
    print(f"  ratio: {med['ours'] / med['bare']:.2f}x (goal: within 6x)")
    if args.skip_1g:
        return 0
    free = shutil.disk_usage(DATA).free
    need = 0 if (DATA / "1g_out.npy").exists() else 8 * 2 ** 30 + 2 ** 30
    if free < need:
        print(f"1G elements: skipped, {free >> 30} GiB free on {DATA} and the pair needs {need >> 30} GiB")
        return 0
    out_p, ref_p = make_pair("1g", 32768, 32768, ref_dtype=np.float32)
    w, kib, text = peak_rss_kib([py, "-m", "cli", "numerics", str(out_p), str(ref_p), "--json"], keep_stdout=True)
    doc = json.loads(text)
    size = out_p.stat().st_size + ref_p.stat().st_size
    print(f"1G elements (32768 x 32768, out and ref fp32, {size / 2 ** 30:.1f} GiB on disk): "
          f"{w:.1f} s, peak RSS {kib / 1024:.0f} MiB ({kib * 1024 / size:.1%} of the data); verdict "
          f"{doc['verdict']}, {doc['measures']['above_floor']} above the noise floor, "
          f"findings {[f['pattern'] for f in doc['findings']]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
