"""Facts recall per kind of fact: the fresh rounds' annotations (manifest-gNN.tsv `facts`) and the dev
set's (tests/fixtures/facts/dev-facts.tsv, written from the logs' text), scored as bench.rounds scores
them (by value: sizes within 1 %, text without spaces, quotes and brackets).

    python -m bench.facts_recall                 # g21.. and the dev set
    python -m bench.facts_recall --misses        # and every fact not found
"""
from __future__ import annotations

import argparse
import collections
import csv
import sys
from pathlib import Path

from bench.rounds import ISSUES, ROOT, annotated_facts, fact_found, rows

DEV_FACTS = ROOT / "tests" / "fixtures" / "facts" / "dev-facts.tsv"
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "realworld").exists()), ROOT.parent / "shared")
DEV_LOGS = SHARED / "realworld" / "logs"


def _sets():
    rounds = sorted({p.stem.split("-", 1)[1] for p in ISSUES.glob("before-g*.tsv")}, key=lambda r: int(r[1:]))
    for r in rounds:
        yield r, [(ISSUES / f"{row['id']}.log", row) for row in rows(r)]
    if DEV_FACTS.exists() and DEV_LOGS.is_dir():
        with open(DEV_FACTS, newline="") as f:
            dev = [row for row in csv.DictReader(f, delimiter="\t") if row.get("id")]
        yield "dev", [(DEV_LOGS / f"{row['id']}.log", row) for row in dev]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--misses", action="store_true")
    a = ap.parse_args(argv)
    from diagnose.engine import diagnose_file

    for name, items in _sets():
        per = collections.defaultdict(lambda: [0, 0])
        misses = []
        for path, row in items:
            facts = annotated_facts(row)
            if not facts or not path.exists():
                continue
            got = diagnose_file(path).facts
            for kind, value in facts:
                ok = fact_found(value, got)
                per[kind][0] += ok
                per[kind][1] += 1
                if not ok:
                    misses.append(f"    {row['id']} {kind}={value}")
        found, n = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
        kinds = ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(per.items(), key=lambda kv: -kv[1][1]))
        print(f"{name}: facts recall {found}/{n} = {found / n:.3f}" if n else f"{name}: no annotated facts")
        print(f"  {kinds}")
        if a.misses:
            print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
