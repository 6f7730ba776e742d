"""`review_task(DIR)`: every reader over a task's parts, findings routed to the rubric's dimensions,
verdicts by the rubric's rules, findings that explain each other linked, and feedback to paste."""
from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from findings import Finding, sort_findings
from diagnose.review import readers
from diagnose.review.completeness import read_tests, review_completeness
from diagnose.review.discover import Parts, discover

RUBRIC = Path(__file__).with_name("rubric.toml")
VERDICTS = ("fail", "concern", "pass", "not assessable")
_RANK = {"fail": 0, "concern": 1, "pass": 2}


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and the entry."""


@dataclass
class Rubric:
    dimensions: list[dict]
    routes: list[dict]
    links: list[dict]
    source: str


def load_rubric(path=None) -> Rubric:
    path = Path(path or RUBRIC)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise RubricError(f"{path}: cannot read the rubric ({e})") from None
    dims = doc.get("dimension") or []
    if not dims:
        raise RubricError(f"{path}: no [[dimension]] tables")
    ids = set()
    for i, d in enumerate(dims):
        for k in ("id", "title"):
            if not isinstance(d.get(k), str):
                raise RubricError(f"{path}: dimension #{i + 1} has no {k!r}")
        ids.add(d["id"])
        d.setdefault("pass_from", [])
    for i, r in enumerate(doc.get("route") or []):
        if r.get("dimension") not in ids:
            raise RubricError(f"{path}: route #{i + 1} names dimension {r.get('dimension')!r}, not one of {sorted(ids)}")
        if r.get("cap") not in (None, "fail", "concern"):
            raise RubricError(f"{path}: route #{i + 1} cap {r['cap']!r} must be 'fail' or 'concern'")
    return Rubric(dims, doc.get("route") or [], doc.get("link") or [], str(path))


def _matches(sel: dict, f: Finding) -> bool:
    if sel.get("reader") and sel["reader"] != f.reader:
        return False
    fams, ids = sel.get("families"), sel.get("ids")
    if fams is None and ids is None:
        return True
    return bool((fams and f.family in fams) or (ids and any(fnmatch.fnmatchcase(f.id, g) for g in ids)))


@dataclass
class Dimension:
    id: str
    title: str
    verdict: str
    why: str
    findings: list[Finding] = field(default_factory=list)
    examined: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "verdict": self.verdict, "why": self.why,
                "findings": [f.to_json() for f in self.findings], "examined": self.examined,
                "feedback": self.feedback}


@dataclass
class Link:
    id: str
    text: str
    members: list[Finding]

    def to_json(self) -> dict:
        return {"id": self.id, "text": self.text,
                "members": [{"id": f.id, "where": f.where, "title": f.title} for f in self.members]}


@dataclass
class Review:
    task: str
    parts: Parts
    dimensions: list[Dimension]
    links: list[Link]
    readers: list[readers.ReaderResult]
    rubric: str

    @property
    def overall(self) -> str:
        vs = [d.verdict for d in self.dimensions]
        for v in ("fail", "concern"):
            if v in vs:
                return v
        return "pass" if "pass" in vs else "not assessable"

    def verdict(self, did: str) -> str:
        return next((d.verdict for d in self.dimensions if d.id == did), "not assessable")

    def to_json(self) -> dict:
        return {"schema": "diagnose.review/1", "task": self.task, "overall": self.overall, "rubric": self.rubric,
                "dimensions": [d.to_json() for d in self.dimensions], "links": [k.to_json() for k in self.links],
                "readers": [{"reader": r.reader, "status": r.status, "why": r.why} for r in self.readers],
                "parts": self.parts.to_json()}


def _evidence_source(examined: str) -> str:
    return examined.split(":", 1)[0].strip()


def _cap(s: str) -> str:
    """A sentence's first letter, unless it starts with code (an identifier with a dot, underscore or call)."""
    first = s.split(" ", 1)[0]
    return s if not first.isalpha() else s[:1].upper() + s[1:]


def _sentence(f: Finding, root: str) -> str:
    where = ""
    if f.evidence and f.evidence[0].file:
        e = f.evidence[0]
        where = f" ({os.path.relpath(e.file, root)}" + (f":{e.line}" if e.line else "") + ")"
    s = f"{_cap(f.title) if f.title else f.id}{where}."
    if f.fix:
        s += " " + _cap(f.fix.strip()).rstrip(".") + "."
    return s


