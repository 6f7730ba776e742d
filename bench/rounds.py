"""Fresh rounds of real issue-thread logs: score one, record its before-score, measure facts recall.

    python -m bench.rounds score g21            # accuracy, origin, root line, facts recall, misses
    python -m bench.rounds record g21           # writes tests/fixtures/issues/before-g21.tsv
    python -m bench.rounds rederive g21 g22     # re-derives the `kind` column with the recording commit
    python -m bench.rounds origin               # origin and root line over every manifest and the corpus

A round is `tests/fixtures/issues/manifest-<round>.tsv` plus its logs. Manifests written from g21 on
carry the annotations made before the tool was run on them: `origin`, `root_line` (1-based line of
the root failure in the log, empty for `none`), `facts` (what a reviewer needs, `kind=value;...`) and
`cascade` (yes when other lines of the log follow from the root).

The before-record (`before-<round>.tsv`: id, family, got, confidence, right, kind) is written once, with
the tool as it was when the round was collected, and committed beside the round: it is the honest
estimate of accuracy on logs no one has seen, and the calibration bench (bench.calibration) reads it.
`kind` is the kind of evidence that decided the answer (KINDS below, named by `kind_of`); confidence
is calibrated by kind (diagnose/confidence.toml). Records written before the column existed get it
from `rederive`: the commit that added the record is checked out in a temporary worktree and the
same logs are run through it (bench/kind_probe.py), and its answers must equal the record's.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ISSUES = ROOT / "tests" / "fixtures" / "issues"
FIELDS = ["id", "family", "got", "confidence", "right", "kind"]
# the kinds of evidence that decide an answer (each a key of diagnose/confidence.toml's [kind] table)
KINDS = ("root", "root-rival", "wrapper", "symptom", "support", "wrapped", "fallback", "model", "unknown",
         "unreadable", "none-progress", "none-handled", "none-silent")


def kind_of(p: dict, progress: bool = False) -> str:
    """The kind of evidence behind one answer, from bench/kind_probe.py's fields (any commit's tool).

    `progress`: the log has a completion line of today's `ok` evidence (signatures/evidence.toml); the
    tools before that table said only "no failure found", so the log's own text decides progress."""
    family, sig, title = p["family"], p.get("signature") or "", (p.get("title") or "").lower()
    if family == "none":
        if "handled" in title or p.get("chain"):
            return "none-handled"     # decided over matched lines: handled fallbacks, informational codes
        return "none-progress" if progress or p.get("ok_hints") else "none-silent"
    if sig.startswith("fallback.model."):
        return "model"
    if sig.startswith("fallback."):
        return "fallback"
    # a known failure that is no GPU failure (not-gpu.*: host RAM) is decided by its signature like any root
    if family == "unknown" and not sig.startswith("not-gpu."):
        return "unreadable" if p.get("role") is None and ("empty" in title or "could not be read" in title
                                                          or "binary" in title or "blank lines" in title) else "unknown"
    if any("hard-wrapped" in n for n in p.get("notes") or ()):
        return "wrapped"
    if p.get("tier") == "support" or any("explained beside the failure" in n for n in p.get("notes") or ()):
        return "support"
    if p.get("role") == "root":
        return "root-rival" if p.get("rivals") else "root"
    if p.get("role") in ("wrapper", "symptom"):
        return p["role"]
    return "unknown"


def _ok_patterns():
    import re2

    from signatures.evidence import load

    return [re2.compile(e.pattern) for e in load() if e.kind == "ok"]


def shows_progress(path: Path, patterns=None) -> bool:
    """A completion line of today's `ok` evidence anywhere in the log (first 4 MB)."""
    patterns = patterns if patterns is not None else _ok_patterns()
    from signatures.normalise import normalise_chunk

    text = normalise_chunk(path.read_bytes()[:4 << 20]).decode("utf-8", "replace")
    return any(p.search(line) for line in text.split("\n") for p in patterns)


def rows(round_name: str) -> list[dict]:
    with open(ISSUES / f"manifest-{round_name}.tsv", newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r.get("id")]


def annotated_facts(row: dict) -> list[tuple[str, str]]:
    out = []
    for part in (row.get("facts") or "").split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out.append((k.strip(), v.strip()))
    return out


def _norm(text: str) -> str:
    return re.sub(r"[\s'\"`()\[\]]", "", _file_line(str(text)).lower())


def _file_line(text: str) -> str:
    """One spelling of a source location: 'ProgramCU.cu(1571)', 'pro.cu (58)' and 'main.swift, line 261'
    are 'ProgramCU.cu:1571', 'pro.cu:58', 'main.swift:261' (compilers print all of them)."""
    text = re.sub(r"(\.[A-Za-z]\w*)\s?\((\d+)\)", r"\1:\2", text)
    return re.sub(r"(\.[A-Za-z]\w*),(?: [\w:<>~]+,)? line #?(\d+)", r"\1:\2", text)


