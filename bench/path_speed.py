"""CPU cost per megabyte of each path a log takes through `diagnose classify`:

- explained: a signature decides the family;
- unexplained: failure evidence no signature explains (the wrapped-line rescue, the wording guess,
  the whole-log facts run on top of the scan);
- clean: `none`.

    python -m bench.path_speed [--corpus DIR] [--files 2000] [--runs 2]

The corpus (default: the first --files logs of the shared perf corpus, as bench.throughput makes it)
is classified once to sort its logs by path; then `classify --jobs 1` runs on each path's logs alone
(symlinks in a temporary directory), in fresh interpreters, alternating, --runs times each: the
child's user+sys CPU seconds (the minimum), less those of a run on one line of progress (start-up:
imports, databases). Prints MB per CPU-second per path and the ratio of the unexplained path's to
the explained path's (issue #10: the unexplained path at the explained path's throughput, >= 1.0).
CPU seconds, not wall time: other work on the machine moves them far less.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

PATHS = ("explained", "unexplained", "clean")


def _cpu(cmd: list[str]) -> float:
    """User+sys CPU seconds of one child run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def path_of(row: dict) -> str:
    if row.get("family") == "none":
        return "clean"
    if row.get("family") == "unknown" or (row.get("signature") or "").startswith("fallback."):
        return "unexplained"
    return "explained"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, help="a directory of logs (default: the shared perf corpus)")
    ap.add_argument("--files", type=int, default=2000, help="the first N logs of the corpus, by name")
    ap.add_argument("--runs", type=int, default=2, help="timed runs per path (alternating); the minimum is kept")
    args = ap.parse_args()

    if args.corpus:
        corpus = args.corpus
    else:
        from bench.throughput import shared_corpus

        corpus, _ = shared_corpus(20000, 1000, 1234)
    logs = sorted(p for p in corpus.iterdir() if p.is_file() and not p.name.startswith("."))[:args.files]
    cli = [sys.executable, "-m", "cli", "classify", "--jobs", "1", "--format", "jsonl"]
    with tempfile.TemporaryDirectory(prefix="path-speed-") as tmp:
        tmp = Path(tmp)
        every = tmp / "all"
        every.mkdir()
        for p in logs:
            (every / p.name).symlink_to(p.resolve())
        out = subprocess.run(cli + [str(every)], check=True, capture_output=True, text=True).stdout
        dirs = {name: tmp / name for name in PATHS}
        sizes = dict.fromkeys(PATHS, 0)
        counts = dict.fromkeys(PATHS, 0)
        for d in dirs.values():
            d.mkdir()
        for line in out.splitlines():
            row = json.loads(line)
            name = path_of(row)
            src = Path(row["path"])
            (dirs[name] / src.name).symlink_to(src.resolve())
            sizes[name] += src.stat().st_size
            counts[name] += 1
        empty = tmp / "start-up"           # one line of progress: the run is all start-up
        empty.mkdir()
        (empty / "progress.log").write_text("step 1 loss 0.5\n")
        runs: dict[str, list[float]] = {name: [] for name in (*PATHS, "start-up")}
        for _ in range(args.runs):
            runs["start-up"].append(_cpu(cli + [str(empty)]))
            for name in PATHS:
                if counts[name]:
                    runs[name].append(_cpu(cli + [str(dirs[name])]))
    start = min(runs["start-up"])
    print(f"corpus: {len(logs)} logs of {corpus}; start-up {start:.2f} CPU-s (subtracted)")
    speed = {}
    for name in PATHS:
        if not counts[name]:
            continue
        cpu = min(runs[name]) - start
        if cpu < 0.05:
            print(f"{name:<12}: {counts[name]:5d} logs {sizes[name] / 1e6:7.1f} MB  within the start-up's noise")
            continue
        speed[name] = sizes[name] / 1e6 / cpu
        print(f"{name:<12}: {counts[name]:5d} logs {sizes[name] / 1e6:7.1f} MB  {cpu:6.2f} CPU-s  "
              f"{speed[name]:6.1f} MB/CPU-s  {cpu / counts[name] * 1000:6.2f} ms/log   "
              f"(runs: {' '.join(f'{x:.2f}' for x in runs[name])})")
    if "explained" in speed and "unexplained" in speed:
        print(f"ratio (unexplained / explained throughput): {speed['unexplained'] / speed['explained']:.2f}  (goal >= 1.0)")


if __name__ == "__main__":
    main()
