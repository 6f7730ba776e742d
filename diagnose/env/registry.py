"""The env check registry: each check is a pure function of a snapshot that yields hits; run_checks turns
hits into `findings.Finding` objects, one row per cause.

A check is registered with `@check(name, section, summary, family=..., origin=..., folds=(...))`; its id is
`env.<section>.<name>`. It yields `hit(...)` dicts. Grouping, so one cause gives one row:
- hits of one check with the same severity, title and fix but different GPUs become one finding that
  lists the GPUs (`facts.gpus`);
- `folds`: a check that explains others (no driver at all explains "cuInit failed" and "runtime error 35")
  absorbs their findings: they are listed in its `facts.also`, not shown as rows of their own.
A check that crashes on odd data becomes an `env.probe.check-crashed` finding, never a traceback.
"""
from __future__ import annotations

from typing import Callable, Iterable, NamedTuple

from findings.model import Evidence, Finding, severity_rank, sort_findings

SECTIONS = ("probe", "driver", "gpu", "toolkit", "libraries", "frameworks", "accelerators", "env", "host")


class Check(NamedTuple):
    id: str
    section: str
    summary: str
    family: str | None
    origin: str
    folds: tuple[str, ...]
    fn: Callable[[dict], Iterable[dict]]


CHECKS: list[Check] = []


def check(name: str, section: str, summary: str, family: str | None = None, origin: str = "environment",
          folds: tuple[str, ...] = ()):
    assert section in SECTIONS, section

    def register(fn):
        cid = f"env.{section}.{name}"
        assert all(c.id != cid for c in CHECKS), f"duplicate check id {cid}"
        CHECKS.append(Check(cid, section, summary, family, origin, tuple(folds), fn))
        return fn
    return register


def hit(severity: str, title: str, fix: str = "", why: str = "", gpu: dict | None = None,
        facts: dict | None = None, evidence: Iterable[str] = (), family: str | None = None,
        origin: str | None = None) -> dict:
    """One thing a check found. `gpu`: the GPU it is about (hits differing only by GPU are merged)."""
    return {"severity": severity, "title": title, "fix": fix, "why": why, "gpu": gpu, "facts": dict(facts or {}),
            "evidence": list(evidence), "family": family, "origin": origin}


def _gpu_names(gs: list[dict]) -> str:
    if len(gs) == 1:
        g = gs[0]
        return f"GPU {g.get('index', '?')} ({g.get('name', 'unknown')}, CC {g.get('compute_capability', '?')})"
    idx = ", ".join(str(g.get("index", "?")) for g in gs)
    kinds = sorted({f"{g.get('name', 'unknown')}, CC {g.get('compute_capability', '?')}" for g in gs})
    return f"GPUs {idx} ({len(gs)}x {kinds[0]})" if len(kinds) == 1 else f"GPUs {idx} ({'; '.join(kinds)})"


def run_checks(snap: dict, source: str = "") -> list[Finding]:
    """Every finding for this snapshot, worst first, one row per cause."""
    raw: dict[str, list[Finding]] = {}
    for c in CHECKS:
        try:
            hits = list(c.fn(snap) or ())
        except Exception as e:  # a malformed snapshot (hand-edited, fuzzed): say which check and why
            raw.setdefault("env.probe.check-crashed", []).append(Finding(
                id="env.probe.check-crashed", severity="warning", reader="env",
                title=f"check {c.id} could not read this snapshot: {type(e).__name__}: {e}"[:300],
                origin=None, fix="Record the snapshot again with `diagnose env --json`; if it was recorded "
                "by this version, report the snapshot as a bug.", facts={"section": "probe", "check": c.id}))
            continue
        groups: dict[tuple, list[dict]] = {}
        for h in hits:
            groups.setdefault((h["severity"], h["title"], h["fix"], h["why"]), []).append(h)
        for (severity, title, fix, why), hs in groups.items():
            gs = [h["gpu"] for h in hs if isinstance(h["gpu"], dict)]
            facts = {"section": c.section}
            for h in hs:
                for k, v in h["facts"].items():
                    if isinstance(v, dict) and isinstance(facts.get(k), dict):
                        facts[k] = {**facts[k], **v}
                    else:
                        facts.setdefault(k, v)
            if gs:
                facts["gpus"] = [g.get("index") for g in gs]
                title = f"{_gpu_names(gs)}: {title}"
            ev = []
            for h in hs:
                for text in h["evidence"]:
                    e = Evidence(text=str(text))        # the snapshot's key and value; the file is the report's
                    if e not in ev:
                        ev.append(e)
            raw.setdefault(c.id, []).append(Finding(
                id=c.id, severity=severity, reader="env", title=title, origin=hs[0]["origin"] or c.origin,
                family=hs[0]["family"] or c.family, evidence=ev, why=why, fix=fix, facts=facts))
    by_id = {c.id: c for c in CHECKS}
    folded: set[str] = set()
    for cid, fs in raw.items():
        c = by_id.get(cid)
        if not c or not fs:
            continue
        top = min(severity_rank(f.severity) for f in fs)
        for other in c.folds:                 # only what is no worse than the explaining finding
            take = [f for f in raw.get(other, []) if other != cid and severity_rank(f.severity) >= top]
            if take:
                fs[0].facts.setdefault("also", []).extend(f"{f.id}: {f.title}" for f in take)
                folded.update(id(f) for f in take)
        if fs[0].facts.get("also"):
            ids = sorted({a.split(":", 1)[0] for a in fs[0].facts["also"]})
            fs[0].why = (fs[0].why + " " if fs[0].why else "") + "Same cause, not shown apart: " + ", ".join(ids) + "."
    out = [f for fs in raw.values() for f in fs if id(f) not in folded]
    return sort_findings(out)


def snapshot_json(f: Finding) -> dict:
    """A finding as stored in a snapshot's `findings`: Finding.to_json() plus `section` and `message`
    (the title), the keys readers of schema diagnose.env/1 before 0.2 used."""
    d = f.to_json()
    d["section"] = f.facts.get("section", "")
    d["message"] = f.title
    return d


def worst(findings) -> str | None:
    ranks = [severity_rank(f.severity) for f in findings]
    return None if not ranks else ("error", "warning", "info")[min(ranks)]


def checks_markdown() -> str:
    """docs/env-checks.md: every check id, its section, summary, family and what it folds (generated)."""
    import diagnose.env  # noqa: F401  (registers every section)

    rows = ["# `diagnose env` checks", "",
            "Generated from the registry (`make env-doc`); a test keeps it equal to the code. Ids are",
            "`env.<section>.<name>`; `folds`: findings of those checks are listed in this one's `facts.also`",
            "(same cause, one row) when this one fires and they are no worse. Severities depend on the data:",
            "see each check's code in `diagnose/env/<section>.py` and its fixture in tests/test_checks.py.",
            "`env.probe.check-crashed` (a warning) is not a check: it says which check could not read an odd",
            "snapshot, instead of a traceback.", ""]
    for sec in SECTIONS:
        cs = [c for c in CHECKS if c.section == sec]
        if not cs:
            continue
        rows += [f"## {sec}", "", "| id | what | family | folds |", "|---|---|---|---|"]
        for c in cs:
            rows.append(f"| `{c.id}` | {c.summary} | {c.family or ''} | {', '.join(f'`{x}`' for x in c.folds)} |")
        rows.append("")
    return "\n".join(rows)
