"""Cascade chains over every annotated round (manifests with a `cascade` column).

    PYTHONPATH=$PWD python -m bench.cascades [--dump FILE] [--show yes|no]

yes: the annotator says other lines follow from the root; counted as listed when the chain has >= 1
`symptom` (also split by whether the family is right, as test_labelled_sets counts misses). no: how
many chains still list a symptom (a symptom the annotator missed, or a false one: read them)."""
import argparse
import json
from pathlib import Path

ISSUES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "issues"


def manifests():
    out = []
    for p in sorted(ISSUES.glob("manifest-g*.tsv"), key=lambda p: int(p.stem.split("-g")[1])):
        head = p.read_text().split("\n", 1)[0].split("\t")
        if "cascade" in head:
            out.append(p)
    return out


def run():
    from diagnose.engine import diagnose_file
    from signatures.matcher import default_matcher
    matcher = default_matcher()
    recs = []
    for p in manifests():
        lines = p.read_text().splitlines()
        head = lines[0].split("\t")
        for line in lines[1:]:
            if not line.strip():
                continue
            r = dict(zip(head, line.split("\t")))
            d = diagnose_file(ISSUES / f"{r['id']}.log", matcher=matcher)
            recs.append({"id": r["id"], "cascade": r["cascade"], "family": r["family"], "got": d.family,
                         "root": d.root.line if d.root else None,
                         "symptoms": [(c.line, c.signature, c.text[:160]) for c in d.chain if c.role == "symptom"]})
    return recs


def summary(recs):
    yes = [r for r in recs if r["cascade"] == "yes"]
    no = [r for r in recs if r["cascade"] == "no"]
    yes_right = [r for r in yes if r["got"] == r["family"]]
    return {"yes_listed": sum(bool(r["symptoms"]) for r in yes), "yes": len(yes),
            "yes_right_listed": sum(bool(r["symptoms"]) for r in yes_right), "yes_right": len(yes_right),
            "no_listing": sum(bool(r["symptoms"]) for r in no), "no": len(no)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump")
    ap.add_argument("--show", choices=("yes", "no"))
    a = ap.parse_args()
    recs = run()
    if a.dump:
        Path(a.dump).write_text(json.dumps(recs, indent=0))
    s = summary(recs)
    print(f"cascade yes listing >= 1 symptom: {s['yes_listed']}/{s['yes']} "
          f"(family right: {s['yes_right_listed']}/{s['yes_right']}); "
          f"cascade no listing a symptom: {s['no_listing']}/{s['no']}")
    if a.show:
        for r in recs:
            if r["cascade"] == a.show and (bool(r["symptoms"]) == (a.show == "no")):
                print(f"{r['id']}\t{r['family']}\tgot {r['got']}\troot {r['root']}")
                for s in r["symptoms"]:
                    print(f"    {s[0]}: {s[1]}: {s[2]}")


if __name__ == "__main__":
    main()
