"""Accuracy benchmark: classify labelled log sets and score them with ../shared/eval/score.py.

    python -m bench.accuracy          (make accuracy)

Sets: the real-world dev set (../shared/realworld, goal accuracy >= 0.95 and macro-F1 >= 0.93)
and the project's own corpus (corpus/manifest.tsv, goal 100 %). Also lists every CASCADE log of
the dev set with the family it got.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# ../shared beside the checkout (or beside the main checkout, for a worktree)
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "realworld").exists()), ROOT.parent / "shared")
BIN = Path(sys.executable).parent / "diagnose"


def score(name: str, manifest: Path, logs: Path, min_acc: float, min_f1: float) -> bool:
    with tempfile.NamedTemporaryFile("w+", suffix=".jsonl") as out:
        subprocess.run([str(BIN), "classify", "--format", "jsonl", str(logs)], stdout=out, check=True)
        out.flush()
        print(f"\n== {name}: {logs}")
        scored = subprocess.run([sys.executable, str(SHARED / "eval" / "score.py"), str(manifest), out.name,
                            "--min-accuracy", str(min_acc), "--min-macro-f1", str(min_f1)],
                           capture_output=True, text=True)
        print(scored.stdout + scored.stderr, end="")
        out.seek(0)
        got = {Path(json.loads(line)["path"]).stem: json.loads(line)["family"] for line in out if line.strip()}
    with open(manifest, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    cascades = [r for r in rows if (r.get("root_cause_note") or "").startswith("CASCADE")]
    for row in cascades:
        ok = got.get(row["id"]) == row["family"]
        print(f"cascade {row['id']}: want {row['family']}, got {got.get(row['id'])} {'ok' if ok else 'MISS'}")
    met = scored.returncode == 0
    print(f"goal: accuracy >= {min_acc}, macro-F1 >= {min_f1}: {'met' if met else 'NOT met'}")
    return met


def main() -> int:
    ok = True
    if (SHARED / "realworld" / "manifest.tsv").exists():
        ok &= score("real-world dev set", SHARED / "realworld" / "manifest.tsv", SHARED / "realworld" / "logs", 0.95, 0.93)
    else:
        print(f"no dev set at {SHARED / 'realworld'}")
    corpus = ROOT / "corpus" / "manifest.tsv"
    if corpus.exists():
        ok &= score("project corpus", corpus, ROOT / "corpus" / "logs", 1.0, 1.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
