"""The task screen: the log viewer and, beside it, the diagnosis; verdict, reclassify and note keys."""
from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from diagnose.store import Task
from tui.diagnosis_panel import ChainList, DiagnosisPanel, next_command
from tui.log_view import LogView
from tui.safe import safe

NARROW = 110


class TaskScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("slash", "search", "Search"),
        Binding("tab", "switch", "Chain"),
        Binding("c", "set_verdict('confirmed')", "Confirm"),
        Binding("r", "reclassify", "Reclassify"),
        Binding("e", "set_verdict('needs-rerun')", "Rerun", show=False),
        Binding("x", "set_verdict('not-a-failure')", "Not a failure", show=False),
        Binding("v", "verdict", "Verdict", show=False),
        Binding("m", "note", "Note"),
        Binding("y", "copy", "Copy cmd"),
        Binding("d", "toggle_panel", "Hide/show diagnosis", show=False),
        Binding("right_square_bracket", "neighbour(1)", "Next task"),
        Binding("left_square_bracket", "neighbour(-1)", "Prev task", show=False),
        Binding("u", "next_unreviewed", "Next unreviewed"),
        Binding("C", "confirm_next", "Confirm+next", show=False),
        Binding("z", "undo", "Undo", show=False),
        Binding("delete,backspace", "clear_verdict", "Clear verdict", show=False),
    ]

    def __init__(self, task: Task, shown_path: str) -> None:
        super().__init__()
        self.task_ = task
        self.shown_path = shown_path

    def compose(self):
        d = self.task_.diagnosis
        yield Static(self.top_text(), id="top")
        with Horizontal(id="body"):
            yield LogView(self.task_.log, evidence=[e.line for e in d.evidence] + [c.line for c in d.chain],
                          root=d.root.line if d.root else None, root_text=d.root.text if d.root else "", id="log")
            yield DiagnosisPanel(self.task_, id="panel")
        yield Input(placeholder="search the log (Enter: next match, > and < later)", id="search")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#search").display = False
        self.query_one(LogView).focus()
        self._layout(self.size.width)

    def top_text(self) -> Text:
        d, r = self.task_.diagnosis, self.task_.row
        top = Text(end="", no_wrap=True, overflow="ellipsis")
        top.append(" task ", style="bold reverse")
        top.append_text(safe(f" {self.shown_path} "))
        top.append_text(safe(d.family, "bold red" if d.family not in ("none", "unknown") else "bold"))
        top.append(f" {d.confidence:.2f}")
        if r.verdict:
            top.append_text(safe(f" · {r.verdict}", "bold cyan"))
        log = self.query(LogView)
        if log:
            view = log.first()
            if view.indexing:
                top.append(" · indexing the log...", style="dim")
            elif view.source:
                top.append(f" · line {view.current_line:,}/{view.source.lines:,}", style="dim")
        return top

    def _layout(self, width: int) -> None:
        self.set_class(width < NARROW, "narrow")

    def on_resize(self, event) -> None:
        self._layout(event.size.width)

    @property
    def log_view(self) -> LogView:
        return self.query_one(LogView)

    # -- log navigation ---------------------------------------------------------------------------

    def on_log_view_moved(self, event: LogView.Moved) -> None:
        self.query_one("#top", Static).update(self.top_text())

    def on_chain_list_jump(self, event: ChainList.Jump) -> None:
        self.log_view.goto(event.line)
        self.log_view.focus()

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search" and event.value:
            self.log_view.search(event.value)
            self.refresh_bindings()

    def action_back(self) -> None:
        box = self.query_one("#search", Input)
        if box.has_focus or box.display:
            box.display = False
            self.log_view.focus()
            return
        if not self.log_view.has_focus:
            self.log_view.focus()
            return
        self.app.pop_screen()

    def action_switch(self) -> None:
        """Tab: log -> chain -> diagnosis panel (scroll it with the arrows and page keys) -> log."""
        chain = self.query(ChainList)
        panel = self.query_one(DiagnosisPanel)
        if not panel.display:
            self.log_view.focus()
        elif self.log_view.has_focus:
            (chain.first() if chain else panel).focus()
        elif chain and chain.first().has_focus:
            panel.focus()
        else:
            self.log_view.focus()

    def action_toggle_panel(self) -> None:
        panel = self.query_one(DiagnosisPanel)
        panel.display = not panel.display
        self.log_view.focus()

    def action_copy(self) -> None:
        cmd = next_command(self.task_)
        if not cmd:
            self.notify("this diagnosis has no command to copy", severity="warning", markup=False)
            return
        try:
            self.app.copy_to_clipboard(cmd)
        except Exception as e:          # the terminal refused; the command is still shown
            self.notify(f"could not copy ({e}): {cmd}", severity="error", markup=False)
            return
        self.notify(f"sent to the terminal's clipboard (OSC 52; some terminals block it): {cmd}", markup=False)

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "neighbour":
            return True if self.app.tasks.neighbour(self.task_.row.id, parameters[0]) else None
        return True

    # -- moving between tasks ---------------------------------------------------------------------

    def action_neighbour(self, step: int) -> None:
        row = self.app.tasks.neighbour(self.task_.row.id, step)
        if row is None:
            self.notify("no more tasks in this list", severity="warning")
            return
        self.app.open_task(row.id, replace=True)

    def action_next_unreviewed(self) -> None:
        row = self.app.tasks.next_unreviewed(self.task_.row.id)
        if row is None:
            self.notify("every task in this list has a verdict", markup=False)
            return
        self.app.open_task(row.id, replace=True)

    def action_confirm_next(self) -> None:
        # the save runs in the background; the next task opens now (a failed save is said on screen)
        self.app.save_verdict(self._ids(), "confirmed")
        self.action_next_unreviewed()

    def action_undo(self) -> None:
        self.app.undo(done=self.reload)

    def action_clear_verdict(self) -> None:
        self.app.clear_verdict(self._ids(), done=self.reload)

    # -- verdicts ---------------------------------------------------------------------------------

    def _ids(self) -> list[int]:
        return [self.task_.row.id]

    def action_set_verdict(self, verdict: str) -> None:
        self.app.save_verdict(self._ids(), verdict, done=self.reload)

    def action_verdict(self) -> None:
        self.app.pick_verdict(self._ids(), self.reload)

    def action_reclassify(self) -> None:
        self.app.reclassify(self._ids(), self.reload)

    def action_note(self) -> None:
        self.app.edit_note(self.task_.row.id, self.reload)

    def reload(self) -> None:
        if not self.is_attached:           # the reviewer moved on before the save came back
            return
        task = self.app.store.task(self.task_.row.id)
        if task:
            self.task_ = task
            self.query_one(DiagnosisPanel).update_review(task)
            self.query_one("#top", Static).update(self.top_text())
