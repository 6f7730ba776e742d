"""The triage app: owns the session store and the state; screens ask it to save verdicts and notes."""
from __future__ import annotations

import os
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding

from diagnose.store import Store, default_reviewer
from tui.help_screen import HelpScreen
from tui.main_screen import MainScreen
from tui.pickers import FamilyPicker, NoteEditor, OriginPicker, VerdictPicker
from tui.safe import clean
from tui.task_list import COLUMNS, TaskList
from tui.task_screen import TaskScreen
from tui.writes import Done, Job, Writer, seen

ABOUT = ("Verdicts and notes are saved to the session database the moment you set them. "
         "Log text is shown with control characters made visible and is never read as markup.")


class TriageApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "diagnose triage"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Keys"),
        Binding("ctrl+p", "command_palette", "Commands", show=False),
    ]

    POLL_S = 2.0          # how often another reviewer's writes to the same database are looked for
    WRITE_TIMEOUT_S = 5.0  # how long a write waits for a database another process holds locked

    def __init__(self, db_path: str, reviewer: str | None = None) -> None:
        super().__init__()
        self.db_path = db_path
        self.store = Store(db_path, create=False)
        self.reviewer = reviewer or default_reviewer()
        self.tasks = TaskList(self.store.rows())
        self.session_title = Path(db_path).name
        self.writer = Writer(db_path, self.reviewer, self.WRITE_TIMEOUT_S)

    def on_mount(self) -> None:
        self.push_screen(MainScreen(self.tasks, self.session_title))
        self.set_interval(self.POLL_S, self.check_for_changes)

    # -- keys: a fast Esc then a key arrives as alt+key; treat it as the two keys it was -----------

    async def on_event(self, event) -> None:
        from textual import events

        if isinstance(event, events.Key) and not event.is_forwarded and event.key.startswith("alt+") \
                and len(event.key) > 4:
            rest = event.key[4:]
            self.simulate_key("escape")
            self.simulate_key(rest)
            return
        await super().on_event(event)

    def on_unmount(self) -> None:
        self.store.close()
        self.writer.close()

    # -- screens ----------------------------------------------------------------------------------

    def open_task(self, task_id: int, replace: bool = False) -> None:
        task = self.store.task(task_id)
        if task is None:
            self.notify("this task is no longer in the session", severity="error")
            return
        screen = TaskScreen(task, self.tasks.shown_path.get(task_id, task.row.path))
        if replace and isinstance(self.screen, TaskScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        bindings = [(ab.binding.key, ab.binding.description, ab.enabled)
                    for ab in self.screen.active_bindings.values()]
        self.push_screen(HelpScreen(bindings, ABOUT))

    def get_system_commands(self, screen):
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            for key, header, _ in COLUMNS:
                yield SystemCommand(f"Sort by {header}", f"order the tasks by {key}",
                                    lambda k=key: screen.action_sort(k))
            yield SystemCommand("Filter tasks", "type to filter (/)", screen.action_filter)
            yield SystemCommand("Show facets", "counts by family and origin (f)", screen.action_facets)
        if isinstance(screen, (MainScreen, TaskScreen)):
            yield SystemCommand("Set verdict…", "confirmed, reclassified, needs-rerun, not-a-failure (v)",
                                screen.action_verdict)
            yield SystemCommand("Write a note", "free text saved with the task (m)", screen.action_note)
        yield SystemCommand("Keys", "every key on this screen (?)", self.action_help)

    # -- the reviewer's state: saved at once, by a worker thread (the screen never waits on SQLite) --

    def _submit(self, job: Job) -> None:
        self.writer.submit(job)
        self.run_worker(self._drain, thread=True, group="store", exit_on_error=False)

    def _drain(self) -> None:
        self.writer.drain(self.post_message)

    def on_done(self, message: Done) -> None:
        """A store job finished (posted by the worker): the only place its results reach the widgets."""
        if not self.screen_stack:         # the app is closing
            return
        for text, severity in message.said:
            self.notify(text, severity=severity, timeout=10 if severity == "error" else 5, markup=False)
        if message.all_rows is not None:
            self.tasks.load(message.all_rows)
        elif message.rows:
            self.tasks.update_many(message.rows)
        if message.all_rows is not None or message.rows:
            for screen in self.screen_stack:
                if isinstance(screen, MainScreen):
                    screen.refresh_all(screen.table.current.id if screen.table.current else None)
        if message.ok and message.done:
            message.done()
        self.screen.refresh_bindings()

    def _shown(self, ids=None) -> dict:
        if ids is None:
            return {r.id: seen(r) for r in self.tasks.rows}
        by_id = self.tasks.by_id
        return {t: seen(by_id[t]) for t in ids if t in by_id}

    def can_undo(self) -> bool:
        return bool(self.writer.undo)

    def save_verdict(self, ids: list[int], verdict: str, family: str | None = None,
                     origin: str | None = None, done=None) -> None:
        if ids:
            self._submit(Job("verdict", list(ids), {"verdict": verdict, "family": family, "origin": origin},
                             self._shown(ids), done))

    def clear_verdict(self, ids: list[int], done=None) -> None:
        if ids:
            self._submit(Job("clear", list(ids), done=done))

    def undo(self, done=None) -> None:
        self._submit(Job("undo", done=done))

    def reload_rows(self, announce: bool = False) -> None:
        """Read the session again (new tasks from a triage run, another reviewer's verdicts), filters kept."""
        self._submit(Job("reload", args={"announce": announce}))

    def check_for_changes(self) -> None:
        if not self.writer.jobs:          # a poll waiting behind writes would only repeat itself
            self._submit(Job("poll", shown=self._shown()))

    def export_session(self, path: str | None = None) -> None:
        out = path or os.path.splitext(self.db_path)[0] + "-review.md"
        self.notify(f"writing the review to {clean(out)} (in the background)", markup=False)
        self._submit(Job("export", args={"path": out}))

    def pick_verdict(self, ids: list[int], done) -> None:
        if not ids:
            return

        def picked(verdict):
            if verdict == "reclassified":
                self.reclassify(ids, done)
            elif verdict:
                self.save_verdict(ids, verdict, done=done)
        self.push_screen(VerdictPicker(len(ids)), picked)

    def reclassify(self, ids: list[int], done) -> None:
        if not ids:
            return
        current = self.store.row(ids[0])

        def family_picked(family):
            if not family:
                return

            def origin_picked(origin):
                if origin is None:                 # Esc: back to the family step, not out
                    self.push_screen(FamilyPicker(family), family_picked)
                    return
                self.save_verdict(ids, "reclassified", family, None if origin == "-" else origin, done=done)
            self.push_screen(OriginPicker(family, current.origin if current else ""), origin_picked)
        self.push_screen(FamilyPicker(current.family if current else ""), family_picked)

    def edit_note(self, task_id: int, done) -> None:
        row = self.store.row(task_id)
        if row is None:
            return

        def saved(text):
            if text is not None:
                self._submit(Job("note", [task_id], {"text": text}, done=done))
        name = self.tasks.shown_path.get(task_id, row.path)
        self.push_screen(NoteEditor(row.note, f"Note on {clean(os.path.basename(name))}"), saved)
