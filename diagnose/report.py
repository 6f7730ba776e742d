"""Reports of diagnoses: table (rich), JSON lines, CSV, Markdown, and the full `explain` view."""
from __future__ import annotations

import collections
import csv
import json
import sys

from diagnose.model import Diagnosis
from findings.render import csv_cell, md_code, md_escape, visible

CSV_FIELDS = ("path", "family", "origin", "signature", "confidence", "title", "root_line", "root_text",
              "facts", "fix", "next_step", "error")


def jsonl_line(d: Diagnosis) -> str:
    return json.dumps(d.to_json(), ensure_ascii=False, default=str) + "\n"


def write_jsonl(results: list[Diagnosis], out=sys.stdout) -> None:
    for d in results:
        out.write(jsonl_line(d))


def write_csv(results: list[Diagnosis], out=sys.stdout) -> None:
    """One row per log; every cell through csv_cell (no formula injection, no raw control characters)."""
    w = csv.writer(out)
    w.writerow(CSV_FIELDS)
    for d in results:
        w.writerow([csv_cell(v) for v in (
            d.path, d.family, d.origin or "", d.signature or "", f"{d.confidence:.2f}", d.title,
            d.root.line if d.root else "", d.root.text if d.root else "",
            json.dumps(d.facts, default=str), d.fix, d.next_step, d.error or "")])


def summary(results: list[Diagnosis]) -> tuple[collections.Counter, collections.Counter]:
    return (collections.Counter(d.family for d in results),
            collections.Counter(d.origin or "-" for d in results))


def write_markdown(results: list[Diagnosis], out=sys.stdout) -> None:
    fam, org = summary(results)
    out.write(f"# Diagnoses ({len(results)} logs)\n\n")
    out.write("| family | logs |\n|---|---:|\n" + "".join(f"| {k} | {v} |\n" for k, v in fam.most_common()))
    out.write("\n| origin | logs |\n|---|---:|\n" + "".join(f"| {k} | {v} |\n" for k, v in org.most_common()))
    out.write("\n| path | family | origin | signature | conf. | root line | fix |\n|---|---|---|---|---:|---|---|\n")
    for d in results:
        root = f"{d.root.line}: {md_code(d.root.text[:160])}" if d.root else md_escape(d.error or "")
        out.write(f"| {md_escape(d.path)} | {d.family} | {d.origin or ''} | {md_escape(d.signature or '')} | "
                  f"{d.confidence:.2f} | {root} | {md_escape(d.fix)} |\n")


def _text(s: str, style: str = ""):
    from rich.text import Text

    return Text(visible(s), style=style)


FAMILY_STYLE = {"none": "green", "unknown": "yellow"}


def write_table(results: list[Diagnosis], console=None) -> None:
    """One row per log, then the counts. The rows are laid out here, not by a rich Table: rich
    measured and wrapped every cell (20,000 rows took 16 s, 35x the JSON lines); the look is the same
    box, with column widths from the data and the terminal's width, and colour only on a terminal."""
    from rich.console import Console
    from rich.table import Table

    import os

    console = console or Console()
    paths = [d.path for d in results if d.path != "-"]
    # the common directory of all = that of the first and last in sort order (one pass, not n)
    base = os.path.commonpath([min(paths), max(paths)]) if len(paths) > 1 and \
        len({os.path.isabs(p) for p in (min(paths), max(paths))}) == 1 else ""
    if base and any(p == base for p in paths):
        base = os.path.dirname(base)
    cut = len(base.rstrip(os.sep)) + 1 if base else 0
    rows = []
    for d in results:
        root = f"{d.root.line}: {d.root.text.strip()}" if d.root else (f"error: {d.error}" if d.error else "")
        shown = d.path[cut:] if cut and d.path != "-" else d.path
        rows.append((visible(shown), visible(d.family), visible(d.origin or ""), f"{d.confidence:.2f}", visible(root)))
    _write_rows(console, rows, title=visible(f"in {base}/") if base else "")
    fam, org = summary(results)
    s = Table(title=f"{len(results)} logs", show_header=True, header_style="bold")
    s.add_column("family")
    s.add_column("logs", justify="right")
    s.add_column("origin")
    s.add_column("logs", justify="right")
    fams, orgs = fam.most_common(), org.most_common()
    for i in range(max(len(fams), len(orgs))):
        f = fams[i] if i < len(fams) else ("", "")
        o = orgs[i] if i < len(orgs) else ("", "")
        s.add_row(f[0], str(f[1]), o[0], str(o[1]))
    console.print(s)


_HEADERS = ("path", "family", "origin", "conf", "root line")


