"""What decided each diagnosis, as plain data: run with any commit of the tool on PYTHONPATH.

    PYTHONPATH=OLD_TREE python bench/kind_probe.py LOG...      (one JSON object per log on stdout)

bench.rounds reads it to re-derive the `kind` of each before-record with the tool as it was when
the record was written (bench.rounds rederive). It uses only what every commit since the first
fresh round has: diagnose_file, the matcher's scan, a match's signature (id, family, role,
priority, tier where it exists) and `demoted`. The kind itself is named in bench.rounds.kind_of,
from these fields, so old and new records are read by one rule.
"""
import json
import sys


def probe(path: str, matcher) -> dict:
    from diagnose.engine import diagnose_file

    d = diagnose_file(path, matcher=matcher)
    scan = matcher.scan_file(path)
    active = [m for m in scan.matches if not getattr(m, "demoted", False)]
    sig = next((m.signature for m in scan.matches if m.signature.id == d.signature), None)
    if sig is None and d.signature:
        sig = next((s for s in getattr(matcher, "signatures", ()) if s.id == d.signature), None)
    rivals = []
    if sig is not None and sig.role == "root":
        rivals = sorted({m.signature.family for m in active
                         if m.signature.role == "root" and getattr(m.signature, "tier", "hard") == "hard"
                         and m.signature.family != sig.family and m.signature.priority >= sig.priority - 5})
    return {"path": path, "family": d.family, "signature": d.signature, "title": d.title,
            "confidence": round(float(d.confidence), 2), "notes": list(getattr(d, "notes", []) or []),
            "role": sig.role if sig is not None else None,
            "tier": getattr(sig, "tier", "hard") if sig is not None else None,
            "rivals": rivals, "ok_hints": sum(h[0] == "ok" for h in getattr(scan, "hints", [])),
            # a `none` decided over matched lines (handled fallbacks, informational codes) lists them in its chain
            "chain": len(getattr(d, "chain", []) or [])}


def main(paths: list[str]) -> int:
    from signatures.matcher import default_matcher

    matcher = default_matcher()
    for p in paths:
        print(json.dumps(probe(p, matcher)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
