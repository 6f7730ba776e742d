"""`--format table` against JSON lines: the same N diagnoses rendered both ways, alternating, in one run.

    python -m bench.render_speed [N]      (default 100,000 rows)

Prints each format's time and the ratio table/jsonl (the goal: <= 1.0, the table no slower).
"""
from __future__ import annotations

import io
import random
import sys
import time


def diagnoses(n: int):
    from diagnose.model import Diagnosis, Line

    rng = random.Random(1)
    fams = ["oom", "none", "unknown", "illegal-memory-access", "compile-error", "shape-stride-mismatch"]
    out = []
    for i in range(n):
        f = rng.choice(fams)
        d = Diagnosis(path=f"/data/runs/batch-{i // 1000:03d}/task-{i:06d}.log", family=f, confidence=0.85)
        if f != "none":
            d.origin = "kernel-logic"
            d.root = Line(i % 500 + 1, "RuntimeError: CUDA error: an illegal memory access was encountered " + "x" * rng.randint(0, 80))
        out.append(d)
    return out


def main(argv=None) -> int:
    from rich.console import Console

    from diagnose import report

    n = int((argv or sys.argv[1:] or [100_000])[0])
    res = diagnoses(n)
    times = {"jsonl": [], "table": []}
    for _ in range(3):                       # alternating, best of three each
        t = time.perf_counter()
        io.StringIO().writelines(report.jsonl_line(d) for d in res)
        times["jsonl"].append(time.perf_counter() - t)
        t = time.perf_counter()
        report.write_table(res, Console(file=io.StringIO(), width=120))
        times["table"].append(time.perf_counter() - t)
    j, tb = min(times["jsonl"]), min(times["table"])
    print(f"{n:,} rows: jsonl {j:.2f} s, table {tb:.2f} s, table/jsonl {tb / j:.2f}x "
          f"(best of 3, alternating; a shared machine: compare the ratio, not the seconds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
