"""Beside the log: root cause, the chain (each link a jump to its line), facts, fix, the next step with
its command, guidance when the diagnosis is uncertain, environment findings and the review."""
from __future__ import annotations

import re

from rich.text import Text
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from diagnose.guidance import questions, uncertain
from diagnose.store import Task
from tui.safe import clean, safe, safe_block


def next_command(task: Task) -> str:
    """The command to copy: the first `quoted` command of the next step, else the first guidance command."""
    d = task.diagnosis
    m = re.search(r"`([^`]+)`", d.next_step or "")
    if m:
        return clean(m.group(1))
    if uncertain(d):
        for q in questions(d, task.findings):
            if q.command:
                return clean(q.command)
    return ""


def _section(title: str) -> Text:
    return Text(title, style="bold underline", end="")


class ChainList(OptionList):
    """Root → symptoms; Enter on a link jumps the log to its line."""

    class Jump(Message):
        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, task: Task, **kw) -> None:
        options = []
        for i, link in enumerate(task.diagnosis.chain):
            prompt = Text(end="", no_wrap=True, overflow="ellipsis")
            prompt.append(f"{'→ ' if i else ''}L{link.line} ", style="bold")
            prompt.append(f"{link.role} ", style="red" if link.role == "root" else "dim")
            prompt.append_text(safe(link.family + "  ", "bold"))
            prompt.append_text(safe(link.text.strip()[:200]))
            options.append(Option(prompt, id=f"L{i}"))
        super().__init__(*options, **kw)
        self.link_lines = [link.line for link in task.diagnosis.chain]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Jump(self.link_lines[event.option_index]))


def finding_lines(task: Task) -> list[tuple[str, str]]:
    """Every reader's findings on this task, one way: "[severity] id where: title" and the fix. Reads the
    Finding shape (title, id, evidence) and the older env-check dicts (message); worst first."""
    from findings import Finding, sort_findings

    items = []
    for f in list(task.findings) + list(getattr(task.diagnosis, "findings", []) or []):
        if isinstance(f, Finding):
            items.append(f)
        elif isinstance(f, dict) and "title" in f and "id" in f:
            try:
                items.append(Finding.from_json(f))
            except (KeyError, ValueError):
                continue
        elif isinstance(f, dict):
            sev = f.get("severity") if f.get("severity") in ("error", "warning", "info") else "info"
            items.append(Finding(f"env.{f.get('id', 'check')}", sev, "env", str(f.get("message", "")),
                                 fix=str(f.get("fix", ""))))
    seen, out = set(), []
    for f in sort_findings(items):
        key = (f.id, f.where, f.title)
        if key in seen:
            continue
        seen.add(key)
        out.append((f"[{f.severity}] {f.id}" + (f" {f.where}" if f.where else "") + f": {f.title}", f.fix))
    return out


class DiagnosisPanel(VerticalScroll, can_focus=True):
    """Scrolls by keyboard when focused (Tab from the log): up/down, page up/down, home/end."""
    def __init__(self, task: Task, **kw) -> None:
        super().__init__(**kw)
        self.task_ = task

    def compose(self):
        t, d = self.task_, self.task_.diagnosis
        head = Text(end="")
        head.append_text(_section("Root cause"))
        head.append("\n")
        head.append_text(safe(d.title or "(no title)", "bold"))
        head.append("\n")
        head.append_text(safe(f"{d.family} · {d.origin or 'origin unknown'} · {d.signature or 'no signature'}"
                              f" · confidence {d.confidence:.2f}"))
        if d.root:
            head.append(f"\nline {d.root.line}: ", style="bold")
            head.append_text(safe(d.root.text.strip()[:400], "red"))
        if d.error:
            head.append("\ninput: ", style="bold")
            head.append_text(safe(d.error, "red"))
        yield Static(head, id="root")
        yield Static(self.review_text(), id="review")
        if uncertain(d):
            g = _section("What to check next, in order")
            for i, q in enumerate(questions(d, t.findings), 1):
                g.append(f"\n{i}. ", style="bold")
                g.append_text(safe(q.ask, "bold"))
                g.append("\n   ")
                g.append_text(safe(q.why, "italic"))
                if q.command:
                    g.append("\n   $ ", style="bold")
                    g.append_text(safe(q.command, "cyan"))
            yield Static(g, id="guidance")
        if d.chain:
            yield Static(_section(f"Chain ({len(d.chain)}: Enter jumps to the line)"), classes="title")
            yield ChainList(t, id="chain")
        if d.facts:
            from signatures.facts import render as render_fact

            facts = Text(end="")
            facts.append_text(_section("Facts"))
            for k, v in d.facts.items():
                facts.append("\n")
                facts.append_text(safe(f"{k} = {render_fact(k, v, d.fact_text.get(k))}"))
            yield Static(facts, id="facts")
        if d.fix:
            fix = _section("Fix")
            fix.append("\n")
            fix.append_text(safe_block(d.fix))
            yield Static(fix, id="fix")
        cmd = next_command(t)
        if d.next_step or cmd:
            nxt = _section("Next step")
            if d.next_step:
                nxt.append("\n")
                nxt.append_text(safe_block(d.next_step))
            if cmd:
                nxt.append("\n$ ", style="bold")
                nxt.append_text(safe(cmd, "bold cyan"))
                nxt.append("\n(y copies the command)", style="dim")
            yield Static(nxt, id="next")
        reviews = [n[len("review "):] for n in d.notes if n.startswith("review ")]
        if reviews:
            rv = _section("Task review (diagnose review)")
            for line in reviews:
                dim, _, rest = line.partition(": ")
                verdict, _, why = rest.partition(": ")
                rv.append("\n")
                rv.append_text(safe(f"{verdict.upper():<15}", "bold red" if verdict == "fail" else
                                    "bold yellow" if verdict == "concern" else "bold green" if verdict == "pass" else "dim"))
                rv.append_text(safe(f"{dim}  ", "bold"))
                rv.append_text(safe(why, "dim"))
            yield Static(rv, id="task-review")
        found = finding_lines(t)
        if found or d.env:
            env = _section(f"Findings ({len(found)})" if found else "Environment")
            for head, fix in found:
                env.append("\n")
                env.append_text(safe(head, "bold"))
                if fix:
                    env.append("\n  ")
                    env.append_text(safe(f"fix: {fix}"))
            for e in d.env:
                env.append("\n")
                env.append_text(safe(e))
            yield Static(env, id="env")
        others = [n for n in d.notes if not n.startswith("review ")]
        if others:
            notes = _section("Notes")
            for e in others:
                notes.append("\n")
                notes.append_text(safe(e))
            yield Static(notes, id="notes")
        if d.explanation:
            ex = _section("Why")
            ex.append("\n")
            ex.append_text(safe_block(d.explanation.strip()))
            yield Static(ex, id="explanation")

    def review_text(self) -> Text:
        r = self.task_.row
        text = _section("Review")
        text.append("\n")
        if r.verdict:
            v = f"reclassified → {r.verdict_family}/{r.verdict_origin or '-'}" if r.verdict == "reclassified" \
                else r.verdict
            text.append_text(safe(v, "bold cyan"))
            text.append_text(safe(f"  by {r.reviewer} at {r.at}", "dim"))
            if r.stale:
                text.append("\nthe log changed after this verdict", style="magenta")
        else:
            text.append("not reviewed yet", style="italic")
        if r.note:
            text.append("\nnote: ", style="bold")
            text.append_text(safe_block(r.note))
        return text

    def update_review(self, task: Task) -> None:
        self.task_ = task
        self.query_one("#review", Static).update(self.review_text())
