"""Reliability of the confidence: confidence bucket vs observed accuracy, over fresh rounds.

    python -m bench.calibration          (make calibration)

Two tables:
  1. the before-records (tests/fixtures/issues/before-*.tsv): what the tool said on each fresh round
     of real logs before anything was changed for it. The honest table: every answer in it was
     given on logs the tool had never seen.
  2. the tool as it is now, on the same rounds (in-sample for every round whose misses were then
     worked on; shown to see what the current confidence rules say, not as an estimate).

A bucket is calibrated when its observed accuracy is within 0.05 of its mean confidence; with n
answers the observed accuracy itself is uncertain by about sqrt(p(1-p)/n), printed as `+-`.
"""
from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ISSUES = ROOT / "tests" / "fixtures" / "issues"
BUCKETS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.55), (0.55, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)]
TOLERANCE = 0.05


def records() -> list[dict]:
    out = []
    for path in sorted(ISSUES.glob("before-*.tsv")):
        with open(path, newline="") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                r["round"] = path.stem.split("-", 1)[1]
                out.append(r)
    return out


def current(rounds: list[str]) -> list[dict]:
    from bench.rounds import score

    out = []
    for name in rounds:
        for r in score(name)["records"]:
            r["round"] = name
            out.append(r)
    return out


def table(rows: list[dict], title: str) -> tuple[str, bool]:
    lines = [title, f"{'confidence':>12} {'n':>4} {'mean conf':>9} {'accuracy':>9} {'+-':>5}  calibrated"]
    ok = True
    for lo, hi in BUCKETS:
        got = [r for r in rows if lo <= float(r["confidence"]) < hi]
        if not got:
            continue
        conf = sum(float(r["confidence"]) for r in got) / len(got)
        acc = sum(r["right"] == "1" for r in got) / len(got)
        se = math.sqrt(max(acc * (1 - acc), 0.01) / len(got))
        good = abs(acc - conf) <= TOLERANCE
        ok &= good
        lines.append(f"{lo:>5.2f}-{min(hi, 1.0):<5.2f} {len(got):>5} {conf:>9.2f} {acc:>9.2f} {se:>5.2f}  "
                     f"{'yes' if good else 'NO (' + f'{acc - conf:+.2f}' + ')'}")
    right = sum(r["right"] == "1" for r in rows)
    said_none = [r for r in rows if r["got"] == "none"]
    lines.append(f"accuracy {right}/{len(rows)} = {right / len(rows):.3f}; 'none' precision "
                 f"{sum(r['family'] == 'none' for r in said_none)}/{len(said_none)}")
    return "\n".join(lines), ok


def main() -> int:
    before = records()
    if not before:
        print("no before-records (tests/fixtures/issues/before-*.tsv)")
        return 1
    rounds = sorted({r["round"] for r in before}, key=lambda n: int(n.lstrip("g")))
    for name in rounds:
        got = [r for r in before if r["round"] == name]
        text, _ = table(got, f"\n== before-record of round {name} (the tool as it was when the round came in)")
        print(text)
    text, ok = table(before, f"\n== all before-records ({', '.join(rounds)})")
    print(text)
    text, _ = table(current(rounds), "\n== the tool now, on the same rounds (in-sample where a round's misses were worked on)")
    print(text)
    print(f"\nall before-record buckets within {TOLERANCE}: {'yes' if ok else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
