"""Build and measure the learned failure-line detector (signatures/lineflag.py).

    python -m bench.lineflag --cv        held out by round (make lineflag)
    python -m bench.lineflag --write     rebuild signatures/lineflag.json from every labelled set
    python -m bench.lineflag --forward   time-forward: each round scored by a detector of the rounds before it
    python -m bench.lineflag --perf DIR  the silent `none` logs of a corpus the detector would flip

Lines (one document each; signatures.lineflag.words): positives are the labelled root line of every
failing log of the fixture rounds (manifest root_line), the tool's root line of every failing log of
the dev set and the corpus it diagnoses right, every failure signature's example lines and every
failure-kind evidence entry's `match` lines; negatives are every line of every `none`-labelled log, the
benign signatures' examples, the `ok` evidence entries' lines, every evidence `no_match` line, the
lines of failing logs the scan marks `ok` (normal progress), and the lines of a failing log more than
BEFORE_GAP lines above its first failure line (its ordinary output: a build's compiler command lines,
which otherwise read as failures by their many CUDA words). Logistic regression, classes balanced, L2.

--cv: every fixture round R (and the dev set, and the corpus, each as one group) is scored by a
detector trained without R's logs and without any example line that occurs in one of them. Printed,
per threshold: (a) the before-records whose recorded answer was a silent `none` (the tool of each
round's day on the round's fresh logs): the failing ones the detector would flag (recall gain) and the
`none`-labelled ones (false alarms); (b) the logs the tool says a silent `none` today: every one it
flags is a false alarm unless labelled failing; (c) every `none`-labelled log; and the flagged lines.
A log's score is that of its best line among those the gate lets through (signatures.lineflag.flag).

--perf DIR: every log of DIR diagnosed with the shipped detector; the silent `none` logs it keeps out
of `none`, split by the generator's manifest (bench/_data/perfgen/manifest.tsv: error_events).

Measured 2026-12-04 (--cv; 42 rounds, the dev set and the corpus held out in turn), at 0.95: (a) 19 of
the 50 failing logs the tool of each round's day called a silent `none` flagged, 0 of its 136 right
silent `none` answers; (b) 0 of the 262 logs the tool says a silent `none` today (2 before lines
stating their own recovery or an excused context were left unflagged: signatures.lineflag.recovered). --forward at 0.95: 16 of 50 flagged, 1 of 136. --perf on the perf corpus (20,000 logs): 41 of 6,844 silent `none` logs flipped (main 0eaf797), 10 with a
GPU error event (docker's 'could not select device driver'), 31 CI logs with a failing pytest case.
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import sys
from pathlib import Path

import numpy as np

from bench.wordmodel import before_records   # id -> the fresh rounds' before-record row

ROOT = Path(__file__).resolve().parent.parent
ISSUES = ROOT / "tests" / "fixtures" / "issues"
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "realworld").exists()), ROOT.parent / "shared")
L2 = 1e-4           # per-document L2 strength
ITERATIONS = 400
BEFORE_GAP = 3      # lines just above a failing log's first failure line are its context, not ordinary output
MIN_DOCS = 2        # a word seen in fewer training lines gets no weight
THRESHOLDS = (0.5, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995)
SILENT = "no sign of progress"   # the title of a silent `none` (diagnose.engine._no_signature)


def read_data(path: Path) -> bytes:
    """The log's text as the engine reads it (diagnose.engine._flagged): ANSI codes stripped."""
    from signatures.matcher import Matcher
    from signatures.normalise import normalise_chunk

    with Matcher.open(path) as f:
        return normalise_chunk(f.read(8 << 20))


def read_lines(path: Path) -> list[str]:
    from signatures.normalise import last_segment

    return [last_segment(b).decode("utf-8", "replace") for b in read_data(path).split(b"\n")]


def labelled() -> list[dict]:
    """Every labelled log: {set, id, family, path, root} (root: the manifest's root line or None)."""
    out = []
    for manifest in sorted(ISSUES.glob("manifest-g*.tsv"), key=lambda p: int(p.stem.split("-g")[1])):
        rnd = manifest.stem.split("-", 1)[1]
        with open(manifest, newline="") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                root = r.get("root_line") or ""
                out.append({"set": rnd, "id": r["id"], "family": r["family"], "path": ISSUES / f"{r['id']}.log",
                            "root": int(root) if root.isdigit() else None})
    for name, manifest, logs in (("dev", SHARED / "realworld" / "manifest.tsv", SHARED / "realworld" / "logs"),
                                 ("corpus", ROOT / "corpus" / "manifest.tsv", ROOT / "corpus" / "logs")):
        if manifest.exists():
            with open(manifest, newline="") as f:
                out += [{"set": name, "id": r["id"], "family": r["family"], "path": logs / f"{r['id']}.log",
                         "root": None} for r in csv.DictReader(f, delimiter="\t")]
    return [d for d in out if d["path"].exists()]


