"""Run the registered checks over files: parse once (diagnose.source), build a context per file,
turn each check's hits into `Finding`s carrying the rule's why and fix."""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from diagnose.lint.registry import CHECKS, Hit, Rule, RuleError, load_rules
from diagnose.source import CUDA_SUFFIXES, PYTHON_SUFFIXES, SourceError, language_of
from findings import Evidence, Finding, sort_findings

_SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".mypy_cache", ".pytest_cache"}
SUPPRESS = "lint: ignore"          # `# lint: ignore[ID]` (or bare, for every rule) on the flagged line


@lru_cache(maxsize=1)
def rules() -> dict[str, Rule]:
    """Every rule, loaded once; fails if a rule has no check or a check has no rule."""
    from diagnose.lint import cuda, nki, pallas, triton  # noqa: F401  (registers the checks)

    rs = load_rules()
    missing = sorted(set(rs) - set(CHECKS))
    orphans = sorted(set(CHECKS) - set(rs))
    if missing or orphans:
        raise RuleError(f"rules without a check: {missing}; checks without a rule: {orphans}")
    return rs


@lru_cache(maxsize=1)
def targets() -> dict:
    return tomllib.loads(Path(__file__).with_name("targets.toml").read_text(encoding="utf-8"))


def target_names() -> list[str]:
    return sorted(targets()["target"], key=lambda s: int(s.split("_")[1]))


def resolve_target(name: str | None) -> tuple[str, dict]:
    t = targets()
    name = name or t["default"]
    if name not in t["target"]:
        raise ValueError(f"unknown target {name!r}: one of {', '.join(target_names())}")
    return name, t["target"][name]


@dataclass
class LintReport:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)    # inputs that could not be read or parsed
    files: int = 0

    @property
    def has_error(self) -> bool:
        return any(f.severity == "error" for f in self.findings)


def iter_files(paths) -> tuple[list[Path], list[str]]:
    """Kernel source files under paths (a file given by name is taken whatever its suffix is not:
    then it is an error), sorted; and the errors for paths that do not exist."""
    files, errors = [], []
    for p in map(Path, paths):
        if p.is_dir():
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for n in sorted(names):
                    if n.lower().endswith(PYTHON_SUFFIXES + CUDA_SUFFIXES):
                        files.append(Path(root) / n)
        elif p.exists():
            if language_of(p) is None:
                errors.append(f"{p}: not a kernel source file (lint reads "
                              f"{', '.join(PYTHON_SUFFIXES + CUDA_SUFFIXES)})")
            else:
                files.append(p)
        else:
            errors.append(f"{p}: no such file or directory")
    return files, errors


def shown_path(p: Path) -> str:
    """A path as a reviewer reads it: relative to the working directory when it lies under it."""
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve())) if p.is_absolute() else str(p)
    except (ValueError, OSError):
        return str(p)


def lint_paths(paths, target: str | None = None, select=None) -> LintReport:
    """Lint every kernel file under paths; unreadable files become errors and the rest go on.
    Findings name files relative to the working directory when they lie under it."""
    files, errors = iter_files(paths)
    files = [Path(shown_path(f)) for f in files]
    report = LintReport(errors=errors)
    for f in files:
        try:
            report.findings.extend(lint_file(f, target=target, select=select))
            report.files += 1
        except SourceError as e:
            report.errors.append(str(e))
    report.findings = sort_findings(report.findings)
    return report


def lint_file(path, data: bytes | None = None, target: str | None = None, select=None) -> list[Finding]:
    """The findings of one file (SourceError if it cannot be read or parsed)."""
    from diagnose import source

    rs = rules()
    tname, tinfo = resolve_target(target)
    src = source.parse(path, data)
    if language_of(path) == "python":
        from diagnose.lint.pyctx import PyContext

        ctx = PyContext(src, tname, tinfo, targets())
        frameworks = ctx.frameworks
    else:
        from diagnose.lint.cudactx import CudaContext

        ctx = CudaContext(src, tname, tinfo, targets())
        frameworks = {"cuda"}
    out = []
    for rid, rule in rs.items():
        if rule.framework not in frameworks or (select and not any(rid.startswith(s) for s in select)):
            continue
        for hit in CHECKS[rid](ctx) or ():
            f = _finding(rule, hit, ctx)
            if f is not None:
                out.append(f)
    return _dedupe(out)


def _loc(ctx, where) -> tuple[int, int]:
    if isinstance(where, tuple):
        return where
    return ctx.src.loc(where)


def _finding(rule: Rule, hit: Hit, ctx) -> Finding | None:
    line, col = _loc(ctx, hit.where)
    text = ctx.src.line(line)
    if SUPPRESS in text:
        tail = text.split(SUPPRESS, 1)[1]
        if not tail.startswith("[") or rule.id in tail.split("]")[0]:
            return None
    ev = [Evidence(ctx.src.path, line, col, text.strip())]
    for extra in hit.also:
        l2, c2 = _loc(ctx, extra)
        ev.append(Evidence(ctx.src.path, l2, c2, ctx.src.line(l2).strip()))
    return Finding(id=rule.id, severity=hit.severity or rule.severity, reader="lint", title=hit.title,
                   origin=rule.origin, family=rule.family, evidence=ev, why=rule.why.strip(),
                   fix=(hit.fix or rule.fix).strip(), facts={"framework": rule.framework, **hit.facts},
                   confidence=rule.confidence)


def _dedupe(found: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in found:
        key = (f.id, f.where)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def explain_rule(rule_id: str) -> str:
    """The docs of one rule, as text (ruff's sections: what it finds, why, example, use instead, fix)."""
    rs = rules()
    if rule_id not in rs:
        close = [r for r in rs if rule_id in r]
        raise KeyError(f"no rule {rule_id!r}" + (f"; did you mean {', '.join(close[:5])}?" if close else
                                                 "; `diagnose lint --rules` lists them"))
    r = rs[rule_id]
    parts = [r.id, f"({r.framework}, {r.severity}, origin {r.origin or '-'}"
             + (f", family {r.family}" if r.family else "") + f", confidence {r.confidence:.2f})",
             "", r.summary, "", "What it finds", _prose(r.what), "", "Why it matters", _prose(r.why),
             "", "Example", _indent(r.example), "", "Use instead", _indent(r.use_instead), "", "Fix",
             _prose(r.fix)]
    if r.references:
        parts += ["", "References"] + [f"    {x}" for x in r.references]
    return "\n".join(parts) + "\n"


def _prose(s: str, width: int = 80) -> str:
    """Paragraphs re-wrapped to the width, indented by four."""
    import textwrap

    paras = [" ".join(p.split()) for p in s.strip().split("\n\n")]
    return "\n\n".join(textwrap.fill(p, width, initial_indent="    ", subsequent_indent="    ") for p in paras)


def _indent(s: str) -> str:
    return "\n".join(("    " + line).rstrip() for line in s.strip("\n").splitlines())


__all__ = ["Hit", "LintReport", "explain_rule", "lint_file", "lint_paths", "rules", "targets"]
