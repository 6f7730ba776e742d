"""Toggle the family mechanisms under ablation: python -m bench.family_toggle SHARE SEED... (e.g. 0.5 1 2).

Hard signatures are dropped by hash as in bench.support_ablation, the same drops for every setting;
the wording guess's tie-break and the warned/context rule are switched off and on. Needs the dev set
at /work/shared/realworld (../shared/realworld of the main checkout).
"""
import csv, sys
from pathlib import Path
tree = Path(__file__).resolve().parent.parent; sys.path.insert(0, str(tree))
import diagnose.engine as engine
import signatures.fallback as fb
from bench.support_ablation import dropped
from signatures.loader import load_all
from signatures.matcher import Matcher
rows = []
for manifest in sorted((tree / "tests/fixtures/issues").glob("manifest-*.tsv")):
    rows += [(manifest.parent / f"{r['id']}.log", r["family"]) for r in csv.DictReader(open(manifest), delimiter="\t")]
dev = next((p for p in (tree.parent / "shared" / "realworld", Path("/work/shared/realworld")) if (p / "manifest.tsv").exists()))
rows += [(dev / "logs" / f"{r['id']}.log", r["family"]) for r in csv.DictReader(open(dev / "manifest.tsv"), delimiter="\t")]
sigs = load_all()
real_warned, tb = engine._warned, fb._load().tiebreaks
share = float(sys.argv[1]); seeds = [int(s) for s in sys.argv[2:]]
for seed in seeds:
    keep = [s for s in sigs if s.tier != "hard" or s.role == "benign" or not dropped(s.id, seed, share)]
    m = Matcher(keep)
    for name, w, t in (("both off", False, False), ("tie-break on", False, True), ("warned/context on", True, False), ("both on", True, True)):
        engine._warned = real_warned if w else (lambda d, *a, **k: d)
        fb._load().tiebreaks = tb if t else []
        right = fallback = fallback_right = warned = warned_right = 0
        for path, family in rows:
            d = engine.diagnose_file(path, matcher=m)
            right += d.family == family
            if (d.signature or "").startswith("fallback."):
                fallback += 1; fallback_right += d.family == family
            if any("explained beside the failure" in n for n in d.notes):
                warned += 1; warned_right += d.family == family
        print(f"drop {share:.0%} seed {seed} {name:18} accuracy {right}/{len(rows)} = {right/len(rows):.3f}  "
              f"fallback {fallback_right}/{fallback}  warned/context {warned_right}/{warned}", flush=True)