def collect():
    """(logs, examples): logs with their lines, the tool's answer today and their training lines;
    examples: (text, label) of the signature and evidence tables."""
    from diagnose.engine import diagnose_file
    from signatures.evidence import FAILURE_KINDS, load as load_evidence
    from signatures.matcher import default_matcher
    from signatures.normalise import last_segment, strip_prefix

    import signatures.lineflag as lineflag

    matcher = default_matcher()
    logs = labelled()
    # the tool's answers without the detector: which logs are a silent `none` for it to read
    saved, lineflag._detector, lineflag._loaded = (lineflag._detector, lineflag._loaded), None, True
    for d in logs:
        d["data"] = read_data(d["path"])
        d["lines"] = [last_segment(b).decode("utf-8", "replace") for b in d["data"].split(b"\n")]
        diag = diagnose_file(d["path"], matcher=matcher)
        d["got"], d["title"] = diag.family, diag.title
        d["silent"] = diag.family == "none" and SILENT in diag.title
        if d["root"] is None and d["family"] != "none" and diag.family == d["family"] and diag.root:
            d["root"] = diag.root.line
        scan = matcher.scan_file(d["path"])
        d["ok"] = sorted({n for k, n, _ in scan.hints if k == "ok"})
        train = []
        if d["family"] == "none":
            seen = set()
            for t in d["lines"]:
                t = t.strip()
                if len(t) >= 3 and t not in seen:
                    seen.add(t)
                    train.append((t, 0))
        else:
            if d["root"] and d["root"] <= len(d["lines"]):
                train.append((d["lines"][d["root"] - 1].strip(), 1))
            train += [(d["lines"][n - 1].strip(), 0) for n in d["ok"] if n <= len(d["lines"]) and n != d["root"]]
            # the run's ordinary output: the lines more than BEFORE_GAP lines above its first failure line
            # (a compiler's command lines, a loader's notes), none of them failure evidence
            failing = [n for k, n, _ in scan.hints if k != "ok"] + ([d["root"]] if d["root"] else [])
            first = min(failing + [len(d["lines"]) + 1])
            seen = {t for t, _ in train}
            for n in range(1, first - BEFORE_GAP):
                t = d["lines"][n - 1].strip()
                if len(t) >= 3 and t not in seen:
                    seen.add(t)
                    train.append((t, 0))
        d["train"] = train
    lineflag._detector, lineflag._loaded = saved
    examples = []
    for s in matcher.signatures:
        label = 0 if s.role == "benign" else 1
        examples += [(strip_prefix(ex.line).strip(), label) for ex in s.examples]
    for e in load_evidence():
        label = 1 if e.kind in FAILURE_KINDS else 0
        if e.kind == "consequence":
            continue
        examples += [(strip_prefix(t).strip(), label) for t in e.match]
        examples += [(strip_prefix(t).strip(), 0) for t in e.no_match]
    return logs, [(t, y) for t, y in examples if len(t) >= 3]


def fit(docs: list[tuple[str, int]]) -> tuple[float, dict[str, float]]:
    """Logistic regression over word presence (full-batch gradient descent, Adam, L2), classes balanced."""
    from signatures.lineflag import words

    feats = [words(t) for t, _ in docs]
    df = collections.Counter(w for f in feats for w in f)
    vocab = {w: i for i, w in enumerate(sorted(w for w, c in df.items() if c >= MIN_DOCS))}
    rows, cols = [], []
    for r, f in enumerate(feats):
        for w in f:
            if w in vocab:
                rows.append(r)
                cols.append(vocab[w])
    rows, cols = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
    from signatures.lineflag import scale

    vals = np.array([scale(len(feats[r])) for r in rows], dtype=np.float64)
    y = np.array([lab for _, lab in docs], dtype=np.float64)
    n, v = len(docs), len(vocab)
    pos = y.sum()
    sw = np.where(y == 1, n / (2 * max(pos, 1)), n / (2 * max(n - pos, 1)))   # balanced class weights
    w, b = np.zeros(v), 0.0
    mw, vw, mb, vb = np.zeros(v), np.zeros(v), 0.0, 0.0
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
    for it in range(1, ITERATIONS + 1):
        z = np.bincount(rows, weights=w[cols] * vals, minlength=n) + b
        p = 1 / (1 + np.exp(-np.clip(z, -30, 30)))
        g = (p - y) * sw / n
        gw = np.bincount(cols, weights=g[rows] * vals, minlength=v) + L2 * w
        gb = g.sum()
        mw = b1 * mw + (1 - b1) * gw
        vw = b2 * vw + (1 - b2) * gw * gw
        mb = b1 * mb + (1 - b1) * gb
        vb = b2 * vb + (1 - b2) * gb * gb
        c1, c2 = 1 - b1 ** it, 1 - b2 ** it
        w -= lr * (mw / c1) / (np.sqrt(vw / c2) + eps)
        b -= lr * (mb / c1) / (np.sqrt(vb / c2) + eps)
    inv = sorted(vocab, key=vocab.get)
    return float(b), {word: round(float(x), 4) for word, x in zip(inv, w) if abs(x) >= 1e-3}


