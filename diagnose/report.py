"""Reports of diagnoses: table (rich), JSON lines, CSV, Markdown, and the full `explain` view."""
from __future__ import annotations

import collections
import csv
import json
import sys

from diagnose.model import Diagnosis
from findings.render import csv_cell, visible
from signatures.normalise import strip_prefix
from signatures.taxonomy import is_not_gpu

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


def _md(text: str) -> str:
    """Untrusted text in a Markdown cell: control characters visible, then backticks, pipes and HTML
    escaped (findings.render.md_escape, the one escaper)."""
    from findings.render import md_escape

    return md_escape(visible(text))


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
        root = f"{d.root.line}: {_md(d.root.text.strip()[:160])}" if d.root else _md(d.error or "")
        out.write(f"| {_md(d.path)} | {d.family} | {d.origin or ''} | {_md(d.signature or '')} | "
                  f"{d.confidence:.2f} | {root} | {_md(d.fix)} |\n")


def _text(s: str, style: str = ""):
    from rich.text import Text

    return Text(visible(s), style=style)


FAMILY_STYLE = {"none": "green", "unknown": "bold yellow"}
LOW_CONFIDENCE = 0.6


def family_label(d: Diagnosis) -> tuple[str, str]:
    """The family as the table shows it, and its style: a miss must not look like a true negative.

    `unknown?` a failure nothing explains; `~oom?` a guess from the wording (no signature); `oom?`
    a signature diagnosis with confidence under 0.6; `none?` a `none` that is no surer than that
    (its kind's measured confidence, diagnose/confidence.toml)."""
    sig = d.signature or ""
    if is_not_gpu(d.family, sig):
        return "unknown", "yellow"          # a known failure, not a GPU one (not-gpu.*: host RAM)
    if d.family == "unknown":
        return "unknown?", "bold yellow"
    if sig.startswith("fallback."):
        return f"~{d.family}?", "yellow"
    if d.confidence < LOW_CONFIDENCE:
        return f"{d.family}?", "yellow"
    return d.family, FAMILY_STYLE.get(d.family, "bold red")


