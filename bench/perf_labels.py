"""False families on the shared perf corpus: ordinary failures must end `unknown`, clean logs `none`.

    python -m bench.perf_labels [--files N]        (make bench-labels)

The shared perf corpus (bench.throughput.shared_corpus: ../shared/perf/gen_corpus.py, 20,000 logs,
seed 1234) is generated with a manifest that counts each log's planted error events. A log with no
event holds only progress, warnings, decoys (lines that share words with errors: 'Killed 4 zombie
processes', '0 errors') and ordinary non-GPU failures (a KeyError, a Hub download that timed out, a
full disk): any GPU family there is a false alarm. Its events are mostly GPU failures, but also
failures of no GPU family (a segfault, the OOM killer, a CI step's exit code) and handled ones (fp16
loss-scale overflow, skipped), so a log with events said `unknown` or `none` is only a candidate miss.

Prints, by the manifest's event count (0 / >0), how many logs the tool calls none / unknown / a GPU
family, and the most common root lines of the false families. The generator's counts are weak labels
(written for throughput, not for the taxonomy): read the roots, do not fit to them.
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

from bench.throughput import BIN, shared_corpus


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--mb", type=int, default=1000)
    ap.add_argument("--show", type=int, default=12, help="root lines of false families to list")
    a = ap.parse_args(argv)
    corpus, _ = shared_corpus(a.files, a.mb, 1234)
    with open(corpus.parent / "perfgen" / "manifest.tsv", newline="") as f:
        events = {r["name"]: int(r["error_events"]) for r in csv.DictReader(f, delimiter="\t")}
    out = subprocess.run([str(BIN), "classify", "--format", "jsonl", str(corpus)], capture_output=True,
                         text=True, check=False).stdout
    counts: collections.Counter = collections.Counter()
    false: collections.Counter = collections.Counter()
    for line in out.splitlines():
        d = json.loads(line)
        name = Path(d["path"]).name
        if name not in events:
            continue
        got = d["family"] if d["family"] in ("none", "unknown") else "gpu family"
        counts[(events[name] > 0, got)] += 1
        if not events[name] and got == "gpu family":
            root = re.sub(r"\d+", "N", (d.get("root") or {}).get("text", ""))[:90]
            false[(d["family"], d.get("signature") or "-", root)] += 1
    print(f"shared perf corpus {corpus.name}: {sum(counts.values())} logs")
    print(f"{'events':>8} {'none':>7} {'unknown':>8} {'gpu family':>11}")
    for has in (False, True):
        print(f"{'>0' if has else '0':>8} {counts[(has, 'none')]:>7} {counts[(has, 'unknown')]:>8} "
              f"{counts[(has, 'gpu family')]:>11}")
    clean = sum(counts[(False, k)] for k in ("none", "unknown", "gpu family"))
    print(f"false GPU families (no event, a GPU family): {counts[(False, 'gpu family')]}/{clean}")
    for (family, sig, root), n in false.most_common(a.show):
        print(f"  {n:>5}  {family:<22} {sig:<32} {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
