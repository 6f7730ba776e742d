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
from tui.task_list import COLUMNS, TaskList
from tui.task_screen import TaskScreen

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

    def __init__(self, db_path: str, reviewer: str | None = None) -> None:
        super().__init__()
        self.store = Store(db_path, create=False)
        self.reviewer = reviewer or default_reviewer()
        self.tasks = TaskList(self.store.rows())
        self.session_title = Path(db_path).name

    def on_mount(self) -> None:
        self.push_screen(MainScreen(self.tasks, self.session_title))

    def on_unmount(self) -> None:
        self.store.close()

    # -- screens ----------------------------------------------------------------------------------

    def open_task(self, task_id: int) -> None:
        task = self.store.task(task_id)
        if task is None:
            self.notify("this task is no longer in the session", severity="error")
            return
        self.push_screen(TaskScreen(task, self.tasks.shown_path.get(task_id, task.row.path)))

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

    # -- the reviewer's state: saved at once ------------------------------------------------------

    def save_verdict(self, ids: list[int], verdict: str, family: str | None = None,
                     origin: str | None = None) -> None:
        if not ids:
            return
        self.store.set_verdict(ids, verdict, self.reviewer, family=family, origin=origin)
        self._refresh_rows(ids)
        what = f"reclassified as {family}/{origin or '-'}" if verdict == "reclassified" else verdict
        self.notify(f"{what}: {len(ids)} task{'s' if len(ids) != 1 else ''} (saved)", markup=False)

    def _refresh_rows(self, ids) -> None:
        for tid in ids:
            row = self.store.row(tid)
            if row:
                self.tasks.update(row)

    def pick_verdict(self, ids: list[int], done) -> None:
        if not ids:
            return

        def picked(verdict):
            if verdict == "reclassified":
                self.reclassify(ids, done)
            elif verdict:
                self.save_verdict(ids, verdict)
                done()
        self.push_screen(VerdictPicker(len(ids)), picked)

    def reclassify(self, ids: list[int], done) -> None:
        if not ids:
            return
        current = self.store.row(ids[0])

        def family_picked(family):
            if not family:
                return

            def origin_picked(origin):
                if origin:
                    self.save_verdict(ids, "reclassified", family, None if origin == "-" else origin)
                    done()
            self.push_screen(OriginPicker(family), origin_picked)
        self.push_screen(FamilyPicker(current.family if current else ""), family_picked)

    def edit_note(self, task_id: int, done) -> None:
        row = self.store.row(task_id)
        if row is None:
            return

        def saved(text):
            if text is not None:
                self.store.set_note(task_id, text, self.reviewer)
                self._refresh_rows([task_id])
                self.notify("note saved", markup=False)
                done()
        name = self.tasks.shown_path.get(task_id, row.path)
        self.push_screen(NoteEditor(row.note, f"Note on {os.path.basename(name)}"), saved)
