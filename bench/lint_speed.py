"""How long `diagnose lint` takes over 1,000 kernel files (goal: under 10 s on this machine).

The files are the project's lint fixtures (the correct tutorial-style kernels and every rule's
positive/negative fixture: Triton, CUDA C++, Pallas, NKI), copied round-robin with each copy made
distinct (its kernel names suffixed), into a temporary directory. It measures, in the same run and
alternating, (a) the whole `diagnose lint DIR` command as a reviewer runs it (a subprocess: start-up,
parsing, every rule, rendering), and (b) parsing alone (ast.parse and tree-sitter over the same
files, in process), and prints medians, files per second and the ratio lint / parse.
Run: make bench-lint   (python -m bench.lint_speed --files 1000 --runs 3)
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "lint"


def make_corpus(n: int, out: Path) -> dict:
    sources = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".py", ".cu"))
    counts: dict[str, int] = {}
    total = 0
    for i in range(n):
        src = sources[i % len(sources)]
        text = src.read_text()
        # distinct copies: every def / __global__ kernel name gets the copy's number
        text = re.sub(r"\b(def|void) (\w+)\(", lambda m: f"{m.group(1)} {m.group(2)}_{i}(", text)
        dst = out / f"{i:04d}_{src.name}"
        dst.write_text(text)
        counts[src.suffix] = counts.get(src.suffix, 0) + 1
        total += len(text.encode())
    return {"files": n, "bytes": total, "by_suffix": counts}


def parse_only(files: list[Path]) -> float:
    from diagnose.source import cuda

    t = time.perf_counter()
    p = cuda.parser()
    for f in files:
        data = f.read_bytes()
        if f.suffix == ".py":
            ast.parse(data)
        else:
            p.parse(data)
    return time.perf_counter() - t


def lint_cmd(d: Path) -> tuple[float, int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "cli", "lint", str(d), "--format", "jsonl"], capture_output=True,
                       env=env, cwd=ROOT, timeout=600)
    wall = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"diagnose lint failed ({r.returncode}): {r.stderr.decode()[-2000:]}")
    return wall, r.stdout.count(b"\n"), r.stderr.decode()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    d = Path(tempfile.mkdtemp(prefix="diagnose-bench-lint-"))
    try:
        info = make_corpus(args.files, d)
        files = sorted(d.iterdir())
        lint_times, parse_times, findings = [], [], 0
        lint_cmd(d)                                     # warm-up: bytecode, page cache
        for _ in range(args.runs):
            w, findings, _ = lint_cmd(d)
            lint_times.append(w)
            parse_times.append(parse_only(files))
        lm, pm = statistics.median(lint_times), statistics.median(parse_times)
        print(f"corpus: {info['files']} files ({', '.join(f'{v} {k}' for k, v in sorted(info['by_suffix'].items()))}), "
              f"{info['bytes'] / 1e6:.2f} MB, copies of tests/fixtures/lint")
        print(f"diagnose lint DIR (whole command, {args.runs} runs): median {lm:.2f} s "
              f"(min {min(lint_times):.2f}, max {max(lint_times):.2f}), {info['files'] / lm:,.0f} files/s, "
              f"{findings:,} findings")
        print(f"parse only (ast + tree-sitter, in process): median {pm:.3f} s; lint / parse = {lm / pm:.1f}x")
        print(f"goal: under 10 s for 1,000 files -> {'met' if lm < 10 and args.files >= 1000 else 'not met' if args.files >= 1000 else 'n/a (fewer files)'}")
        print("(2-core machine shared with other engineers: figures vary from run to run)")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
