"""How much the wording fallback helps on wordings no signature knows, measured by ablation.

    python -m bench.fallback_ablation [--drop 0.3 0.5] [--seeds 1 2 3]

Held-out logs are worded in ways the signatures may not know. To measure that here, a random share
of the signatures is removed and every labelled real log (tests/fixtures/issues/manifest-*.tsv and
../shared/realworld) is classified with and without the fallback. Prints accuracy and the number of
`unknown` results for each setting, and how often the fallback's guess was right.
"""
from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

import diagnose.engine as engine
from signatures.loader import load_all
from signatures.matcher import Matcher

ROOT = Path(__file__).resolve().parent.parent


def labelled() -> list[tuple[Path, str]]:
    rows = []
    for manifest in sorted((ROOT / "tests" / "fixtures" / "issues").glob("manifest-*.tsv")):
        rows += [(manifest.parent / f"{r['id']}.log", r["family"]) for r in csv.DictReader(open(manifest), delimiter="\t")]
    dev = ROOT.parent / "shared" / "realworld"
    if (dev / "manifest.tsv").exists():
        rows += [(dev / "logs" / f"{r['id']}.log", r["family"]) for r in csv.DictReader(open(dev / "manifest.tsv"), delimiter="\t")]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drop", type=float, nargs="+", default=[0.0, 0.3, 0.5])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    rows, sigs, real = labelled(), load_all(), engine._fallback_guess
    print(f"{len(rows)} labelled real logs, {len(sigs)} signatures")
    for drop in args.drop:
        for use in (False, True):
            engine._fallback_guess = real if use else (lambda *a: None)
            right = unknown = guessed = guessed_right = total = 0
            for seed in args.seeds if drop else args.seeds[:1]:
                rnd = random.Random(seed)
                matcher = Matcher([s for s in sigs if rnd.random() >= drop])
                for path, family in rows:
                    d = engine.diagnose_file(path, matcher=matcher)
                    total += 1
                    right += d.family == family
                    unknown += d.family == "unknown"
                    if (d.signature or "").startswith("fallback."):
                        guessed += 1
                        guessed_right += d.family == family
            extra = f"  guesses right {guessed_right}/{guessed}" if use else ""
            print(f"signatures dropped {drop:4.0%}  fallback {'on ' if use else 'off'}  accuracy {right / total:.3f}"
                  f"  unknown {unknown / total:.3f}{extra}")
    engine._fallback_guess = real


if __name__ == "__main__":
    main()