def _score_log(det, d) -> tuple[float, int, str]:
    """(posterior, line, text) of the log's highest-scoring line, read as the engine reads it (det.flag)."""
    hit = det.flag(d["data"])
    return (hit[2], hit[0], hit[1]) if hit else (0.0, 0, "")


def held_out(logs, examples) -> dict[str, tuple[float, int, str]]:
    from signatures.lineflag import Detector

    groups = sorted({d["set"] for d in logs}, key=lambda s: (not s.startswith("g"), int(s[1:]) if s[1:].isdigit() else 0, s))
    out = {}
    for g in groups:
        held = [d for d in logs if d["set"] == g]
        text = "\n".join("\n".join(d["lines"]) for d in held)
        train = [t for d in logs if d["set"] != g for t in d["train"]]
        train += [(t, y) for t, y in examples if t not in text]
        bias, weights = fit(train)
        det = Detector(bias, weights, 0.0)
        for d in held:
            out[d["id"]] = _score_log(det, d)
        print(f"  held out {g:6}: {len(held):4} logs, trained on {len(train)} lines", file=sys.stderr)
    return out


def cv(logs, examples, show: float) -> dict:
    scores = held_out(logs, examples)
    records = before_records()
    by_id = {d["id"]: d for d in logs}
    silent_rec = [r for r in records.values() if r["kind"] == "none-silent" and r["id"] in scores]
    fail_rec = [r for r in silent_rec if r["family"] != "none"]
    neg_rec = [r for r in silent_rec if r["family"] == "none"]
    silent_now = [d for d in logs if d["silent"]]
    negatives = [d for d in logs if d["family"] == "none"]
    failing = [d for d in logs if d["family"] != "none"]
    print(f"held out by round: {len(logs)} labelled logs, each scored by a detector trained without its round "
          f"(the dev set and the corpus each one group) and without the example lines found in it")
    print("(a) before-records recorded as a silent `none`: failing ones flagged (gain) / `none`-labelled ones "
          "flagged (false alarms)")
    print("(b) logs the tool says a silent `none` today: failing flagged / `none`-labelled flagged")
    print("(c) every `none`-labelled log (any answer today) flagged; every failing log with a line flagged")
    print(f"  {'threshold':>9}  {'(a) gain':>10} {'(a) false':>10}  {'(b) gain':>9} {'(b) false':>10}  "
          f"{'(c) neg':>9} {'failing':>10}")
    figures = {}
    for t in THRESHOLDS:
        a_gain = sum(scores[r["id"]][0] >= t for r in fail_rec)
        a_false = sum(scores[r["id"]][0] >= t for r in neg_rec)
        b_gain = sum(scores[d["id"]][0] >= t for d in silent_now if d["family"] != "none")
        b_false = sum(scores[d["id"]][0] >= t for d in silent_now if d["family"] == "none")
        c_neg = sum(scores[d["id"]][0] >= t for d in negatives)
        c_fail = sum(scores[d["id"]][0] >= t for d in failing)
        figures[t] = (a_gain, a_false, b_gain, b_false, c_neg)
        print(f"  {t:9.3f}  {a_gain:4}/{len(fail_rec):<5} {a_false:4}/{len(neg_rec):<5}  "
              f"{b_gain:3}/{sum(d['family'] != 'none' for d in silent_now):<5} "
              f"{b_false:4}/{sum(d['family'] == 'none' for d in silent_now):<5}  "
              f"{c_neg:3}/{len(negatives):<5} {c_fail:4}/{len(failing)}")
    print(f"before-records recorded as a silent `none`, at {show}:")
    for r in sorted(silent_rec, key=lambda r: (r["family"] == "none", r["id"])):
        p, n, text = scores[r["id"]]
        mark = "FLAG" if p >= show else "    "
        if r["family"] != "none" or p >= show:
            print(f"  {mark} {r['id']:8} {r['family']:24} {p:.3f} line {n}: {text.strip()[:110]}")
    print(f"`none`-labelled logs flagged at {show}:")
    for d in negatives:
        p, n, text = scores[d["id"]]
        if p >= show:
            print(f"  {d['id']:10} ({'silent' if d['silent'] else d['got']}) {p:.3f} line {n}: {text.strip()[:110]}")
    return figures


