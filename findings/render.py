"""Findings rendered one way for every reader: a text block at 80 columns, JSON lines, Markdown, SARIF 2.1.0."""
from __future__ import annotations

import json
import textwrap

from findings.model import Finding, sort_findings

# One escaper per output format for the whole project: terminal (`visible`), Markdown (`md_escape`,
# `md_code`, `md_code_block`) and CSV (`csv_cell`). Every name, path and log line goes through one.

_SAFE = {0x09, 0x0A}
_VISIBLE = {o: (f"\\x{o:02x}" if o != 0x1B else "\\e")
            for o in list(range(0x20)) + list(range(0x7F, 0xA0)) if o not in _SAFE}


def visible(text: str) -> str:
    """Control characters (ESC, BEL, CR, C1, DEL) made visible, so log text can never drive a terminal."""
    text = str(text)
    return text if text.isprintable() else text.translate(_VISIBLE)      # isprintable: one C pass


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|~"})


def md_escape(text: str) -> str:
    """Markdown-safe inline text: emphasis, code, links, tables and HTML cannot start (backslash, backtick,
    * _ [ ] < > | ~ escaped; a leading # or list marker too); newlines become spaces; control characters
    visible. Plain punctuation stays as it is, so the text still reads well where it is pasted unrendered."""
    out = visible(str(text).replace("\r", " ").replace("\n", " ")).translate(_MD_SPECIAL)
    if out[:1] in "#+-=" and out:
        out = "\\" + out
    return out


def _longest_run(text: str, ch: str = "`") -> int:
    best = run = 0
    for c in text:
        run = run + 1 if c == ch else 0
        best = max(best, run)
    return best


def md_code(text: str) -> str:
    """Text as an inline code span that it cannot end early (a fence longer than any backtick run in
    it); pipes escaped for tables (GFM honours \\| inside code spans), newlines become spaces."""
    t = visible(str(text).replace("\r", " ").replace("\n", " ")).replace("|", "\\|")
    fence = "`" * (_longest_run(t) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") or not t.strip() else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def md_code_block(text: str) -> str:
    """Lines as a fenced code block that no line in it can close."""
    t = visible(str(text)) if "\n" not in str(text) else "\n".join(visible(x) for x in str(text).split("\n"))
    fence = "`" * max(3, _longest_run(t) + 1)
    return f"{fence}\n{t}\n{fence}\n"


_CSV_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value) -> str:
    """A CSV cell a spreadsheet will not run: one starting with = + - @ (or tab, CR) gets a leading '
    (the OWASP advice for formula injection); control characters are made visible."""
    t = "" if value is None else str(value)
    if t.startswith(_CSV_FORMULA):
        t = "'" + t
    return visible(t)


def text_block(f: Finding, width: int = 80) -> str:
    """`file:line:col  severity  id` then the title, the source line, why and fix, wrapped to width."""
    wrap = lambda s, ind="    ": textwrap.fill(s, width, initial_indent=ind, subsequent_indent=ind)  # noqa: E731
    head = "  ".join(x for x in (f.where, f.severity, f.id) if x)
    if len(head) > width and f.where:          # a long path: the place alone, then severity and id
        head = f.where + "\n" + wrap("  ".join(x for x in (f.severity, f.id) if x))
    lines = [head, wrap(f.title)]
    if f.evidence and f.evidence[0].text:
        lines.append("    | " + f.evidence[0].text.strip()[: width - 6])
    if f.why:
        lines.append(wrap("why: " + f.why))
    if f.fix:
        lines.append(wrap("fix: " + f.fix))
    return "\n".join(lines)


def text(findings, width: int = 80) -> str:
    return "\n\n".join(text_block(f, width) for f in sort_findings(findings))


def table(findings, width: int = 80) -> str:
    """One line per finding, `file:line:col  S  id  title` (S: E/W/I), the title cut to the width;
    when the place and id leave too little room, the title goes on the next line, indented."""
    rows = []
    for f in sort_findings(findings):
        head = f"{f.where}  {f.severity[0].upper()}  {f.id}"
        if len(head) > width:
            rows.append(f.where)
            head = f"   {f.severity[0].upper()}  {f.id}"
        room = width - len(head) - 2
        if room < 30:
            rows.append(head)
            head, room = "   ", width - 5
        title = f.title if len(f.title) <= room else f.title[: room - 1] + "…"
        rows.append(f"{head}  {title}")
    return "\n".join(rows)


def jsonl(findings) -> str:
    return "".join(json.dumps(f.to_json(), ensure_ascii=False) + "\n" for f in sort_findings(findings))


def markdown(findings) -> str:
    rows = ["| severity | where | id | finding |", "|---|---|---|---|"]
    for f in sort_findings(findings):
        rows.append(f"| {f.severity} | {md_escape(f.where)} | {md_escape(f.id)} | {md_escape(f.title)} |")
    return "\n".join(rows) + "\n"


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def sarif(findings, tool: str = "diagnose", version: str = "", rules: dict | None = None) -> dict:
    """A SARIF 2.1.0 log: one run, the rules that fired, one result per finding."""
    findings = sort_findings(findings)
    rules = rules or {}
    ids = sorted({f.id for f in findings} | set(rules))

    def rule(i):
        meta = rules.get(i, i)
        if isinstance(meta, str):       # id -> a one-line description
            return {"id": i, "shortDescription": {"text": meta}}
        # id -> {"short": ..., "full": ..., "help": ..., "level": ...}: full SARIF rule metadata
        out = {"id": i, "shortDescription": {"text": meta.get("short") or i}}
        if meta.get("full"):
            out["fullDescription"] = {"text": meta["full"]}
        if meta.get("help"):
            out["help"] = {"text": meta["help"]}
        if meta.get("level"):
            out["defaultConfiguration"] = {"level": _SARIF_LEVEL.get(meta["level"], "warning")}
        return out

    driver = {"name": tool, "version": version, "informationUri": "https://example.invalid/diagnose",
              "rules": [rule(i) for i in ids]}
    results = []
    for f in findings:
        r = {"ruleId": f.id, "level": _SARIF_LEVEL[f.severity],
             "message": {"text": f.title + (f" Fix: {f.fix}" if f.fix else "")}}
        locs = []
        for e in f.evidence:
            if not e.file:
                continue
            region = {}
            if e.line:
                region["startLine"] = e.line
                if e.col:
                    region["startColumn"] = e.col
                if e.end_line:
                    region["endLine"] = e.end_line
            loc = {"physicalLocation": {"artifactLocation": {"uri": e.file}}}
            if region:
                loc["physicalLocation"]["region"] = region
            locs.append(loc)
        if locs:
            r["locations"] = locs
        results.append(r)
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "results": results}]}