def _write_rows(console, rows: list[tuple[str, ...]], title: str) -> None:
    from rich.cells import cell_len, chop_cells, set_cell_size
    from rich.style import Style

    color = console.color_system if console.is_terminal and not console.no_color else None
    painted: dict[tuple[str, str], str] = {}

    def paint(text: str, style: str) -> str:
        if not (color and style):
            return text
        key = (text, style)
        if key not in painted:
            painted[key] = Style.parse(style).render(text, color_system=color)
        return painted[key]

    def width(t: str) -> int:             # ASCII (nearly every path and log line) needs no cell table
        return len(t) if t.isascii() else cell_len(t)

    def pad(t: str, w: int) -> str:
        return (t + " " * (w - len(t)) if len(t) <= w else t[:w]) if t.isascii() else set_cell_size(t, w)

    def fit(t: str, w: int) -> str:
        return t if width(t) <= w else pad(t, w - 1) + "…"

    longest = [max([len(h)] + [width(r[i]) for r in rows]) for i, h in enumerate(_HEADERS)]
    total = max(console.width, 60)
    fam_w, org_w, conf_w = min(longest[1], 24), min(longest[2], 20), 4
    while total - (fam_w + org_w + conf_w) - 16 < 36 and (fam_w > 10 or org_w > 10):
        fam_w, org_w = max(10, fam_w - 2), max(10, org_w - 2)       # a narrow terminal: cut the labels first
    rest = max(20, total - (fam_w + org_w + conf_w) - 16)          # 16: six bars and the padding
    path_w = min(longest[0], max(12, rest * 2 // 5))
    root_w = max(8, min(longest[4], rest - path_w))
    widths = (path_w, fam_w, org_w, conf_w, root_w)

    def rule(left, fill, mid, right) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right + "\n"

    out = []
    if title:
        out.append(fit(title, total) + "\n")
    out.append(rule("┏", "━", "┳", "┓"))
    out.append("┃ " + " ┃ ".join(paint(pad(h, w), "bold") for h, w in zip(_HEADERS, widths)) + " ┃\n")
    out.append(rule("┡", "━", "╇", "┩"))
    blank = [" " * w for w in widths[1:]]
    write = console.file.write
    for path, family, origin, conf, root in rows:
        pieces = [path] if width(path) <= path_w else chop_cells(path, path_w)     # the path folds
        out.append(f"│ {pad(pieces[0], path_w)} │ {paint(pad(fit(family, fam_w), fam_w), FAMILY_STYLE.get(family, 'bold red'))}"
                   f" │ {pad(fit(origin, org_w), org_w)} │ {conf.rjust(conf_w)} │ {pad(fit(root, root_w), root_w)} │\n")
        for p in pieces[1:]:
            out.append(f"│ {pad(p, path_w)} │ " + " │ ".join(blank) + " │\n")
        if len(out) > 4096:
            write("".join(out))
            out = []
    out.append(rule("└", "─", "┴", "┘"))
    write("".join(out))
    console.file.flush()


def _context_lines(path: str, wanted: set[int], around: int = 2) -> dict[int, str]:
    """The wanted lines with `around` lines of context, read in one streaming pass."""
    from signatures.matcher import Matcher
    from signatures.normalise import last_segment, normalise_chunk

    keep = set()
    for n in wanted:
        keep.update(range(max(1, n - around), n + around + 1))
    out: dict[int, str] = {}
    if not keep or path == "-":
        return out
    last = max(keep)
    try:
        with Matcher.open(path) as f:
            n = 0
            for chunk in Matcher.chunks(f):
                for raw in normalise_chunk(chunk).split(b"\n")[:-1]:
                    n += 1
                    if n in keep:
                        out[n] = last_segment(raw)[:400].decode("utf-8", "replace").rstrip()
                    if n >= last:
                        return out
    except (OSError, EOFError):
        pass
    return out


def write_explain(d: Diagnosis, console=None, log_path: str | None = None) -> None:
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    head = Text()
    head.append(f"{d.family}", style=FAMILY_STYLE.get(d.family, "bold red"))
    head.append(f"  origin: {d.origin or '-'}  signature: {d.signature or '-'}  confidence: {d.confidence:.2f}\n")
    head.append(visible(d.title), style="bold")
    if d.error:
        head.append(f"\ninput: {visible(d.error)}", style="yellow")
    console.print(Panel(head, title=Text(visible(d.path)), title_align="left"))

    evidence = {e.line for e in d.evidence} | ({d.root.line} if d.root else set())
    ctx = _context_lines(log_path or d.path, set(sorted(evidence)[:30]))
    if ctx:
        body = Text()
        prev = None
        for n in sorted(ctx):
            if prev is not None and n != prev + 1:
                body.append("   ⋮\n", style="dim")
            prev = n
            is_root = d.root is not None and n == d.root.line
            style = "bold red" if is_root else ("yellow" if n in evidence else "dim")
            body.append(f"{'▶' if is_root else ' '}{n:>7} │ ", style="dim" if not is_root else "bold red")
            body.append(visible(ctx[n]) + "\n", style=style)
        console.print(Panel(body, title="evidence (▶ root)", title_align="left"))

    if d.chain:
        t = Table(title="cascade (root → symptoms)", title_justify="left", show_header=True, header_style="bold",
                  expand=True)
        for c in ("line", "role", "family", "signature"):
            t.add_column(c, no_wrap=True)
        t.add_column("text", overflow="ellipsis", no_wrap=True, ratio=1, min_width=20)
        for link in d.chain[:20]:
            t.add_row(str(link.line), link.role, link.family, link.signature, Text(visible(link.text.strip())))
        console.print(t)

    parts = []
    if d.facts:
        ft = Table(show_header=False, box=None, padding=(0, 1))
        from signatures.facts import render

        for k, v in d.facts.items():
            ft.add_row(Text(k, style="cyan"), Text(visible(render(k, v))))
        parts.append(Panel(ft, title="facts", title_align="left"))
    for label, text in (("why", d.explanation), ("fix", d.fix), ("next step", d.next_step)):
        if text:
            parts.append(Panel(Text(visible(text)), title=label, title_align="left"))
    if d.env:
        parts.append(Panel(Text("\n".join(visible(e) for e in d.env)), title="environment", title_align="left"))
    if d.notes:
        parts.append(Panel(Text("\n".join(visible(e) for e in d.notes)), title="notes", title_align="left"))
    if d.references:
        parts.append(Panel(Text(visible("\n".join(d.references))), title="references", title_align="left"))
    console.print(Group(*parts))
