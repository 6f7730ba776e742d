"""Is `none` ("no failure: skip this task") right? Precision on every labelled set, and the rule measured alone.

    python -m bench.none_check           (make none-check)
    python -m bench.none_check --write   also writes tests/fixtures/issues/none-held-out.tsv (section 4)

1. `none` precision of the tool now on the labelled logs: the fixture rounds g1.., the shared dev
   set, the corpus; and on the before-records' logs (tests/fixtures/issues/before-*.tsv) re-run now.
   Every labelled `none` (a negative) that is not `none` now is a false alarm, listed.
2. The rule alone: the same labelled logs with a matcher of the benign signatures only, so no
   signature knows any failure's wording and only the generic evidence (signatures/evidence.toml)
   can keep a failing log from `none`. A failing log said `none` there is one the rule would miss
   on a wording no signature has seen; a negative not `none` there is a false alarm of the rule.
3. The before-records' wrong `none` answers (family != none, got == none) and what each log's
   failure evidence is now, with no signature but the benign ones.
4. A batch of evidence entries (`since = BATCH` in signatures/evidence.toml; `--batch`, default the
   newest) measured on the before-records: each round's recorded `none` answers re-decided by the rule
   alone with and without the batch (a recorded `none` stays `none` unless the rule now sees failure
   evidence; it is then right only when the rule's family guess is the label), so the effect on `none`
   precision and on accuracy is what the batch would have done to the tool of each round's day; then
   each entry of the batch left out in turn (what it alone keeps out of `none`), and every labelled set.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ISSUES = ROOT / "tests" / "fixtures" / "issues"
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "realworld").exists()), ROOT.parent / "shared")


def labelled() -> list[tuple[str, Path, str]]:
    """(set, log, family) for every labelled log."""
    rows = []
    for m in sorted(ISSUES.glob("manifest-*.tsv"), key=lambda p: int(p.stem.split("-g")[1])):
        with open(m, newline="") as f:
            rows += [(m.stem.split("-", 1)[1], ISSUES / f"{r['id']}.log", r["family"])
                     for r in csv.DictReader(f, delimiter="\t") if r.get("id")]
    dev = SHARED / "realworld"
    if (dev / "manifest.tsv").exists():
        with open(dev / "manifest.tsv", newline="") as f:
            rows += [("dev", dev / "logs" / f"{r['id']}.log", r["family"]) for r in csv.DictReader(f, delimiter="\t")]
    with open(ROOT / "corpus" / "manifest.tsv", newline="") as f:
        rows += [("corpus", ROOT / "corpus" / "logs" / f"{r['id']}.log", r["family"])
                 for r in csv.DictReader(f, delimiter="\t")]
    return rows


def before_ids() -> dict[str, dict]:
    out = {}
    for path in sorted(ISSUES.glob("before-*.tsv")):
        with open(path, newline="") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                out[r["id"]] = r
    return out


def _precision(pairs) -> str:
    said = [(want, got) for want, got in pairs if got == "none"]
    right = sum(want == "none" for want, _ in said)
    negatives = [(want, got) for want, got in pairs if want == "none"]
    kept = sum(got == "none" for _, got in negatives)
    return (f"'none' precision {right}/{len(said)} = {right / max(1, len(said)):.3f}; "
            f"negatives kept 'none' {kept}/{len(negatives)}")


def main() -> int:
    from diagnose.engine import diagnose_file
    from signatures.loader import load_all
    from signatures.matcher import Matcher, default_matcher
    from signatures.normalise import line_level

    rows = labelled()
    full = default_matcher()
    benign = Matcher([s for s in load_all() if s.role == "benign"])
    got = {p: diagnose_file(p, matcher=full).family for _, p, _ in rows}
    alone = {p: diagnose_file(p, matcher=benign) for _, p, _ in rows}

    print("== 1. the tool now")
    sets = sorted({s for s, _, _ in rows}, key=lambda s: (not s.startswith("g"), int(s[1:]) if s[1:].isdigit() else 0, s))
    groups = {"rounds g1..": [r for r in rows if r[0].startswith("g")], "dev set": [r for r in rows if r[0] == "dev"],
              "corpus": [r for r in rows if r[0] == "corpus"]}
    for name, group in groups.items():
        if group:
            print(f"  {name:12} {len(group):5} logs: {_precision([(fam, got[p]) for _, p, fam in group])}")
    print(f"  {'all':12} {len(rows):5} logs: {_precision([(fam, got[p]) for _, p, fam in rows])}")
    before = before_ids()
    fresh = [r for r in rows if r[1].stem in before]
    print(f"  before-records' logs re-run now ({len(fresh)}): {_precision([(fam, got[p]) for _, p, fam in fresh])}")
    print(f"  the same logs as recorded: {_precision([(before[p.stem]['family'], before[p.stem]['got']) for _, p, _ in fresh])}")
    for s, p, fam in rows:
        if fam == "none" and got[p] != "none":
            print(f"  false alarm: {s} {p.stem}: {got[p]}")
    for s, p, fam in rows:
        if fam != "none" and got[p] == "none":
            print(f"  said none:   {s} {p.stem}: want {fam}")

    print("\n== 2. the rule alone (benign signatures only: no signature knows a failure's wording)")
    failing = [(s, p, fam) for s, p, fam in rows if fam != "none"]
    missed = [(s, p, fam) for s, p, fam in failing if alone[p].family == "none"]
    print(f"  failing logs said 'none': {len(missed)}/{len(failing)} = {len(missed) / len(failing):.3f}")
    print(f"  {_precision([(fam, alone[p].family) for _, p, fam in rows])}")
    for s, p, fam in rows:
        if fam == "none" and alone[p].family != "none":
            print(f"  false alarm of the rule: {s} {p.stem}: {alone[p].title} (line {alone[p].root.line if alone[p].root else '-'})")

    print("\n== 3. the before-records' wrong 'none' answers, and their evidence now (no signature but benign)")
    for s, p, fam in fresh:
        r = before[p.stem]
        if r["got"] != "none" or r["family"] == "none":
            continue
        d = alone[p]
        scan = benign.scan_file(p)
        evidence = [f"{k}@{n}" for k, n, t in scan.hints if k != "ok" and line_level(t) is None][:4]
        root = f"line {d.root.line}: {d.root.text[:70]}" if d.root else "no failure line"
        print(f"  {p.stem} ({r['family']}, recorded none {r['confidence']}): now {d.family} "
              f"{d.confidence:.2f} [{', '.join(evidence) or 'no failure evidence'}] {root}")
    batch(rows, before, write_held="--write" in sys.argv[1:])
    return 0


def _matcher_without(skip: set[str]):
    """A matcher of the benign signatures only, its evidence table less the entries whose pattern is in `skip`."""
    import signatures.matcher as matcher_module
    from signatures.evidence import hint_patterns, load
    from signatures.loader import load_all

    kept = hint_patterns([e for e in load() if e.pattern not in skip])
    saved, matcher_module.HINTS = matcher_module.HINTS, kept
    try:
        return matcher_module.Matcher([s for s in load_all() if s.role == "benign"])
    finally:
        matcher_module.HINTS = saved


def _rescore(before: dict, answer: dict) -> dict:
    """Per round: the recorded answers with each recorded `none` replaced by `answer` (the rule alone)."""
    out: dict = {}
    for rid, r in before.items():
        rnd = rid.split("-")[0]
        got = answer.get(rid, "none") if r["got"] == "none" else r["got"]
        o = out.setdefault(rnd, {"n": 0, "right": 0, "said": 0, "said_right": 0})
        o["n"] += 1
        o["right"] += got == r["family"]
        o["said"] += got == "none"
        o["said_right"] += got == "none" and r["family"] == "none"
    return out


def _line(label: str, score: dict, rounds: list[str]) -> str:
    n = sum(score[r]["n"] for r in rounds)
    right = sum(score[r]["right"] for r in rounds)
    said = sum(score[r]["said"] for r in rounds)
    ok = sum(score[r]["said_right"] for r in rounds)
    return (f"    {label:34} accuracy {right}/{n} = {right / max(1, n):.3f}   'none' precision "
            f"{ok}/{said} = {ok / max(1, said):.3f}")


HELD_OUT = ISSUES / "none-held-out.tsv"


def batch(rows, before, name: str | None = None, write_held: bool = False) -> None:
    from diagnose.engine import diagnose_file
    from signatures.evidence import load

    table = load()
    name = name or max((e.since for e in table if e.since), default="")
    entries = [e for e in table if e.since == name]
    print(f"\n== 4. the evidence batch since = {name!r} ({len(entries)} entries), on the before-records")
    if not entries:
        return
    paths = {p.stem: p for _, p, _ in rows}
    recorded_none = [rid for rid, r in before.items() if r["got"] == "none" and rid in paths]
    every = {e.pattern for e in entries}

    def answers(skip: set[str], ids) -> dict:
        m = _matcher_without(skip)
        return {rid: diagnose_file(paths[rid], matcher=m).family for rid in ids}

    without = answers(every, recorded_none)
    with_all = answers(set(), recorded_none)
    rounds = sorted({rid.split("-")[0] for rid in before}, key=lambda r: int(r[1:]))
    as_recorded = _rescore(before, {})
    s_without, s_with = _rescore(before, without), _rescore(before, with_all)
    held = [r for r in rounds if int(r[1:]) >= 26]
    groups = [(f"{rounds[0]}-{rounds[-1]}", rounds)] + [(r, [r]) for r in rounds]
    if held:
        design = [r for r in rounds if r not in held]
        groups.insert(1, (f"{design[0]}-{design[-1]}", design))
        groups.insert(2, (f"{held[0]}-{held[-1]}", held))
    for label, rs in groups:
        print(f"  {label}")
        print(_line("as recorded", as_recorded, rs))
        print(_line("+ the rule alone, without the batch", s_without, rs))
        print(_line("+ the rule alone, with the batch", s_with, rs))
    moved = [rid for rid in recorded_none if without[rid] == "none" and with_all[rid] != "none"]
    print("  recorded `none` answers the batch moves (label -> the rule's answer now):")
    for rid in moved:
        mark = "right" if with_all[rid] == before[rid]["family"] else "WRONG"
        print(f"    {rid:8} {before[rid]['family']:24} -> {with_all[rid]:24} {mark}")

    # held out by round: round R is re-decided with only the entries that also keep a failing log of
    # another set (another round, the dev set, the corpus) out of `none` on their own, i.e. the entries
    # that other logs would have called for without R
    ids = [p.stem for _, p, _ in rows]
    fam = {p.stem: f for _, p, f in rows}
    where = {p.stem: s for s, p, _ in rows}
    base = answers(every, ids)
    support = {}
    for e in entries:
        only = answers(every - {e.pattern}, [i for i in ids if base[i] == "none" and fam[i] != "none"])
        support[e.pattern] = {where[i] for i, f in only.items() if f != "none"}
    held: dict = {}
    for rnd in rounds:
        keep = {e.pattern for e in entries if support[e.pattern] - {rnd}}
        ids_r = [rid for rid in recorded_none if rid.startswith(rnd + "-")]
        got = answers(every - keep, ids_r) if keep != every else {i: with_all[i] for i in ids_r}
        held.update({i: (without[i] if without[i] != "none" else got[i]) for i in ids_r})
    s_held = _rescore(before, held)
    if write_held:
        with open(HELD_OUT, "w", newline="") as f:
            f.write("# bench/none_check.py --write: each before-record's `none` answer re-decided by the generic\n"
                    f"# evidence alone, held out by round (batch since = {name!r}); read by bench.calibration --evidence-now\n")
            f.write("id\tgot\tkind\tright\n")
            for rid in recorded_none:
                got = held[rid]
                kind = "none" if got == "none" else "unknown" if got == "unknown" else "fallback"
                f.write(f"{rid}\t{got}\t{kind}\t{int(got == before[rid]['family'])}\n")
        print(f"  wrote {HELD_OUT.relative_to(ROOT)}")
    print("  held out by round (each round re-decided with the entries other sets' logs call for):")
    for label, rs in groups[:3]:
        print(_line(f"{label}, held out", s_held, rs))
    alone_entries = [e for e in entries if len(support[e.pattern]) <= 1]
    if alone_entries:
        print("  entries that keep one set's logs out of `none` and no other's:")
        for e in alone_entries:
            print(f"    {e.kind:10} {e.pattern[:60]:60} {' '.join(sorted(support[e.pattern])) or '-'}")

    print("  each entry left out: the before-records' recorded `none` logs and the labelled sets it keeps "
          "out of `none` alone")
    full = answers(set(), ids)
    for e in entries:
        out = answers({e.pattern}, [i for i in ids if full[i] != "none"])
        lost = [i for i, f in out.items() if f == "none"]
        fail = sum(fam[i] != "none" for i in lost)
        neg = sum(fam[i] == "none" for i in lost)
        print(f"    {e.kind:10} {e.pattern[:48]:48} failing logs kept out of none {fail:3}, "
              f"negatives {neg}  {' '.join(lost[:6])}")


if __name__ == "__main__":
    sys.exit(main())
