"""Lint rules: their knowledge as data (rules/*.toml, one table per rule), their checks as code
registered by id. A rule without a check, or a check without a rule, is an error at load time."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from findings.model import ORIGINS, SEVERITIES

RULES_DIR = Path(__file__).with_name("rules")
FRAMEWORKS = ("triton", "cuda", "pallas", "nki")
_FIELDS = ("id", "framework", "severity", "origin", "family", "confidence", "summary", "what", "why",
           "example", "use_instead", "fix")


@dataclass(frozen=True)
class Rule:
    id: str
    framework: str
    severity: str          # the default; a check may lower it for one hit (and says why in the title)
    origin: str | None
    family: str | None
    confidence: float      # the probability that a hit is a real defect, as this project judges it
    summary: str           # one line
    what: str              # what it finds
    why: str               # why it matters
    example: str           # code it flags
    use_instead: str       # the same code, fixed
    fix: str               # what to do, one or two sentences
    references: tuple = ()
    source: str = ""       # the TOML file

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in _FIELDS} | {"references": list(self.references)}


class RuleError(ValueError):
    """A rules file that does not hold valid rules (names the file and the rule)."""


def load_rules(directory: Path = RULES_DIR) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for path in sorted(directory.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise RuleError(f"{path}: {e}") from None
        for i, entry in enumerate(data.get("rule", [])):
            rid = entry.get("id", f"#{i}")
            missing = [k for k in _FIELDS if k not in entry and k != "family"]
            if missing:
                raise RuleError(f"{path}: rule {rid} lacks {', '.join(missing)}")
            unknown = set(entry) - set(_FIELDS) - {"references"}
            if unknown:
                raise RuleError(f"{path}: rule {rid} has unknown keys {sorted(unknown)}")
            if not rid.startswith(f"lint.{entry['framework']}."):
                raise RuleError(f"{path}: rule id {rid} must start with lint.{entry['framework']}.")
            if entry["framework"] not in FRAMEWORKS or entry["severity"] not in SEVERITIES \
                    or entry["origin"] not in ORIGINS + ("",) or not 0 < float(entry["confidence"]) <= 1:
                raise RuleError(f"{path}: rule {rid}: framework, severity, origin or confidence out of range")
            if rid in rules:
                raise RuleError(f"{path}: rule {rid} defined twice")
            vals = {k: entry.get(k) for k in _FIELDS}
            vals["origin"] = vals["origin"] or None          # "" : a note about the reading, no origin
            rules[rid] = Rule(**vals, references=tuple(entry.get("references", ())), source=path.name)
    return rules


@dataclass
class Hit:
    """What a check returns: where (a node or a (line, col)), the title with its numbers, facts."""
    where: object
    title: str
    facts: dict = field(default_factory=dict)
    severity: str | None = None      # lower than the rule's default, when the check knows less
    fix: str | None = None           # a fix naming this hit's values, else the rule's
    also: list = field(default_factory=list)   # further places (nodes or (line, col))


CHECKS: dict[str, object] = {}


def check(rule_id: str):
    """Register the check function of a rule: fn(ctx) -> iterable of Hit."""
    def deco(fn):
        if rule_id in CHECKS:
            raise RuleError(f"check for {rule_id} registered twice")
        CHECKS[rule_id] = fn
        return fn
    return deco
