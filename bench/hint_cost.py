"""What the generic-hint expressions (signatures/evidence.toml) cost the joint hyperscan database, and
whether gating them by their required literals would pay (issues #10 and #19):

    python -m bench.hint_cost [--corpus DIR] [--files 2000] [--cycles 4]

The corpus's first --files small logs are grouped as Matcher.scan_many groups them (64 KiB, each file
ending in a newline). Several databases are built from the matcher's own expressions (loosened and
trimmed as signatures/matcher.py puts them in the joint database) and scanned over the same groups
with a no-op callback, interleaved cycle after cycle, keeping each one's least CPU time (the machine
is shared: the minimum over interleaved cycles moves least):

- joint: every expression, as shipped;
- signatures: without the hint expressions;
- hints: the hint expressions alone (what a second database for them would add);
- joint, hints as literals: each hint that has required literals (signatures/literals.py) replaced
  by them, the gate's own expressions (the proposed literal gate for the hints);
- hints as literals: those alone; hints with HS_FLAG_PREFILTER (the loosened forms): hyperscan's
  own cheaper superset.

Then the price of a superset: the hint candidate lines each form gives (one per expression and line,
as Matcher._joint_lines counts them), and the CPU time re2 takes to confirm the extra ones
(re2direct, as Matcher._read_line confirms a line). Gating pays only if the scan saved is more
than the confirmations added. Nothing here runs on log text in Python `re`.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import time
from pathlib import Path


def _groups(paths: list[str]) -> list[bytes]:
    from signatures.matcher import GROUP_BYTES, SMALL_FILE
    from signatures.normalise import normalise_chunk

    bufs, cur, n = [], [b"\n"], 0
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        if len(data) >= SMALL_FILE or b"\0" in data[:8192]:
            continue
        data = normalise_chunk(data)
        cur.append(data if data.endswith(b"\n") else data + b"\n")
        n += len(data)
        if n >= GROUP_BYTES:
            bufs.append(b"".join(cur))
            cur, n = [b"\n"], 0
    bufs.append(b"".join(cur))
    return bufs


def _lines(db, bufs: list[bytes], keep: set[int]) -> list[tuple[int, int, int, int]]:
    """(group, line start, line end, expression id) of every line an expression of `keep` matches,
    one per expression and line (Matcher._joint_lines's rule)."""
    out = []
    for g, buf in enumerate(bufs):
        last: dict[int, int] = {}

        def on_match(pid, _from, to, _flags, _ctx):
            if pid not in keep:
                return False
            end = to - 1 if to > 0 else 0
            if end <= last.get(pid, -1):
                return False
            ls = buf.rfind(b"\n", 0, end) + 1
            le = buf.find(b"\n", end)
            le = len(buf) if le < 0 else le
            last[pid] = le
            out.append((g, ls, le, pid))
            return False

        db.scan(buf, match_event_handler=on_match)
    return out


def main(argv=None) -> None:
    import hyperscan as hs

    from diagnose import engine
    from signatures import matcher as M

    default = Path(__file__).resolve().parents[2] / "perf-corpus"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(default))
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--cycles", type=int, default=4)
    args = ap.parse_args(argv)
    paths = sorted(str(p) for p in Path(args.corpus).iterdir() if p.is_file())[: args.files]
    if not paths:
        raise SystemExit(f"no logs in {args.corpus}")
    m = engine.default_matcher()
    if m._joint is None:
        raise SystemExit("no hyperscan: nothing to measure")
    bufs = _groups(paths)
    size = sum(map(len, bufs))
    flags = hs.HS_FLAG_MULTILINE | hs.HS_FLAG_ALLOWEMPTY
    ids = sorted(m.in_joint | m.loosened)
    hints = [p for p in ids if m.owners[p][1] is None]
    sigs = [p for p in ids if m.owners[p][1] is not None]
    expr = {}
    for pid in ids:
        p = m.raw[pid]
        expr[pid] = M.trim_tail(M.loosen(p) if M._anchored(p) else p)

    def literal_form(pid):
        group = m.gate_exprs[pid]
        if group == [(m.raw[pid], 0)]:        # no required literals: the expression itself
            return [(expr[pid], flags, pid)]
        return [(e, flags | f, pid) for e, f in group]

    whole = lambda pids: [(expr[p], flags, p) for p in pids]                       # noqa: E731
    as_literals = [x for p in hints for x in literal_form(p)]
    variants = {
        "joint (as shipped)": whole(ids),
        "signatures (no hints)": whole(sigs),
        "hints alone": whole(hints),
        "joint, hints as literals": whole(sigs) + as_literals,
        "hints as literals, alone": as_literals,
        "hints with HS_FLAG_PREFILTER, alone": [(expr[p], flags | hs.HS_FLAG_PREFILTER, p) for p in hints],
    }
    dbs = {}
    for name, items in variants.items():
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        with contextlib.redirect_stdout(io.StringIO()):
            db.compile(expressions=[e for e, _, _ in items], ids=[i for _, _, i in items],
                       elements=len(items), flags=[f for _, f, _ in items])
        dbs[name] = (db, len(items))
    best = dict.fromkeys(dbs, float("inf"))
    for _ in range(args.cycles):
        for name, (db, _) in dbs.items():
            t = time.process_time()
            for buf in bufs:
                db.scan(buf, match_event_handler=lambda *a: False)
            best[name] = min(best[name], time.process_time() - t)
    print(f"{len(paths)} logs, {len(bufs)} groups, {size / 1e6:.1f} MB; least CPU-s of {args.cycles} interleaved cycles")
    for name, (_, n) in dbs.items():
        print(f"  {best[name]:6.3f} s {size / 1e6 / best[name]:7.0f} MB/CPU-s  {n:5d} expressions  {name}")

    keep = set(hints)
    exact = _lines(dbs["hints alone"][0], bufs, keep)
    loose = _lines(dbs["hints as literals, alone"][0], bufs, keep)
    pre = _lines(dbs["hints with HS_FLAG_PREFILTER, alone"][0], bufs, keep)
    extra = sorted(set(loose) - set(exact))
    t = time.process_time()
    held = sum(m._read_line(bufs[g][ls:le], pid) is not None for g, ls, le, pid in extra)
    confirm = time.process_time() - t
    print(f"hint candidate lines: {len(exact)} as shipped, {len(loose)} as literals "
          f"({len(extra)} more, {held} of them hold), {len(pre)} with PREFILTER")
    print(f"re2 confirmation of the {len(extra)} extra literal candidates: {confirm:.3f} CPU-s, against a scan "
          f"saving of {best['joint (as shipped)'] - best['joint, hints as literals']:.3f} s")


if __name__ == "__main__":
    main()
