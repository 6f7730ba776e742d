"""Status codes and error numbers as evidence on their own (signatures/codes.toml).

A log that shows only a code (`CUDA error 700`, `CUBLAS_STATUS_ALLOC_FAILED`, `ncclRemoteError`,
`RESOURCE_EXHAUSTED: ...`, `NRT_EXEC_OOB`, `NCC_EOOM001`) points at a family without any message a
signature knows. The codes are tables from the vendors' public docs (each table names its source);
this module turns each table into support-tier signatures, one per (table, family), so the matcher,
the checks and `diagnose signatures` treat them like any other signature:

- every code's numbers and names are put into the table's pattern templates (`{numbers}`,
  `{names}`, `{messages}`: an alternation of that family's values);
- each template has a `probe` line, filled with the family's first value, that becomes an example
  (so every generated pattern is shown working), beside the table's real-log examples;
- the table's `no_match` lines are every generated signature's counterexamples.

Support evidence decides only when no hard root is found (engine.decide) and carries the
`support` confidence. A table whose codes name their failure exactly (the Neuron compiler's
NCC_E codes) says `tier = "hard"` and gives its codes priorities like any root. A pattern may say
its own `tier` and `variant` (the NVIDIA driver's own `NVRM: Xid (PCI:...): N` record is exact where
a health check's bare "Xid 79" is not): its signatures are `<family>.code.<table>.<variant>`.

A code may also say its `role` (`symptom`: it follows another failure, like Xid 43 after an
application fault), its `severity` (fatal, error, warning, info) and `benign = true`: the vendor
calls it informational (Xid 63, a row remapped as designed), so its line is not a failure. Benign
codes become a benign signature that excuses its own line only (`reach = "line"`): an Xid 48 before
an Xid 63 still decides. A new code is a new `[[table.code]]` entry, not code.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

TABLE = Path(__file__).parent / "codes.toml"
PLACEHOLDERS = ("numbers", "names", "messages")
SEVERITIES = ("fatal", "error", "warning", "info")
CODE_ROLES = ("root", "symptom")


class CodeTableError(ValueError):
    pass


def _alternation(values) -> str:
    # longest first, so an alternation never stops at a prefix of a longer value
    return "|".join(sorted({re.escape(str(v)) if not isinstance(v, int) else str(v) for v in values},
                           key=lambda v: (-len(v), v)))


def _groups(codes: list[dict]) -> dict:
    """(family, role) -> the codes of that family and role in table order; benign codes are
    ("none", "benign") whatever their subject family."""
    out: dict = {}
    for c in codes:
        key = ("none", "benign") if c.get("benign") else (c["family"], c.get("role", "root"))
        out.setdefault(key, []).append(c)
    return out


def raw_signatures(path: Path | None = None) -> list[dict]:
    """The generated signatures, as the raw dicts `loader._build` validates."""
    from signatures.facts import normalise

    path = path or TABLE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise CodeTableError(f"{path}: not valid TOML: {e}") from None
    out = []
    for t in data.get("table", []):
        tid = t.get("id", "?")
        where = f"{path}: table {tid!r}"
        for key in ("id", "title", "source", "docs", "patterns", "code", "no_match", "next_step"):
            if not t.get(key):
                raise CodeTableError(f"{where}: needs {key!r}")
        sources = [t["source"]] if isinstance(t["source"], str) else list(t["source"])
        if not all(s.startswith("https://") for s in sources):
            raise CodeTableError(f"{where}: 'source' must be the public page(s) the codes come from (https://...)")
        for c in t["code"]:
            if not c.get("family") or not c.get("meaning") or not (c.get("number") is not None or c.get("names") or c.get("messages")):
                raise CodeTableError(f"{where}: every [[table.code]] needs family, meaning and a number, names or messages: {c}")
            if c.get("severity") is not None and c["severity"] not in SEVERITIES:
                raise CodeTableError(f"{where}: severity must be one of {', '.join(SEVERITIES)}: {c}")
            if c.get("role", "root") not in CODE_ROLES:
                raise CodeTableError(f"{where}: a code's role must be one of {', '.join(CODE_ROLES)}: {c}")
            if c.get("benign") and c.get("severity") not in ("warning", "info"):
                raise CodeTableError(f"{where}: a benign code is informational: its severity is warning or info: {c}")
            if c.get("source") is not None and not str(c["source"]).startswith("https://"):
                raise CodeTableError(f"{where}: a code's 'source' must be a public page (https://...): {c}")
        examples_by_family: dict = {}
        for ex in t.get("example", []):
            if ex.get("family") is None or not isinstance(ex.get("line"), str):
                raise CodeTableError(f"{where}: every [[table.example]] needs 'line' and 'family'")
            examples_by_family.setdefault(ex["family"], []).append({"line": ex["line"], "facts": dict(ex.get("facts", {})),
                                                                    "variant": ex.get("variant", "")})
        fixes = _family_fixes()
        tier = t.get("tier", "support")
        # patterns by variant: "" is the table's own tier and id, a named variant its own
        variants: dict = {}
        for p in t["patterns"]:
            if p.get("tier", tier) not in ("hard", "support"):
                raise CodeTableError(f"{where}: a pattern's tier is hard or support: {p}")
            variants.setdefault(p.get("variant", ""), []).append(p)
        for (family, role), codes in _groups(t["code"]).items():
            benign = role == "benign"
            priority = 10 if benign else max(int(c.get("priority", 20)) for c in codes)
            values = {
                "numbers": [c["number"] for c in codes if c.get("number") is not None],
                "names": [n for c in codes for n in c.get("names", [])],
                "messages": [m for c in codes for m in c.get("messages", [])],
            }
            made = 0
            for variant, pats in variants.items():
                patterns, examples, vfix, vtier = [], [], [], tier
                for p in pats:
                    template, probe = p["template"], p["probe"]
                    used = [k for k in PLACEHOLDERS if "{" + k + "}" in template]
                    if len(used) != 1:
                        raise CodeTableError(f"{where}: template {template!r} must use exactly one of "
                                             + ", ".join("{" + k + "}" for k in PLACEHOLDERS))
                    kind = used[0]
                    if not values[kind]:
                        continue
                    pattern = template.replace("{" + kind + "}", "(?:" + _alternation(values[kind]) + ")")
                    first = str(values[kind][0])
                    line = probe.replace("{number}", first).replace("{name}", first).replace("{message}", first)
                    m = re.search(pattern, line)
                    if not m:
                        raise CodeTableError(f"{where}: probe {line!r} does not match its template {template!r}")
                    facts = {k: normalise(k, v) for k, v in m.groupdict().items() if v is not None}
                    patterns.append(pattern)
                    examples.append({"line": line, "facts": facts})
                    vfix += list(p.get("fix", []))
                    vtier = p.get("tier", tier)
                if not patterns:
                    continue
                made += 1
                for e in examples_by_family.get(family, []):
                    if e["variant"] == variant and any(re.search(x, e["line"]) for x in patterns):
                        examples.append({"line": e["line"], "facts": e["facts"]})
                        e["used"] = True
                listed = "; ".join(_describe(c) for c in codes)
                refs = sources + sorted({c["source"] for c in codes if c.get("source")} - set(sources))
                sig_id = f"{family}.code.{tid}" + (f".{variant}" if variant else "") + (".symptom" if role == "symptom" else "")
                if benign:
                    title = f"no failure: {t['title']}, a code its vendor calls informational"
                    explanation = (t["docs"].strip() + "\n\nThese codes are informational by the vendor's own "
                                   f"catalog, not failures: {listed}. Source: {', '.join(refs)}.")
                    fix = [t.get("benign_fix") or "Nothing failed: the vendor documents this code as informational."]
                else:
                    title = f"{family}: {t['title']}" + (" (the code alone, no message a signature knows)" if vtier == "support" else "")
                    explanation = (t["docs"].strip() + "\n\nThe codes of this table that point at "
                                   f"{family}: {listed}. Source: {', '.join(refs)}.")
                    # the variant's fixes, then a code's own (the first whose facts are known wins), the family's last
                    fix = vfix + [f for c in codes for f in c.get("fix", [])] + [fixes[family][0]]
                out.append({
                    "id": sig_id, "family": family,
                    "origin": "none" if benign else codes[0].get("origin") or t.get("origin") or fixes[family][1],
                    "frameworks": list(t.get("frameworks", [])), "role": role, "priority": priority,
                    "tier": vtier, **({"reach": "line"} if benign else {}),
                    "title": title,
                    "patterns": patterns,
                    "explanation": explanation,
                    "fix": fix,
                    "next_step": t["next_step"],
                    "references": refs,
                    "match": examples,
                    "no_match": list(t["no_match"]),
                })
            if not made:
                raise CodeTableError(f"{where}: family {family!r} has codes no template uses")
        unused = [e["line"] for es in examples_by_family.values() for e in es if not e.get("used")]
        if unused:
            raise CodeTableError(f"{where}: [[table.example]] lines no generated signature of their family and variant matches: {unused}")
    return out


def _describe(c: dict) -> str:
    ident = " / ".join(([str(c["number"])] if c.get("number") is not None else []) + list(c.get("names", []))[:2]
                       + [f"'{m}'" for m in c.get("messages", [])][:1])
    return f"{ident} ({c['meaning']}" + (f"; the vendor's action: {c['action']}" if c.get("action") else "") + ")"


_fixes: dict | None = None


def _family_fixes() -> dict:
    """family -> (fix, origin) from the wording fallback's table: one text per family, kept in one place."""
    global _fixes
    if _fixes is None:
        from signatures.fallback import TABLE as FALLBACK

        rows = tomllib.loads(FALLBACK.read_text(encoding="utf-8"))["family"]
        _fixes = {r["name"]: (r["fix"], r["origin"]) for r in rows}
    return _fixes