def fact_found(value: str, facts: dict) -> bool:
    """Is an annotated fact value among the diagnosis's facts? Compared by value, not by name: sizes as
    byte counts (within 1 %), everything else as text with spaces, quotes and brackets removed."""
    from signatures.facts import parse_bytes

    # two shapes annotated as one fact ('154x2048 and 4096x1152', a matmul's operands): each must be found
    shapes = re.findall(r"\d+(?:\s*x\s*\d+)+", value)
    if len(shapes) >= 2 and not re.sub(r"\d+(?:\s*x\s*\d+)+|\band\b|vs\.?|[\s(),;]", "", value):
        return all(fact_found(part, facts) for part in shapes)
    want_bytes = parse_bytes(value) if re.search(r"\d", value) else None
    want = _norm(value)
    # a shape written 256x128 or (1, 4096) is the same value as the list [256, 128]
    want_shape = re.sub(r"\s*[x,]\s*", ",", want) if re.fullmatch(r"\d+(?:\s*[x,]\s*\d+)+", want) else None
    for got in facts.values():
        if want_shape and isinstance(got, list) and ",".join(map(str, got)) == want_shape:
            return True
        candidates = got if isinstance(got, list) and got and isinstance(got[0], (list, str)) else [got]
        for g in candidates:
            if want_bytes and isinstance(g, int) and not isinstance(g, bool) and want_bytes > 1024:
                if abs(g - want_bytes) <= 0.01 * want_bytes:
                    return True
            text = _norm(",".join(map(str, g)) if isinstance(g, list) else g)
            if not text:
                continue
            if want == text or (len(want) >= 3 and (want in text or text in want)):
                return True
            # 'c10::Half' against the canonical 'float16'; 'sm_89' against '8.9'
            from signatures.facts import parse_cc, parse_dtype
            if parse_dtype(value) == text or (parse_cc(value) and parse_cc(value) == text):
                return True
    return False


def score(round_name: str) -> dict:
    from bench.kind_probe import probe
    from diagnose.engine import diagnose_file
    from signatures.matcher import default_matcher

    matcher, ok = default_matcher(), _ok_patterns()
    out = {"n": 0, "right": 0, "origin_n": 0, "origin_right": 0, "root_n": 0, "root_right": 0,
           "facts_n": 0, "facts_found": 0, "none_said": 0, "none_right": 0, "cascade_n": 0, "cascade_listed": 0,
           "records": [], "misses": []}
    for r in rows(round_name):
        path = ISSUES / f"{r['id']}.log"
        d = diagnose_file(path, matcher=matcher)
        kind = kind_of(probe(str(path), matcher), shows_progress(path, ok))
        right = d.family == r["family"]
        out["n"] += 1
        out["right"] += right
        out["records"].append({"id": r["id"], "family": r["family"], "got": d.family,
                               "confidence": f"{d.confidence:.2f}", "right": "1" if right else "0",
                               "kind": kind})
        if d.family == "none":
            out["none_said"] += 1
            out["none_right"] += r["family"] == "none"
        if not right:
            out["misses"].append(f"{r['id']}: want {r['family']}, got {d.family} ({d.confidence:.2f}; "
                                 f"root: {d.root.text[:100] if d.root else '-'})")
        if right and r.get("origin") not in (None, "", "-"):
            out["origin_n"] += 1
            out["origin_right"] += d.origin == r["origin"]
        if right and (r.get("root_line") or "").isdigit():
            out["root_n"] += 1
            out["root_right"] += bool(d.root) and d.root.line == int(r["root_line"])
        if r.get("cascade") == "yes":
            # a cascade's chain should list the lines the root explains as symptoms
            out["cascade_n"] += 1
            out["cascade_listed"] += any(c.role == "symptom" for c in d.chain)
        for _, value in annotated_facts(r):
            out["facts_n"] += 1
            out["facts_found"] += fact_found(value, d.facts)
    return out


def report(s: dict, name: str) -> str:
    def ratio(a, b):
        return f"{a}/{b} = {a / b:.3f}" if b else "n/a"

    lines = [f"round {name}: accuracy {ratio(s['right'], s['n'])}",
             f"  origin (of right families) {ratio(s['origin_right'], s['origin_n'])}",
             f"  root line (of right families) {ratio(s['root_right'], s['root_n'])}",
             f"  facts recall {ratio(s['facts_found'], s['facts_n'])}",
             f"  'none' precision {ratio(s['none_right'], s['none_said'])}",
             f"  cascades listing >= 1 symptom {ratio(s.get('cascade_listed', 0), s.get('cascade_n', 0))}"]
    lines += ["  miss " + m for m in s["misses"]]
    return "\n".join(lines)