def shorten_left(text: str, width: int) -> str:
    """'runs/2024/task-0042/output.log' -> '…task-0042/output.log': the end tells tasks apart."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[-width:]
    return "…" + text[-(width - 1):]


def _sig_or_title(d: Diagnosis) -> str:
    sig = d.signature or ""
    if sig.startswith(d.family + "."):
        sig = sig[len(d.family) + 1:]          # the family is in its own column
    if sig.startswith("fallback."):
        return "guessed from the wording; no signature"
    if d.family == "unknown":
        return d.title or "a failure no signature explains"
    return sig or d.title


def write_table(results: list[Diagnosis], console=None) -> None:
    """Two lines a log: path (shortened from the left), family (marked when unsure), confidence,
    signature (origin too on wide terminals); then the root line with the whole width."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    import os

    console = console or Console()
    width = max(60, console.width or 80)
    paths = [d.path for d in results if d.path != "-"]
    # the common directory of all = that of the first and last in sort order (one pass, not n)
    base = os.path.commonpath([min(paths), max(paths)]) if len(paths) > 1 and \
        len({os.path.isabs(p) for p in (min(paths), max(paths))}) == 1 else ""
    if base and any(p == base for p in paths):
        base = os.path.dirname(base)
    cut = len(base.rstrip(os.sep)) + 1 if base else 0        # relpath for paths under base, without its cost
    shown = [d.path[cut:] if cut and d.path != "-" and d.path.startswith(base) else
             (os.path.relpath(d.path, base) if base and d.path != "-" else d.path) for d in results]
    labels = [family_label(d) for d in results]
    fam_w = max([len(label) for label, _ in labels] + [6])
    wide = width >= 110
    org_w = max([len(d.origin or "-") for d in results] + [6]) if wide else 0
    path_w = min(max([len(p) for p in shown] + [4]), max(16, (width - fam_w - org_w - 8) // 2))
    if base:
        console.print(Text(f"in {base}/", style="bold"))
    head = Text(f"{'path':<{path_w}} {'family':<{fam_w}} conf " + (f"{'origin':<{org_w}} " if wide else "")
                + "signature / title", style="bold")
    console.print(head, no_wrap=True, overflow="ellipsis")
    rest = width - path_w - fam_w - org_w - (8 if wide else 7)
    # The rows are written as text, not one console.print each: rich took 16 s for 20,000 rows (35x
    # the JSON lines). Same layout, same cropping ("…" at the terminal's width), colour only on a terminal.
    paint = _painter(console)
    crop = _cropper(width)
    out = []
    for d, p, (label, style) in zip(results, shown, labels):
        conf = f"{d.confidence:.2f}"
        cells = [(f"{visible(shorten_left(p, path_w)):<{path_w}} ", ""), (f"{label:<{fam_w}} ", style),
                 (f"{conf:>4} ", "yellow" if d.confidence < LOW_CONFIDENCE else "")]
        if wide:
            cells.append((f"{d.origin or '-':<{org_w}} ", "dim"))
        cells.append((visible(_sig_or_title(d))[:max(rest, 8)], "cyan"))
        out.append(paint(crop(cells)))
        root = f"{d.root.line}: {strip_prefix(d.root.text).strip()}" if d.root else (f"error: {d.error}" if d.error else "")
        if root:
            line = visible(root)
            line = line if len(line) <= width - 4 else line[:width - 5] + "…"
            out.append(paint(crop([("    " + line, "dim")])))
        if len(out) >= 4096:
            console.file.write("".join(out))
            out = []
    console.file.write("".join(out))
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
    unsure = sum(1 for label, _ in labels if label.endswith("?"))
    if unsure:
        console.print(Text(f"{unsure} marked ?: unknown, a wording guess, or confidence under {LOW_CONFIDENCE} (a `none?` may be a missed failure): "
                           "read their root lines", style="yellow"))


def _cropper(width: int):
    """cells [(text, style)] cut to `width` terminal cells with a final "…", as rich's
    overflow="ellipsis" crops a line."""
    from rich.cells import cell_len, set_cell_size

    def crop(cells):
        whole = "".join(t for t, _ in cells)
        if len(whole) <= width and whole.isascii() and "\t" not in whole:     # the usual line: as it is
            return cells
        if "\t" in whole:          # tabs to 8-column stops of the whole line, as rich does
            expanded, col = [], 0
            for t, st in cells:
                t = (" " * col + t).expandtabs(8)[col:] if "\t" in t else t
                expanded.append((t, st))
                col += len(t) if t.isascii() else cell_len(t)
            cells = expanded
        total = sum(len(t) if t.isascii() else cell_len(t) for t, _ in cells)
        if total <= width:
            return cells
        out, room = [], width - 1
        for t, st in cells:
            n = len(t) if t.isascii() else cell_len(t)
            if n <= room:
                out.append((t, st))
                room -= n
                continue
            if room > 0:
                out.append((t[:room] if t.isascii() else set_cell_size(t, room), st))
            out.append(("…", st))
            return out
        return out
    return crop


def _painter(console):
    """cells -> one line of text, with each style's escape codes when the console is a colour terminal."""
    from rich.style import Style

    color = console.color_system if console.is_terminal and not console.no_color else None
    codes: dict[str, tuple[str, str]] = {}

    def paint(cells) -> str:
        if color is None:
            return "".join(t for t, _ in cells) + "\n"
        parts = []
        for t, st in cells:
            if st and t:
                if st not in codes:
                    on, _, off = Style.parse(st).render("\0", color_system=color).partition("\0")
                    codes[st] = (on, off)
                on, off = codes[st]
                parts.append(on + t + off)
            else:
                parts.append(t)
        return "".join(parts) + "\n"
    return paint


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
    """One diagnosis in full, readable at 80 columns: header, evidence in context (wrapped under its
    line number), the cascade (one link a line, its text below), facts, reasoning, fix, next step."""
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from signatures.facts import render

    console = console or Console()
    width = max(60, console.width or 80)
    label, style = family_label(d)
    head = Text()
    head.append(label, style=style)
    head.append(f"  origin: {d.origin or '-'}  confidence: {d.confidence:.2f}\n")
    head.append(f"signature: {visible(d.signature or '-')}")
    if d.ecosystems:
        head.append(f"  log: {', '.join(d.ecosystems)}", style="dim")
    head.append("\n")
    head.append(visible(d.title), style="bold")
    if d.error:
        head.append(f"\ninput: {visible(d.error)}", style="yellow")
    console.print(Panel(head, title=Text(visible(shorten_left(d.path, width - 8))), title_align="left"))

    evidence = {e.line for e in d.evidence} | ({d.root.line} if d.root else set())
    ctx = _context_lines(log_path or d.path, set(sorted(evidence)[:30]))
    if ctx:
        body = Table(show_header=False, box=None, padding=0, expand=True)
        body.add_column(no_wrap=True)
        body.add_column(overflow="fold", ratio=1)
        prev = None
        for n in sorted(ctx):
            if prev is not None and n != prev + 1:
                body.add_row(Text("      ⋮ ", style="dim"), Text(""))
            prev = n
            is_root = d.root is not None and n == d.root.line
            style = "bold red" if is_root else ("yellow" if n in evidence else "dim")
            body.add_row(Text(f"{'▶' if is_root else ' '}{n:>6} │ ", style="bold red" if is_root else "dim"),
                         Text(visible(ctx[n]), style=style))
        console.print(Panel(body, title="evidence (▶ root)", title_align="left"))

    if d.chain:
        t = Text()
        for link in d.chain[:20]:
            mark = "▶" if link.role == "root" else " "
            t.append(f"{mark}{link.line:>6}  ", style="bold red" if link.role == "root" else "dim")
            t.append(f"{link.role:<9} ", style="bold" if link.role == "root" else "")
            if not link.signature.startswith(link.family + "."):
                t.append(f"{link.family}  ")
            t.append(visible(link.signature) + "\n", style="cyan")
            text = visible(link.text.strip())
            room = width - 14
            t.append("         " + (text if len(text) <= room else text[:room - 1] + "…") + "\n", style="dim")
        t.rstrip()
        console.print(Panel(t, title="cascade (root → symptoms)", title_align="left"))

    parts = []
    if d.facts:
        ft = Table(show_header=False, box=None, padding=(0, 1))
        ft.add_column(style="cyan", no_wrap=True)
        ft.add_column(overflow="fold")
        for k, v in d.facts.items():
            ft.add_row(Text(k, style="cyan"), Text(visible(render(k, v, d.fact_text.get(k)))))
        parts.append(Panel(ft, title="facts", title_align="left"))
    if d.reasoning:
        parts.append(Panel(Text("\n".join("• " + visible(r) for r in d.reasoning)), title="reasoning",
                           title_align="left"))
    for label_, text in (("why", d.explanation), ("fix", d.fix), ("next step", d.next_step)):
        if text:
            parts.append(Panel(Text(visible(text)), title=label_, title_align="left"))
    if d.env:
        parts.append(Panel(Text("\n".join(visible(e) for e in d.env)), title="environment", title_align="left"))
    if d.notes:
        parts.append(Panel(Text("\n".join(visible(e) for e in d.notes)), title="notes", title_align="left"))
    if d.references:
        parts.append(Panel(Text(visible("\n".join(d.references))), title="references", title_align="left"))
    if d.findings:
        from findings.render import text_block

        shown = d.findings[:8]
        body = "\n\n".join(visible(text_block(f, max(console.width - 4, 40))) for f in shown)
        more = len(d.findings) - len(shown)
        if more:
            body += f"\n\n... {more} more (--json lists them all)"
        parts.append(Panel(Text(body), title=f"findings ({len(d.findings)})", title_align="left"))
    console.print(Group(*parts))
