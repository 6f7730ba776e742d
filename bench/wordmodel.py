"""Build and measure the learned word model (signatures/wordmodel.py) from the labelled logs.

    python -m bench.wordmodel --write     rebuild signatures/wordmodel.json from every labelled set
    python -m bench.wordmodel --cv        the honest estimate: leave one round out (make wordmodel)

Training documents: for every labelled log (tests/fixtures/issues/manifest-g*.tsv, the shared dev set,
corpus/manifest.tsv) the lines a guess reads (diagnose.engine.guess_view: the root line of its
failure lines and the last error lines, as if no signature had matched), labelled with the log's
family; every signature example line, labelled with its signature's family (`none` for a benign
signature); and every signature counterexample (`no_match`, a near miss) that no signature takes,
labelled `unknown` (wording that names no family: "The engine plan file is generated on an incompatible
device" must not be read as the TensorRT version mismatch it resembles). A log without failure lines teaches nothing (a guess is never asked of it).

--cv: each fixture round's logs are guessed by a model built without that round and without the
signature examples copied from its logs (an example line that occurs in one of them), so the figures
are what the model does on logs it never saw. Printed: accuracy on all guessable logs; on those the
word table (signatures/fallback.toml) gives no family (where the model is used), beside the table's
own `unknown`; on the fresh rounds' before-records whose answer was `unknown` or a table guess (what
the tool said before anything was fixed for them); and the model's posterior against its accuracy.
"""
from __future__ import annotations

import argparse
import collections
import csv
import glob
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ISSUES = ROOT / "tests" / "fixtures" / "issues"
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "realworld").exists()), ROOT.parent / "shared")
ALPHA = 0.05
MIN_SUPPORT = 3      # a word no class holds in this many documents is noise more often than knowledge
NEAR_MISS_MIN = 30   # characters: a shorter counterexample ("NRT_SUCCESS") is a fragment, not a wording
NEAR_MISSES: dict[str, set[str]] = {}    # family -> its signatures' counterexamples (documents() fills it)


def labelled() -> list[tuple[str, str, str, Path]]:
    """(set, id, family, log path) of every labelled log."""
    out = []
    for manifest in sorted(ISSUES.glob("manifest-g*.tsv"), key=lambda p: int(p.stem.split("-g")[1])):
        rnd = manifest.stem.split("-", 1)[1]
        with open(manifest, newline="") as f:
            out += [(rnd, r["id"], r["family"], ISSUES / f"{r['id']}.log") for r in csv.DictReader(f, delimiter="\t")]
    for name, manifest, logs in (("dev", SHARED / "realworld" / "manifest.tsv", SHARED / "realworld" / "logs"),
                                 ("corpus", ROOT / "corpus" / "manifest.tsv", ROOT / "corpus" / "logs")):
        if manifest.exists():
            with open(manifest, newline="") as f:
                out += [(name, r["id"], r["family"], logs / f"{r['id']}.log") for r in csv.DictReader(f, delimiter="\t")]
    return out


def documents() -> tuple[list[dict], list[dict]]:
    """(log documents, signature-example documents): {set, id, family, lines, lex}."""
    from diagnose.engine import guess_view
    from signatures.fallback import guess as table_guess
    from signatures.matcher import default_matcher

    matcher = default_matcher()
    logs = []
    for rnd, i, family, path in labelled():
        if not path.exists():
            continue
        view = guess_view(matcher.scan_file(str(path)))
        if view is None:
            continue
        lines, frames, kind = view
        g = table_guess([(t, 2.0 if k == 0 else 1.0) for k, t in enumerate(lines)], frames[-40:])
        logs.append({"set": rnd, "id": i, "family": family, "lines": lines, "frames": frames[-40:],
                     "lex": g.family if g else None, "kind": kind})
    from signatures.normalise import strip_prefix

    # signature lines are read as the engine reads a root line: without its rank/time/level prefix
    examples = [{"set": "signature", "id": s.id, "family": "none" if s.role == "benign" else s.family,
                 "lines": [strip_prefix(ex.line)], "frames": [], "lex": None}
                for s in matcher.signatures for ex in s.examples]
    # a signature's counterexamples are near misses it must not take: one that no signature takes is
    # wording that names no family (`unknown`; `none` when a benign signature takes it)
    for s in matcher.signatures:
        if s.role != "benign":
            NEAR_MISSES.setdefault(s.family, set()).update(strip_prefix(c) for c in s.counterexamples)
        for raw in s.counterexamples:
            scan = matcher.scan_bytes((raw + "\n").encode())
            line = strip_prefix(raw)
            if any(m.signature.role != "benign" and not m.demoted for m in scan.matches):
                continue
            family = "none" if any(m.signature.role == "benign" for m in scan.matches) else "unknown"
            if len(line) >= NEAR_MISS_MIN:      # a near miss no signature takes names no family at all
                NEAR_MISSES.setdefault("*", set()).add(line)
            examples.append({"set": "counterexample", "id": s.id, "family": family, "lines": [line],
                             "frames": [], "lex": None})
    return logs, examples