def write_record(name: str, s: dict) -> Path:
    return _write(ISSUES / f"before-{name}.tsv", s["records"])


def _write(path: Path, records: list[dict]) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, delimiter="\t", lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(records)
    return path


def recording_commit(name: str) -> str:
    """The commit that added before-<round>.tsv: the tool as it was when the round was scored."""
    rel = (ISSUES / f"before-{name}.tsv").relative_to(ROOT)
    out = subprocess.run(["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%H", "--", str(rel)],
                         capture_output=True, text=True, check=True).stdout.split()
    if not out:
        raise SystemExit(f"{rel}: no commit adds it (commit the before-record first)")
    return out[-1]


def rederive(name: str) -> tuple[list[dict], list[str]]:
    """The before-record with its `kind` column re-derived by the recording commit's own tool.

    Returns the records and the disagreements (a record whose got/confidence the old tool does not
    reproduce: its kind would be a guess, so it is reported, not written)."""
    path = ISSUES / f"before-{name}.tsv"
    with open(path, newline="") as f:
        records = list(csv.DictReader(f, delimiter="\t"))
    commit = recording_commit(name)
    ok, problems = _ok_patterns(), []
    with tempfile.TemporaryDirectory(prefix=f"rederive-{name}-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), commit],
                       check=True)
        try:
            logs = [str(tree / "tests" / "fixtures" / "issues" / f"{r['id']}.log") for r in records]
            env = dict(os.environ, PYTHONPATH=str(tree))
            run = subprocess.run([sys.executable, str(ROOT / "bench" / "kind_probe.py"), *logs], cwd=tree,
                                 env=env, capture_output=True, text=True)
            if run.returncode:
                raise SystemExit(f"{commit[:10]} could not run bench/kind_probe.py:\n{run.stderr[-2000:]}")
            probes = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    for r, p in zip(records, probes, strict=True):
        if p["family"] != r["got"] or f"{p['confidence']:.2f}" != r["confidence"]:
            problems.append(f"{r['id']}: recorded {r['got']} {r['confidence']}, {commit[:10]} now gives "
                            f"{p['family']} {p['confidence']:.2f}")
        r["kind"] = kind_of(p, shows_progress(ISSUES / f"{r['id']}.log", ok))
    return records, problems


def all_rounds() -> list[str]:
    names = [p.stem.split("-", 1)[1] for p in ISSUES.glob("manifest-g*.tsv")]
    return sorted(names, key=lambda n: int(n[1:]))


def origin_report(names: list[str]) -> str:
    """Origin and root-line accuracy (of the rows whose family is right) per round and in total, and
    the corpus's origins (every row, as tests/test_corpus.py holds them)."""
    from corpus import generate
    from diagnose.engine import diagnose_file

    lines, tot = [], {"n": 0, "right": 0, "origin_n": 0, "origin_right": 0, "root_n": 0, "root_right": 0}
    for name in names:
        s = score(name)
        for k in tot:
            tot[k] += s[k]
        lines.append(f"{name:>5}: origin {s['origin_right']}/{s['origin_n']}  root line {s['root_right']}/{s['root_n']}")
    def ratio(a, b):
        return f"{a}/{b} = {a / b:.3f}" if b else "n/a"
    lines.append(f"total: family {ratio(tot['right'], tot['n'])}; origin (of right families) "
                 f"{ratio(tot['origin_right'], tot['origin_n'])}; root line {ratio(tot['root_right'], tot['root_n'])}")
    rows = generate.read_manifest()
    ok = sum((diagnose_file(ROOT / "corpus" / "logs" / f"{r['id']}.log").origin or "-") == r["origin"] for r in rows)
    lines.append(f"corpus: origin {ratio(ok, len(rows))}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["score", "record", "rederive", "origin"])
    ap.add_argument("rounds", nargs="*")
    a = ap.parse_args(argv)
    if a.action == "origin":
        print(origin_report(a.rounds or all_rounds()))
        return 0
    if not a.rounds:
        ap.error("name the rounds to score or record")
    for name in a.rounds:
        if a.action == "rederive":
            records, problems = rederive(name)
            for p in problems:
                print(f"{name}: {p}", file=sys.stderr)
            if problems:
                return 1
            _write(ISSUES / f"before-{name}.tsv", records)
            counts = {}
            for r in records:
                counts[r["kind"]] = counts.get(r["kind"], 0) + 1
            print(f"{name}: kind re-derived with {recording_commit(name)[:10]}: "
                  + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
            continue
        s = score(name)
        print(report(s, name))
        if a.action == "record":
            path = ISSUES / f"before-{name}.tsv"
            if path.exists():
                print(f"{path.name} exists: a before-record is written once, before any change", file=sys.stderr)
                return 2
            print(f"wrote {write_record(name, s).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
