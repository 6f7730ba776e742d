"""The diagnosis: plain, JSON-serialisable data that every report, the store and the TUI read.

The field names of `Diagnosis.to_json()` are a public contract (see docs/output.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from findings import Finding

SCHEMA = "diagnose.diagnosis/1"


@dataclass
class Line:
    line: int
    text: str


@dataclass
class ChainLink:
    line: int
    family: str
    signature: str
    role: str          # root | symptom | wrapper | benign | hint
    text: str


@dataclass
class Diagnosis:
    path: str
    family: str = "none"
    origin: str | None = None
    signature: str | None = None
    confidence: float = 0.0
    title: str = ""
    root: Line | None = None
    chain: list[ChainLink] = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    fact_text: dict = field(default_factory=dict)        # how the log wrote a fact ("2.26 GiB"), for reports
    fix: str = ""
    next_step: str = ""
    explanation: str = ""
    references: list[str] = field(default_factory=list)
    frameworks: list[str] = field(default_factory=list)
    evidence: list[Line] = field(default_factory=list)   # every line worth reading, root included
    env: list[str] = field(default_factory=list)          # what the environment snapshot added
    notes: list[str] = field(default_factory=list)        # other readings: numerics, capture, wrapped lines
    findings: list[Finding] = field(default_factory=list)  # what other readers found about the same task
    ecosystems: list[str] = field(default_factory=list)   # frameworks seen in the log, most specific first
    reasoning: list[str] = field(default_factory=list)    # conclusions of the reasoning rules that held
    lines: int | None = None                              # total lines, when counted (gz, stdin)
    bytes: int = 0
    error: str | None = None                              # the input could not be read in full

    def to_json(self) -> dict:
        # by hand: dataclasses.asdict deep-copies every value and took 0.3 ms a diagnosis
        d = {
            "path": self.path, "family": self.family, "origin": self.origin, "signature": self.signature,
            "confidence": self.confidence, "title": self.title,
            "root": {"line": self.root.line, "text": self.root.text} if self.root else None,
            "chain": [{"line": c.line, "family": c.family, "signature": c.signature, "role": c.role,
                       "text": c.text} for c in self.chain],
            "facts": dict(self.facts), "fact_text": dict(self.fact_text), "fix": self.fix, "next_step": self.next_step,
            "explanation": self.explanation, "references": list(self.references),
            "frameworks": list(self.frameworks),
            "evidence": [{"line": e.line, "text": e.text} for e in self.evidence],
            "env": list(self.env), "notes": list(self.notes),
            "findings": [f.to_json() for f in self.findings], "ecosystems": list(self.ecosystems),
            "reasoning": list(self.reasoning), "lines": self.lines, "bytes": self.bytes,
        }
        if self.error is not None:
            d["error"] = self.error
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Diagnosis":
        d = dict(d)
        d.pop("schema", None)
        root = d.pop("root", None)
        chain = [ChainLink(**c) for c in d.pop("chain", [])]
        evidence = [Line(**e) for e in d.pop("evidence", [])]
        found = [Finding.from_json(f) for f in d.pop("findings", None) or []]
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(root=Line(**root) if root else None, chain=chain, evidence=evidence, findings=found, **known)
