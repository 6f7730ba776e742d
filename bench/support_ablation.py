"""Support evidence (status codes, traceback frames) on wordings no hard signature knows, by ablation.

    python -m bench.support_ablation [--drop 0.3 0.5] [--seeds 1 2 3]

A share of the *hard* signatures is removed (which ones: a hash of the id and the seed, so two trees
drop the same ones and can be compared), while support-tier evidence, benign signatures and the
wording fallback stay; every labelled real log (tests/fixtures/issues and ../shared/realworld) is
classified. Prints accuracy, the share left `unknown`, and how many answers support evidence decided
and how many of those were right (its observed precision, against its `support` confidence).
"""
from __future__ import annotations

import argparse
import hashlib

import diagnose.engine as engine
from bench.fallback_ablation import labelled
from signatures.loader import load_all
from signatures.matcher import Matcher


def dropped(sig_id: str, seed: int, share: float) -> bool:
    return int(hashlib.sha1(f"{seed}:{sig_id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drop", type=float, nargs="+", default=[0.3, 0.5])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = ap.parse_args()
    rows, sigs = labelled(), load_all()
    print(f"{len(rows)} labelled real logs, {len(sigs)} signatures ({sum(s.tier == 'support' for s in sigs)} support)")
    for share in args.drop:
        right = total = unknown = decided = decided_right = 0
        for seed in args.seeds:
            keep = [s for s in sigs if s.tier == "support" or s.role == "benign" or not dropped(s.id, seed, share)]
            support = {s.id for s in keep if s.tier == "support"}
            matcher = Matcher(keep)
            for path, family in rows:
                d = engine.diagnose_file(path, matcher=matcher)
                total += 1
                right += d.family == family
                unknown += d.family == "unknown"
                if d.signature in support:
                    decided += 1
                    decided_right += d.family == family
        print(f"hard signatures dropped {share:4.0%}  accuracy {right / total:.3f}  unknown {unknown / total:.3f}"
              f"  decided by support {decided} (right {decided_right}, {decided_right / max(decided, 1):.2f}"
              f" vs confidence {engine.confidence_of('support'):.2f})")


if __name__ == "__main__":
    main()