def _judge(rubric: Rubric, results: list[readers.ReaderResult], root: str = ".") -> list[Dimension]:
    routed: dict[str, list[tuple[Finding, str | None]]] = {d["id"]: [] for d in rubric.dimensions}
    for res in results:
        for f in res.findings:
            route = next((r for r in rubric.routes if _matches(r, f)), None)
            if route:
                cap = route.get("verdict") or route.get("cap")
                if f.severity == "warning" and route.get("warnings") == "note":
                    cap = "note"
                routed[route["dimension"]].append((f, cap))
    examined = [(e, res.reader) for res in results for e in res.examined]
    unavailable = {res.reader: res.why for res in results if res.status in ("unavailable", "failed")}
    missing = {res.reader: res.why for res in results if res.status == "nothing-to-read"}
    dims = []
    for d in rubric.dimensions:
        items = routed[d["id"]]
        seen = [e for e, _ in examined if _evidence_source(e) in d["pass_from"]]
        worst, why = None, ""
        env_block = False
        for f, cap in items:
            if f.severity == "info" or cap == "note":
                continue
            v = "fail" if f.severity == "error" else "concern"
            if cap == "concern" and v == "fail":
                v = "concern"
            elif cap == "fail":               # a route that says what this finding means for the dimension
                v = "fail"
            if v == "fail" and f.origin == "environment" and d.get("environment_blocks"):
                env_block = True
                continue
            if worst is None or _RANK[v] < _RANK[worst]:
                worst, why = v, f.title
        fs = sort_findings([f for f, _ in items])
        if worst:
            verdict = worst
            why = d.get(f"{worst}_text", "") + (f" Chief finding: {why}." if why else "")
        elif env_block:
            verdict = "not assessable"
            why = ("The run failed for an environment reason, so the kernel itself was not judged: " +
                   next(f.title for f, _ in items if f.origin == "environment") + ".")
        elif seen:
            verdict, why = "pass", d.get("pass_text", "")
        else:
            verdict = "not assessable"
            lack = [missing.get(r) or unavailable.get(r) for r in d["pass_from"] if missing.get(r) or unavailable.get(r)]
            why = "; ".join(lack) if lack else f"no evidence for this dimension (needs: {', '.join(d['pass_from'])})"
        feedback = [_sentence(f, root) for f in fs if f.severity != "info" and (f, "note") not in items][:8]
        if verdict == "pass":
            feedback = [d.get("pass_text", "")] + [f"Checked: {e.split(': ', 1)[-1]}." for e in seen][:3]
        why = why.strip()
        dims.append(Dimension(d["id"], d["title"], verdict, why[:1].upper() + why[1:], fs, seen, feedback))
    return dims


def _links(rubric: Rubric, results) -> list[Link]:
    every = [f for r in results for f in r.findings if f.severity != "info"]
    out = []
    for spec in rubric.links:
        groups = []
        for member in spec.get("members", []):
            hit = [f for f in every if _matches(member, f)]
            if hit:
                groups.append(hit[0])
        if len(groups) >= int(spec.get("min", 2)):
            out.append(Link(spec["id"], spec.get("text", ""), groups))
    return out


def review_task(path, rubric=None, target: str | None = None) -> Review:
    rubric = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    parts = discover(path)
    snap = None
    results = []
    env = readers._safe("env", readers.read_env, parts.of("snapshot"))
    results.append(env)
    snap = env.extra.get("snapshot")
    results.append(readers._safe("log", readers.read_logs, parts.of("log"), snap))
    results.append(readers._safe("lint", readers.read_lint, parts.of("kernel"), target))
    tests = read_tests(parts.of("test"))
    spec_text = "\n".join(Path(p).read_text(encoding="utf-8", errors="replace") for p in parts.of("spec"))
    results.append(readers._safe("numerics", readers.read_numerics, parts.tensors, tests.tolerances, spec_text))
    results.append(readers._safe("timing", readers.read_timing, parts.of("benchmark"), parts.of("results"),
                                 parts.of("spec")))
    results.append(readers._safe("profile", readers.read_profile, parts.of("profile")))

    def _complete():
        fs, ex = review_completeness(parts.of("spec"), parts.of("test"), parts.of("kernel"))
        if not parts.of("spec"):
            return readers.ReaderResult("completeness", status="nothing-to-read", why="no spec or README in the task")
        return readers.ReaderResult("review", findings=fs, examined=ex)

    results.append(readers._safe("completeness", _complete))
    dims = _judge(rubric, results, parts.root)
    return Review(Path(path).name, parts, dims, _links(rubric, results), results, rubric.source)


def task_diagnosis(r: Review):
    """The review as one Diagnosis for a triage session: the task's deciding log diagnosis (the first with a
    failure, else the first), the review's verdicts as notes and its findings attached."""
    from diagnose.model import Diagnosis

    logs = next((x for x in r.readers if x.reader == "log"), None)
    ds = (logs.extra.get("diagnoses") if logs else None) or []
    d = next((x for x in ds if x.family not in ("none",)), ds[0] if ds else None)
    if d is None:
        d = Diagnosis(path=r.parts.root, family="unknown", title="no log in the task: judged from its other files",
                      error="no log or run output in the task")
    d = Diagnosis.from_json(d.to_json())
    d.path = r.parts.root
    d.notes = [f"review {dim.id}: {dim.verdict}: {dim.why}" for dim in r.dimensions] + list(d.notes)
    d.findings = [f for x in r.readers for f in x.findings if f.severity != "info"]
    d.facts = {**d.facts, "review": r.overall}
    return d
