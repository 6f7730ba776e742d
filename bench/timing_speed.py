"""How long the static timing read takes, beside parsing alone, on real Python files (torch, triton).

    python -m bench.timing_speed [--rounds 3] [--limit 0]

The files are the installed packages' own sources (torch/utils/benchmark, torch/cuda, torch/_inductor,
triton): real code with many timers, events and harness calls. Each round times, alternately, parsing
every file (diagnose.source) and the full read (parse + every timing rule), and prints MB/s and the
ratio read/parse; it also counts findings per rule and any file the reader fails on (a bug).
Run: make bench-timing. The machine may be shared: compare the ratio, not the seconds.
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections import Counter
from pathlib import Path


def files() -> list[Path]:
    out = []
    for mod, subs in (("torch", ("utils/benchmark", "cuda", "_inductor")), ("triton", ("",))):
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin:
            continue
        root = Path(spec.origin).parent
        for sub in subs:
            out += sorted((root / sub).rglob("*.py"))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="at most this many files (0: all)")
    a = ap.parse_args(argv)
    from diagnose.source import SourceError, parse
    from diagnose.timing import load_rules, read_file

    fs = files()[: a.limit or None]
    if not fs:
        print("neither torch nor triton is installed: nothing to read")
        return 0
    mb = sum(f.stat().st_size for f in fs) / 1e6
    rules = load_rules()
    parse_s, read_s, ids, failed = [], [], Counter(), []
    for rnd in range(a.rounds):
        t0 = time.perf_counter()
        for f in fs:
            try:
                parse(f)
            except SourceError:
                pass
        parse_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for f in fs:
            try:
                found = read_file(f, rules)
            except SourceError:
                continue
            except Exception as e:       # a reader bug: count it, name the file
                failed.append(f"{f}: {type(e).__name__}: {e}")
                continue
            if rnd == 0:
                ids.update(x.id for x in found)
        read_s.append(time.perf_counter() - t0)
    p, r = statistics.median(parse_s), statistics.median(read_s)
    print(f"{len(fs)} files, {mb:.1f} MB, {a.rounds} rounds (medians)")
    print(f"  parse only   {p:6.2f} s  {mb / p:6.2f} MB/s")
    print(f"  timing read  {r:6.2f} s  {mb / r:6.2f} MB/s   ratio read/parse {r / p:.2f}")
    print(f"  findings: {dict(ids.most_common())}")
    print(f"  reader failures: {len(failed) // a.rounds}")
    for line in failed[:5]:
        print("   ", line)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
