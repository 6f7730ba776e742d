"""What the advice layer costs: diagnose_files over every labelled log, with and without it.

Runs alternate (with, without, with, ...) in one process so the machine's load hits both alike;
prints the median seconds of each and their ratio. "Without" replaces the ecosystem detection,
the whole-text read, the variants and advise() by no-ops; everything else is the same engine.

    python bench/advice_overhead.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def logs() -> list[str]:
    paths = sorted((ROOT / "tests" / "fixtures" / "issues").glob("*.log"))
    paths += sorted((ROOT / "corpus" / "logs").glob("*.log"))
    dev = ROOT.parent / "shared" / "realworld" / "logs"
    paths += sorted(dev.glob("*.log")) if dev.exists() else []
    return [str(p) for p in paths]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from diagnose import advice, engine

    paths = logs()
    engine.diagnose_files(paths)          # warm: signature cache, re2 compiles, page cache
    real = (engine._whole_text, advice.detect, engine._variants, advice.advise)
    off = (lambda *a: None, lambda *a, **k: [], lambda *a: None, lambda d, *a, **k: d)

    def run(patch) -> float:
        engine._whole_text, advice.detect, engine._variants, advice.advise = patch
        t = time.perf_counter()
        engine.diagnose_files(paths)
        return time.perf_counter() - t

    with_, without = [], []
    for _ in range(args.rounds):
        with_.append(run(real))
        without.append(run(off))
    engine._whole_text, advice.detect, engine._variants, advice.advise = real
    a, b = statistics.median(with_), statistics.median(without)
    print(f"{len(paths)} logs, {args.rounds} alternating rounds (machine shared with other jobs)")
    print(f"with advice    {a:.3f} s  ({len(paths) / a:.0f} logs/s)")
    print(f"without advice {b:.3f} s  ({len(paths) / b:.0f} logs/s)")
    print(f"ratio with/without {a / b:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
