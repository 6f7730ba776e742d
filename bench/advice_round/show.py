import sys, glob, os
from diagnose.engine import diagnose_file
from signatures.facts import render
for p in sorted(glob.glob(sys.argv[1] + "/*.log")):
    d = diagnose_file(p)
    print(f"## {os.path.basename(p)}  {d.family} / {d.origin} / {d.signature} ({d.confidence})")
    print("   root:", (d.root.text.strip()[:150] if d.root else "-"))
    print("   facts:", {k: render(k, v) for k, v in d.facts.items()})
    for r in getattr(d, "reasoning", []) or []:
        print("   reason:", r)
    print("   fix:", d.fix)
    print("   next:", d.next_step)