def table(docs: list[dict], alpha: float = ALPHA) -> dict:
    from signatures.wordmodel import READ, features

    classes = sorted({d["family"] for d in docs})
    index = {c: k for k, c in enumerate(classes)}
    n = [0] * len(classes)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for d in docs:
        k = index[d["family"]]
        n[k] += 1
        for w in features(d["lines"][:READ]):
            counts[w][k] += 1
    # a word no class holds in MIN_SUPPORT documents (a path, a name, one log's wording spread over a few
    # classes) is noise more often than knowledge: --cv, 2 (any word seen twice) -> 3: more right, fewer false
    kept = {w: {str(k): c for k, c in sorted(per.items())} for w, per in sorted(counts.items())
            if max(per.values()) >= MIN_SUPPORT}
    return {"classes": classes, "docs": n, "alpha": alpha, "counts": kept}


def write() -> Path:
    from signatures.wordmodel import TABLE

    logs, examples = documents()
    data = table(logs + examples)
    sets = collections.Counter(d["set"] if d["set"] in ("dev", "corpus") else "rounds" for d in logs)
    data = {"doc": "built by `python -m bench.wordmodel --write` (signatures/wordmodel.py); do not edit",
            "trained_on": {"logs": dict(sorted(sets.items())), "signature_lines": len(examples),
                           "labels": labels_digest()},
            **data,
            "near_misses": {f: sorted(v) for f, v in sorted(NEAR_MISSES.items())}}
    TABLE.write_text(json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}: {len(data['counts'])} words, {len(data['classes'])} classes, "
          f"{sum(sets.values())} logs + {len(examples)} signature examples and counterexamples")
    return TABLE


def labels_digest() -> str:
    """A digest of every labelled set's (id, family): a model built before a label changed is stale."""
    h = hashlib.sha256()
    for rnd, i, family, _ in labelled():
        h.update(f"{rnd}\t{i}\t{family}\n".encode())
    return h.hexdigest()[:16]


def before_records() -> dict[str, dict]:
    out = {}
    for path in ISSUES.glob("before-g*.tsv"):
        with open(path, newline="") as f:
            out.update({r["id"]: r for r in csv.DictReader(f, delimiter="\t")})
    return out


