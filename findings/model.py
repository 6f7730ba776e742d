"""`Finding` and `Evidence`: plain, JSON-serialisable data, the same for every reader."""
from __future__ import annotations

from dataclasses import dataclass, field

SCHEMA = "diagnose.finding/1"

# Ordered worst first. "error": the task fails or its claim is false; "warning": a concern a reviewer
# must weigh; "info": a fact worth knowing, never a failure on its own.
SEVERITIES = ("error", "warning", "info")

# The origins of shared/taxonomy.md, plus None where no origin applies (a benchmark-methodology note).
ORIGINS = ("kernel-logic", "runtime-assumption", "resource-limit", "environment", "hardware", "numerics")


@dataclass(frozen=True)
class Evidence:
    """Where a finding stands: a file and (1-based) line/column, and the text found there."""
    file: str = ""
    line: int | None = None
    col: int | None = None
    text: str = ""
    end_line: int | None = None

    def where(self) -> str:
        """`file:line:col`, as much of it as is known."""
        out = self.file or ""
        if self.line is not None:
            out += f":{self.line}"
            if self.col is not None:
                out += f":{self.col}"
        return out

    def to_json(self) -> dict:
        d = {"file": self.file, "line": self.line, "col": self.col, "text": self.text}
        if self.end_line is not None:
            d["end_line"] = self.end_line
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Evidence":
        return cls(file=str(d.get("file") or ""), line=d.get("line"), col=d.get("col"),
                   text=str(d.get("text") or ""), end_line=d.get("end_line"))


@dataclass
class Finding:
    """One thing a reader found.

    id        stable rule/check id, prefixed by its reader's area (`lint.triton.unmasked-load`,
              `env.driver.too-old`, `numerics.tail-tile`, `timing.no-sync`, `profile.bank-conflicts`)
    severity  one of SEVERITIES
    reader    which reader produced it: log | env | numerics | lint | timing | roofline | profile | review
    title     one line saying what was found, with its numbers
    origin    where the fault lives (ORIGINS), or None
    family    the taxonomy family, where one applies (numerics -> numerical-mismatch)
    evidence  the places (file:line and the text there); the first is the main one
    why       why it matters
    fix       what to do
    facts     typed values (sizes, limits, shapes, dtypes, ratios) behind the title
    confidence  0..1, the probability that the finding is right, where the reader can say
    """
    id: str
    severity: str
    reader: str
    title: str
    origin: str | None = None
    family: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    why: str = ""
    fix: str = ""
    facts: dict = field(default_factory=dict)
    confidence: float | None = None

    def __post_init__(self):
        if self.severity not in SEVERITIES:
            raise ValueError(f"finding {self.id}: severity {self.severity!r} is not one of {SEVERITIES}")
        if self.origin is not None and self.origin not in ORIGINS:
            raise ValueError(f"finding {self.id}: origin {self.origin!r} is not one of {ORIGINS}")

    @property
    def where(self) -> str:
        return self.evidence[0].where() if self.evidence else ""

    def to_json(self) -> dict:
        d = {"id": self.id, "severity": self.severity, "reader": self.reader, "title": self.title,
             "origin": self.origin, "family": self.family,
             "evidence": [e.to_json() for e in self.evidence], "why": self.why, "fix": self.fix,
             "facts": dict(self.facts)}
        if self.confidence is not None:
            d["confidence"] = self.confidence
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Finding":
        return cls(id=str(d["id"]), severity=str(d["severity"]), reader=str(d.get("reader") or ""),
                   title=str(d.get("title") or ""), origin=d.get("origin"), family=d.get("family"),
                   evidence=[Evidence.from_json(e) for e in d.get("evidence") or []],
                   why=str(d.get("why") or ""), fix=str(d.get("fix") or ""), facts=dict(d.get("facts") or {}),
                   confidence=d.get("confidence"))


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


def sort_findings(findings) -> list[Finding]:
    """Worst first, then by place (file, line), then id: a stable order for every report."""
    return sorted(findings, key=lambda f: (severity_rank(f.severity), f.where == "",
                                           f.evidence[0].file if f.evidence else "",
                                           (f.evidence[0].line or 0) if f.evidence else 0, f.id))
