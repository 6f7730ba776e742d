"""A review as Markdown (what a reviewer pastes, wrapped at 80 columns) or JSON (schema diagnose.review/1)."""
from __future__ import annotations

import json
import os
import textwrap

from findings.render import md_escape
from diagnose.review.core import Review

MARK = {"pass": "PASS", "concern": "CONCERN", "fail": "FAIL", "not assessable": "NOT ASSESSABLE"}


def _rel(path: str, root: str) -> str:
    try:
        return os.path.relpath(path, root)
    except ValueError:
        return path


def _wrap(text: str, indent: str = "", first: str | None = None) -> list[str]:
    return textwrap.wrap(text, 80, initial_indent=first if first is not None else indent,
                         subsequent_indent=indent, break_on_hyphens=False) or [first or indent]


def markdown(r: Review) -> str:
    root = r.parts.root
    out = [f"# Review: {md_escape(r.task)} — {MARK[r.overall]}", ""]
    out += ["| dimension | verdict |", "|---|---|"]
    for d in r.dimensions:
        out.append(f"| {md_escape(d.title)} | {MARK[d.verdict]} |")
    out.append("")
    for d in r.dimensions:
        out.append(f"## {md_escape(d.title)}: {MARK[d.verdict]}")
        out.append("")
        out += _wrap(md_escape(d.why))
        shown = [f for f in d.findings if f.severity != "info"][:8]
        if shown:
            out += ["", "Notes (they do not change the verdict):" if d.verdict == "pass" else "Evidence:", ""]
            for f in shown:
                where = _rel(f.evidence[0].file, root) + (f":{f.evidence[0].line}" if f.evidence[0].line else "") \
                    if f.evidence and f.evidence[0].file else ""
                head = f"- {f.severity} `{f.id}`" + (f" at `{where}`" if where else "") + ": "
                out += _wrap(md_escape(f.title), "  ", head)
                if f.evidence and f.evidence[0].text:
                    out.append("  `" + f.evidence[0].text.strip()[:74].replace("`", "'") + "`")
        if d.feedback:
            out += ["", "Feedback:", ""]
            for s in d.feedback:
                out += _wrap(md_escape(s), "  ", "> ")
                out[-1] = out[-1]
        out.append("")
    if r.links:
        out += ["## Findings that explain each other", ""]
        for k in r.links:
            out += _wrap(md_escape(k.text), "  ", "- ")
            for f in k.members:
                where = _rel(f.where, root) if f.where else ""
                out += _wrap(f"`{f.id}`" + (f" ({md_escape(where)})" if where else ""), "    ", "  - ")
        out.append("")
    out += ["## What was read", ""]
    for role, files in r.parts.files.items():
        if files:
            out += _wrap(", ".join(md_escape(_rel(f, root)) for f in files), "  ", f"- {role}: ")
    for t in r.parts.tensors:
        out += _wrap(md_escape(f"{_rel(t.out, root)} vs {_rel(t.ref, root)}" +
                               (f" (baseline {_rel(t.baseline, root)})" if t.baseline else "")), "  ", "- tensors: ")
    for x in r.readers:
        if x.status in ("unavailable", "failed"):
            out += _wrap(md_escape(x.why), "  ", f"- not run: ")
    for s in r.parts.skipped[:10]:
        out += _wrap(md_escape(_rel(s, root)), "  ", "- skipped: ")
    return "\n".join(out).rstrip() + "\n"


def summary(reviews: list[Review], errors: list[str] = ()) -> str:
    dims = [d.id for d in reviews[0].dimensions] if reviews else []
    out = ["| task | overall | " + " | ".join(dims) + " |", "|---|---|" + "---|" * len(dims)]
    for r in reviews:
        out.append(f"| {md_escape(r.task)} | {MARK[r.overall]} | " +
                   " | ".join(MARK[r.verdict(d)] for d in dims) + " |")
    for e in errors:
        out.append(f"| {md_escape(e)} | ERROR | " + " | ".join("" for _ in dims) + " |")
    return "\n".join(out) + "\n"


def as_json(r: Review) -> str:
    return json.dumps(r.to_json(), indent=2, default=str)