def forward(logs, examples) -> None:
    """Time-forward: each round's before-records of a silent `none` scored by a detector trained only
    on the rounds before it (and the dev set and the corpus), without any example line found in that
    round or a later one: what the detector would have done on the round's day."""
    from signatures.lineflag import Detector

    records = [r for r in before_records().values() if r["kind"] == "none-silent"]
    by_id = {d["id"]: d for d in logs}
    rounds = sorted({r["id"].split("-")[0] for r in records}, key=lambda r: int(r[1:]))
    flagged = {t: [0, 0] for t in THRESHOLDS}
    n = [0, 0]
    for rnd in rounds:
        k = int(rnd[1:])
        later = [d for d in logs if d["set"].startswith("g") and int(d["set"][1:]) >= k]
        text = "\n".join("\n".join(d["lines"]) for d in later)
        train = [t for d in logs if not (d["set"].startswith("g") and int(d["set"][1:]) >= k) for t in d["train"]]
        train += [(t, y) for t, y in examples if t not in text]
        det = Detector(*fit(train), 0.0)
        for r in records:
            if r["id"].split("-")[0] == rnd and r["id"] in by_id:
                p = _score_log(det, by_id[r["id"]])[0]
                side = 0 if r["family"] != "none" else 1
                n[side] += 1
                for t in THRESHOLDS:
                    flagged[t][side] += p >= t
    print("time-forward: before-records of a silent `none`, each round scored by a detector trained on the "
          "rounds before it: failing ones flagged (gain) / `none`-labelled ones flagged (false alarms)")
    for t in THRESHOLDS:
        print(f"  {t:9.3f}  {flagged[t][0]:4}/{n[0]:<5} {flagged[t][1]:4}/{n[1]}")


def write(logs, examples, threshold: float) -> Path:
    from bench.wordmodel import labels_digest
    from signatures.lineflag import TABLE

    train = [t for d in logs for t in d["train"]] + examples
    bias, weights = fit(train)
    sets = collections.Counter(d["set"] if d["set"] in ("dev", "corpus") else "rounds" for d in logs)
    data = {"doc": "built by `python -m bench.lineflag --write` (signatures/lineflag.py); do not edit",
            "trained_on": {"logs": dict(sorted(sets.items())), "lines": len(train),
                           "positives": sum(y for _, y in train), "labels": labels_digest()},
            "threshold": threshold, "bias": round(bias, 4), "weights": dict(sorted(weights.items()))}
    TABLE.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}: {len(weights)} words from {len(train)} lines")
    return TABLE


def perf(directory: Path, sample: int) -> None:
    """The logs of `directory` the tool says a silent `none` today, and those the shipped detector flags."""
    from diagnose.engine import diagnose_file
    from signatures.lineflag import load
    from signatures.matcher import default_matcher

    det, matcher = load(), default_matcher()
    paths = sorted(directory.glob("*.log"))
    silent, flagged = 0, []
    answers = collections.Counter()
    for p in paths:
        d = diagnose_file(p, matcher=matcher)
        answers[d.family] += 1
        if d.family == "none" and SILENT in d.title:
            silent += 1
        if d.notes and any("failure-line detector" in n for n in d.notes):
            flagged.append((p.name, d.root.line if d.root else 0, d.root.text if d.root else ""))
    print(f"{directory}: {len(paths)} logs; answers {dict(answers.most_common())}")
    print(f"  silent `none` without the detector: {silent + len(flagged)}; kept out of `none` by it: {len(flagged)}")
    # the generator's manifest (bench/_data/perfgen/manifest.tsv: name, kind, bytes, error_events) says
    # which logs hold a GPU error event; the others may still hold an ordinary failure (a FAILED test)
    events = {}
    manifest = directory.parent / "perfgen" / "manifest.tsv"
    if manifest.exists():
        with open(manifest, newline="") as f:
            events = {r["name"]: int(r["error_events"]) for r in csv.DictReader(f, delimiter="\t")}
        with_event = sum(events.get(name, 0) > 0 for name, _, _ in flagged)
        print(f"  of those, with a GPU error event in the generator's manifest: {with_event}; without: "
              f"{len(flagged) - with_event}")
    for name, n, text in flagged[:sample]:
        print(f"    {name} (events {events.get(name, '?')}) line {n}: {text.strip()[:120]}")


def main(argv=None) -> int:
    from signatures.lineflag import THRESHOLD

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cv", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--forward", action="store_true", help="also the time-forward figures (rounds before R only)")
    ap.add_argument("--perf", type=Path)
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    args = ap.parse_args(argv)
    if args.perf:
        perf(args.perf, args.sample)
        return 0
    logs, examples = collect()
    if args.write:
        write(logs, examples, args.threshold)
    if args.cv or not (args.write or args.forward):
        cv(logs, examples, args.threshold)
    if args.forward:
        forward(logs, examples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