def cv() -> None:
    from signatures.wordmodel import ABSTAIN, MIN_POSTERIOR, READ, Model, decide

    logs, examples = documents()
    rounds = sorted({d["set"] for d in logs if d["set"].startswith("g")}, key=lambda r: int(r[1:]))
    guessed, models = [], {}
    for rnd in rounds:
        held = [d for d in logs if d["set"] == rnd]
        text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in ISSUES.glob(f"{rnd}-*.log"))
        train = [d for d in logs if d["set"] != rnd] + [e for e in examples if e["lines"][0] not in text]
        model = models[rnd] = Model.from_table(table(train))
        model.near_misses = {f: [c for c in v if c not in text] for f, v in NEAR_MISSES.items()}
        for d in held:
            g = model.guess(d["lines"][:READ])
            family = g.family if g and g.family not in ABSTAIN else "unknown"
            guessed.append((d, family, g.posterior if g else 0.0))
    # the tool's rule (signatures.wordmodel.decide): posterior floor, near misses, ordinary errors, context
    from diagnose.engine import MODEL_SKIPS

    used = {id(d): (g.family if d["kind"] not in MODEL_SKIPS and (g := decide(models[d["set"]], d["lines"], d["frames"]))
                    else "unknown") for d, _, _ in guessed}
    records = before_records()

    def line(label, rows, got):
        right = sum(got(r) == r[0]["family"] for r in rows)
        print(f"  {label:58} {right:4}/{len(rows):<4} = {right / max(len(rows), 1):.3f}")

    print(f"leave one round out over {len(rounds)} rounds ({len(guessed)} logs with failure lines), "
          f"plus the dev set and corpus and {len(examples)} signature example and counterexample lines in every training set")
    line("model, every log with failure lines", guessed, lambda r: r[1])
    line("table (fallback.toml, in-sample), the same logs", guessed, lambda r: r[0]["lex"] or "unknown")
    silent = [r for r in guessed if r[0]["lex"] is None]
    line("where the table has no word: model, any posterior", silent, lambda r: r[1])
    line(f"where the table has no word: model at >= {MIN_POSTERIOR} (the tool)", silent, lambda r: used[id(r[0])])
    line("where the table has no word: `unknown` (without the model)", silent, lambda r: "unknown")
    unknown = [r for r in silent if r[0]["family"] == "unknown"]
    line("  of those labelled `unknown`: kept `unknown` by the tool's rule", unknown, lambda r: used[id(r[0])])
    line("table, then the model where the table is silent (the tool)", guessed,
         lambda r: r[0]["lex"] or used[id(r[0])])
    def split(label, rows, got):
        u = [r for r in rows if r[0]["family"] == "unknown"]
        f = [r for r in rows if r[0]["family"] != "unknown"]
        kept = sum(got(r) == "unknown" for r in u)
        right = sum(got(r) == r[0]["family"] for r in f)
        wrong = sum(got(r) not in ("unknown", r[0]["family"]) for r in f)
        print(f"  {label}: labelled `unknown` {len(u)}: kept {kept}, false family {len(u) - kept}; "
              f"labelled a family {len(f)}: right {right}, wrong family {wrong}, abstained {len(f) - right - wrong}")

    print("where the table has no word, the tool's rule (right / wrong family / abstained):")
    split("all rounds", silent, lambda r: used[id(r[0])])
    for kind in ("unknown", "model"):
        split(f"before-records of kind {kind!r}", [r for r in silent if records.get(r[0]["id"], {}).get("kind") == kind],
              lambda r: used[id(r[0])])
    for kind in ("unknown", "model", "fallback"):
        rows = [r for r in guessed if records.get(r[0]["id"], {}).get("kind") == kind]
        rec = {r[0]["id"]: records[r[0]["id"]]["got"] for r in rows}
        print(f"before-records of kind {kind!r} (what the tool said before any fix for them):")
        line("  as recorded", rows, lambda r: rec[r[0]["id"]])
        line("  the table now, then the model (the tool's rule)", rows, lambda r: r[0]["lex"] or used[id(r[0])])
    print("posterior vs accuracy where the model gives a family and the table is silent:")
    buckets = collections.defaultdict(list)
    for d, family, p in silent:
        if family != "unknown":
            buckets[min(int(p * 10), 9) / 10].append(family == d["family"])
    for b in sorted(buckets):
        v = buckets[b]
        print(f"  {b:.1f}-{b + 0.1:.1f}  {sum(v):4}/{len(v):<4} = {sum(v) / len(v):.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rebuild signatures/wordmodel.json")
    ap.add_argument("--cv", action="store_true", help="print the leave-one-round-out estimate")
    args = ap.parse_args(argv)
    if args.write:
        write()
    if args.cv or not args.write:
        cv()
    return 0


if __name__ == "__main__":
    sys.exit(main())
