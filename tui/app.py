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
    UNDO_DEPTH = 50

    def __init__(self, db_path: str, reviewer: str | None = None) -> None:
        super().__init__()
        self.db_path = db_path
        self.store = Store(db_path, create=False)
        self.reviewer = reviewer or default_reviewer()
        self.tasks = TaskList(self.store.rows())
        self.session_title = Path(db_path).name
        self._undo: list[tuple[str, dict]] = []
        self._version = self.store.data_version()

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

    # -- the reviewer's state: saved at once ------------------------------------------------------

    def _guarded(self, fn, *a, **k) -> bool:
        """A store write; a locked or read-only database is said on screen, never a crash or a silent loss."""
        import sqlite3

        try:
            fn(*a, **k)
            return True
        except sqlite3.OperationalError as e:
            self.notify(f"NOT saved: the session database {clean(self.db_path)} is busy or read-only ({e}); "
                        "try again in a moment", severity="error", timeout=10, markup=False)
            return False

    def _remember(self, what: str, ids) -> None:
        self._undo.append((what, self.store.state(ids)))
        del self._undo[:-self.UNDO_DEPTH]

    def can_undo(self) -> bool:
        return bool(self._undo)

    def _others_changed(self, ids) -> list[int]:
        """Tasks whose stored verdict differs from what this screen shows: another reviewer wrote it."""
        shown = {r.id: (r.verdict, r.reviewer, r.at) for r in self.tasks.rows}
        out = []
        for tid in ids:
            row = self.store.row(tid)
            if row and shown.get(tid) != (row.verdict, row.reviewer, row.at):
                out.append(tid)
        return out

    def save_verdict(self, ids: list[int], verdict: str, family: str | None = None,
                     origin: str | None = None) -> None:
        if not ids:
            return
        clash = self._others_changed(ids)
        self._remember(verdict, ids)
        if not self._guarded(self.store.set_verdict, ids, verdict, self.reviewer, family=family, origin=origin):
            self._undo.pop()
            return
        self._refresh_rows(ids)
        what = f"reclassified as {family}/{origin or '-'}" if verdict == "reclassified" else verdict
        self.notify(f"{what}: {len(ids):,} task{'s' if len(ids) != 1 else ''} (saved; z undoes)", markup=False)
        if clash:
            self.notify(f"{len(clash)} of them had a verdict set meanwhile by another reviewer; yours replaced "
                        "it (z undoes)", severity="warning", markup=False)

    def clear_verdict(self, ids: list[int]) -> None:
        if not ids:
            return
        self._remember("clear", ids)
        if not self._guarded(self.store.clear_verdict, ids, self.reviewer):
            self._undo.pop()
            return
        self._refresh_rows(ids)
        self.notify(f"verdict cleared: {len(ids):,} task{'s' if len(ids) != 1 else ''} (z undoes)", markup=False)

    def undo(self) -> None:
        if not self._undo:
            self.notify("nothing to undo", severity="warning")
            return
        what, states = self._undo[-1]
        if not self._guarded(self.store.restore, states, self.reviewer):
            return
        self._undo.pop()
        self._refresh_rows(list(states))
        self.notify(f"undone: {what} on {len(states):,} task{'s' if len(states) != 1 else ''}", markup=False)

    def reload_rows(self, announce: bool = False) -> None:
        """Read the session again (new tasks from a triage run, another reviewer's verdicts), filters kept."""
        self.tasks.load(self.store.rows())
        self._version = self.store.data_version()
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.refresh_all(screen.table.current.id if screen.table.current else None)
        if announce:
            self.notify(f"reloaded: {len(self.tasks.rows):,} tasks", markup=False)

    def check_for_changes(self) -> None:
        try:
            version = self.store.data_version()
        except Exception:          # a locked or vanished database: say so once, keep the screen
            return
        if version != self._version:
            before = {r.id: (r.verdict, r.note) for r in self.tasks.rows}
            self.reload_rows()
            after = {r.id: (r.verdict, r.note) for r in self.tasks.rows}
            changed = sum(1 for k, v in after.items() if before.get(k) != v)
            self.notify(f"the session changed on disk (another reviewer or a triage run): {changed} task"
                        f"{'s' if changed != 1 else ''} updated, {max(0, len(after) - len(before))} new",
                        severity="warning", markup=False)

    def export_session(self, path: str | None = None) -> None:
        from diagnose.store import StoreError

        out = path or os.path.splitext(self.db_path)[0] + "-review.md"
        try:
            self.store.export(out)
        except StoreError as e:
            self.notify(str(e), severity="error", markup=False)
            return
        self.notify(f"exported {len(self.tasks.rows):,} tasks to {clean(out)}", markup=False)

    def _refresh_rows(self, ids) -> None:
        for tid in ids:
            row = self.store.row(tid)
            if row:
                self.tasks.update(row)
        self._version = self.store.data_version()
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.refresh_all(screen.table.current.id if screen.table.current else None)

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
                if origin is None:                 # Esc: back to the family step, not out
                    self.push_screen(FamilyPicker(family), family_picked)
                    return
                self.save_verdict(ids, "reclassified", family, None if origin == "-" else origin)
                done()
            self.push_screen(OriginPicker(family, current.origin if current else ""), origin_picked)
        self.push_screen(FamilyPicker(current.family if current else ""), family_picked)

    def edit_note(self, task_id: int, done) -> None:
        row = self.store.row(task_id)
        if row is None:
            return

        def saved(text):
            if text is not None:
                self._remember("note", [task_id])
                if not self._guarded(self.store.set_note, task_id, text, self.reviewer):
                    self._undo.pop()
                    return
                self._refresh_rows([task_id])
                self.notify("note saved", markup=False)
                done()
        name = self.tasks.shown_path.get(task_id, row.path)
        self.push_screen(NoteEditor(row.note, f"Note on {clean(os.path.basename(name))}"), saved)
