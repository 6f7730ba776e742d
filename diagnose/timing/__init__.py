"""Benchmark fairness: what a task's timing code measures, and whether a claimed speed-up holds.

- `read(paths)`: a static read of benchmark scripts (Python via `ast`, CUDA C++ via tree-sitter, both
  from diagnose.source) against the rules in rules/*.toml -> `findings.Finding` (reader "timing").
- `diagnose.timing.results`: repeated measurements -> a speed-up with a bootstrap confidence interval.
- `diagnose.timing.probe`: run a task's own correctness check against trivial candidates (it runs code:
  only on request, in a subprocess with a timeout).

Rules are data (rules/python.toml, rules/cuda.toml): id, check, severity, evidence tier, texts, the
call names and thresholds the check uses, and the fixture pairs that show it (tests/fixtures/timing/;
`fixture` is a name or a list of names).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from findings import Evidence, Finding

RULES_DIR = Path(__file__).with_name("rules")
SEVERITIES = ("error", "warning", "info")
TIERS = ("hard", "support")


class TimingError(ValueError):
    """A rule file or an input that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Rule:
    id: str
    language: str
    check: str
    severity: str
    tier: str
    title: str
    why: str
    fix: str
    example: str = ""
    instead: str = ""
    fixture: str = ""
    params: dict = field(default_factory=dict)
    more_fixtures: tuple = ()        # further flawed/fair pairs (a case the first pair does not show)

    @property
    def fixtures(self) -> tuple:
        return ((self.fixture,) if self.fixture else ()) + self.more_fixtures


def load_rules(directory: Path = RULES_DIR) -> list[Rule]:
    rules = []
    for path in sorted(directory.glob("*.toml")):
        language = path.stem
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise TimingError(f"{path}: cannot read the rules ({e})") from None
        defaults = data.get("defaults", {}).get("params", {})
        for r in data.get("rule", []):
            rid = r.get("id", "?")
            if not rid.startswith("timing."):
                raise TimingError(f"{path}: rule {rid}: ids start with 'timing.'")
            if r.get("severity") not in SEVERITIES or r.get("tier") not in TIERS:
                raise TimingError(f"{path}: rule {rid}: severity must be one of {SEVERITIES}, tier one of {TIERS}")
            if r["tier"] == "support" and r["severity"] == "error":
                raise TimingError(f"{path}: rule {rid}: a support-tier signal cannot be an error on its own")
            params = {**defaults, **r.get("params", {})}
            fixtures = r.get("fixture", "")
            fixtures = [fixtures] if isinstance(fixtures, str) else list(fixtures)
            rules.append(Rule(id=rid, language=language, check=r["check"], severity=r["severity"], tier=r["tier"],
                              title=r["title"], why=" ".join(r["why"].split()), fix=" ".join(r["fix"].split()),
                              example=r.get("example", ""), instead=r.get("instead", ""),
                              fixture=fixtures[0] if fixtures else "", more_fixtures=tuple(fixtures[1:]),
                              params=params))
    ids = [r.id for r in rules]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise TimingError(f"{directory}: duplicate rule ids {sorted(dup)}")
    return rules


def _script_params(rules: list[Rule]) -> dict:
    merged: dict = {}
    for r in rules:
        for k, v in r.params.items():
            if isinstance(v, list):
                merged.setdefault(k, [])
                merged[k] = merged[k] + [x for x in v if x not in merged[k]]
            elif k not in merged:
                merged[k] = v
    return merged


def read_file(path, rules: list[Rule] | None = None, l2_bytes: float | None = None) -> list[Finding]:
    """Every rule's findings on one file (SourceError if it cannot be read or parsed)."""
    from diagnose.source import language_of, parse

    rules = load_rules() if rules is None else rules
    lang = language_of(path)
    src = parse(path)
    mine = [r for r in rules if r.language == lang]
    if lang == "python":
        from diagnose.timing.checks import CHECKS
        from diagnose.timing.pyscan import Script

        script = Script(src, _script_params(mine))
        out = []
        for rule in mine:
            params = dict(rule.params)
            if l2_bytes:
                params["l2_bytes"] = l2_bytes
            for hit in CHECKS[rule.check](script, params):
                out.append(_finding(rule, src, hit))
        return out
    from diagnose.timing import cudascan

    out = []
    for rule in mine:
        for hit in cudascan.CHECKS[rule.check](src, rule.params):
            out.append(_finding(rule, src, hit))
    return out


def _finding(rule: Rule, src, hit) -> Finding:
    line, col = src.loc(hit.node)
    end = None
    if hit.end_node is not None:
        end = src.loc(hit.end_node)[0]
    text = src.line(line).strip()
    try:
        title = rule.title.format(**hit.values)
    except (KeyError, IndexError):
        title = rule.title
    facts = {"tier": rule.tier, **hit.facts}
    evidence = [Evidence(file=src.path, line=line, col=col, text=text, end_line=end)]
    for node in getattr(hit, "more", ()):
        ln, cl = src.loc(node)
        evidence.append(Evidence(file=src.path, line=ln, col=cl, text=src.line(ln).strip()))
    return Finding(id=rule.id, severity=rule.severity, reader="timing", title=title, origin=None,
                   evidence=evidence,
                   why=rule.why, fix=rule.fix, facts=facts, confidence=hit.confidence)


def read(paths, l2_bytes: float | None = None):
    """Findings for many files, and the errors of those that could not be read: (findings, errors)."""
    from diagnose.source import SourceError

    rules = load_rules()
    findings, errors = [], []
    for p in paths:
        try:
            findings.extend(read_file(p, rules, l2_bytes))
        except SourceError as e:
            errors.append(str(e))
        except (RecursionError, MemoryError) as e:
            errors.append(f"{p}: too deeply nested or too large to read ({type(e).__name__}); the other files go on")
    return findings, errors


__all__ = ["Rule", "TimingError", "load_rules", "read", "read_file"]
