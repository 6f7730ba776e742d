"""Where the per-log CPU goes, stage by stage, without a profiler's per-call overhead:

    python -m bench.stage_cost [--corpus DIR] [--files 2000]

Classifies the corpus's first --files logs in-process (diagnose_files over groups of 64, as
`classify --jobs 1` does) with a CPU-time counter around each stage (the scan of the small-log
groups, decide(), the wrapped-line rescue, the whole-log facts, ecosystem detection, the advice
layer...), and prints each stage's CPU seconds and share of the total, plus the joint hyperscan
database's own scan of the same bytes with a no-op callback (the floor no Python change moves).
Stages nest (decide() holds the wording guess and the failure lines' facts), so shares do not add
up to 100 %. CPU seconds (time.process_time), not wall time: other work on the machine moves them less.
"""
from __future__ import annotations

import argparse
import collections
import os
import time
from pathlib import Path

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "perf-corpus"

# (module, attribute, label): the stages counted
STAGES = (
    ("signatures.matcher", "Matcher.scan_many", "scan of the small-log groups (joint db, gate, re2 confirmation)"),
    ("diagnose.engine", "decide", "decide() (all calls, rescue's second one included)"),
    ("diagnose.engine", "_fallback_guess", "  of it: the wording guess"),
    ("diagnose.engine", "_generic_facts", "  of it: facts of the failure lines"),
    ("diagnose.engine", "_joined_matches", "wrapped-line rescue (pairs + their scan)"),
    ("diagnose.engine", "_whole_text", "whole text for the advice layer"),
    ("diagnose.engine", "_refine_root", "root line moved by the log's own text (rootline.refine)"),
    ("diagnose.engine", "_whole_log_facts", "whole-log facts"),
    ("diagnose.advice", "detect", "ecosystem detection"),
    ("diagnose.engine", "_finish", "advice layer (fusion, reasoning rules, advice)"),
)


def _wrap(acc, obj, name, label):
    f = getattr(obj, name)

    def timed(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[label] += time.process_time() - t
    setattr(obj, name, timed)


def main(argv=None) -> None:
    import importlib

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--files", type=int, default=2000)
    args = ap.parse_args(argv)
    paths = sorted(str(p) for p in Path(args.corpus).iterdir() if p.is_file())[: args.files]
    if not paths:
        raise SystemExit(f"no logs in {args.corpus}")

    from diagnose import engine
    from signatures.normalise import normalise_chunk

    acc: collections.Counter = collections.Counter()
    for mod, attr, label in STAGES:
        obj = importlib.import_module(mod)
        *owner, name = attr.split(".")
        for part in owner:
            obj = getattr(obj, part)
        _wrap(acc, obj, name, label)
    matcher = engine.default_matcher()
    engine.diagnose_files(paths[:8], matcher=matcher)          # warm: lazy regexes, caches
    acc.clear()
    t0 = time.process_time()
    for i in range(0, len(paths), 64):
        engine.diagnose_files(paths[i:i + 64], matcher=matcher)
    total = time.process_time() - t0
    size = sum(os.path.getsize(p) for p in paths)
    print(f"{len(paths)} logs, {size / 1e6:.1f} MB: {total:.2f} CPU-s in diagnose_files "
          f"({size / 1e6 / total:.1f} MB/CPU-s)")
    for _, _, label in STAGES:
        print(f"  {acc[label]:6.2f} s {100 * acc[label] / total:5.1f} %  {label}")
    if getattr(matcher, "_joint", None) is not None:
        bufs, cur, n = [], [b"\n"], 0
        for p in paths:
            with open(p, "rb") as f:
                data = normalise_chunk(f.read())
            cur.append(data if data.endswith(b"\n") else data + b"\n")
            n += len(data)
            if n >= 64 << 10:
                bufs.append(b"".join(cur))
                cur, n = [b"\n"], 0
        bufs.append(b"".join(cur))
        t = time.process_time()
        for b in bufs:
            matcher._joint.scan(b, match_event_handler=lambda *a: False)
        raw = time.process_time() - t
        print(f"  joint database alone, no-op callback: {raw:.2f} s ({size / 1e6 / raw:.0f} MB/CPU-s, "
              f"{len(matcher.in_joint | matcher.loosened)} expressions)")


if __name__ == "__main__":
    main()
