"""Store work off the UI thread: verdicts, notes, undo, export and the poll for others' changes.

The app queues a job and starts a thread worker; the worker runs every queued job in order on its own
SQLite connection and posts one `Done` message per job. Only the message handler on the app touches
widgets; the worker returns plain data (the rows as stored after the write, the words to show).
"""
from __future__ import annotations

import collections
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Callable

from textual.message import Message

from diagnose.store import Store, StoreError, TaskRow
from tui.safe import clean


class Done(Message):
    """One store job finished: rows to show again, what to say, and the screen's follow-up on success."""

    def __init__(self, rows: list[TaskRow], said: list[tuple[str, str]], ok: bool,
                 done: Callable | None = None, all_rows: list[TaskRow] | None = None) -> None:
        super().__init__()
        self.rows = rows                  # tasks whose stored state changed
        self.said = said                  # (message, severity)
        self.ok = ok
        self.done = done
        self.all_rows = all_rows          # the whole session again (a reload or another reviewer's change)


@dataclass
class Job:
    kind: str                             # verdict | clear | note | undo | export | poll | reload
    ids: list[int] = field(default_factory=list)
    args: dict = field(default_factory=dict)
    shown: dict = field(default_factory=dict)    # id -> seen(row), as this screen shows it
    done: Callable | None = None


def seen(row: TaskRow) -> tuple:
    """What a reviewer sees of a task's review: a change in it was made by someone."""
    return (row.verdict, row.note, row.reviewer, row.at)


def _plural(n: int) -> str:
    return f"{n:,} task{'s' if n != 1 else ''}"


class Writer:
    """The queue, the connection and the undo stack, all used under one lock by whichever worker drains."""

    UNDO_DEPTH = 50

    def __init__(self, db_path: str, reviewer: str, timeout_s: float = 5.0) -> None:
        self.db_path = db_path
        self.reviewer = reviewer
        self.timeout_s = timeout_s
        self.jobs: collections.deque[Job] = collections.deque()
        self.lock = threading.Lock()
        self.undo: list[tuple[str, dict]] = []
        # opened now, so that its data_version baseline is the session as the app first read it
        self._store: Store | None = Store(db_path, create=False, threads=True)
        self.version: int | None = self._store.data_version()

    def submit(self, job: Job) -> None:
        self.jobs.append(job)

    def drain(self, post: Callable[[Message], object]) -> None:
        """Run every queued job, in order (called in a worker thread)."""
        with self.lock:
            while self.jobs:
                job = self.jobs.popleft()
                post(self._run(job))

    def close(self) -> None:
        """At quit: the writes still queued are made (a verdict pressed just before q is not lost)."""
        with self.lock:
            while self.jobs:
                self._run(self.jobs.popleft())
            if self._store is not None:
                self._store.close()
                self._store = None

    # -- one job ----------------------------------------------------------------------------------

    def _connection(self) -> Store:
        if self._store is None:
            self._store = Store(self.db_path, create=False, threads=True)
            if self.version is None:
                self.version = self._store.data_version()
        self._store.db.execute(f"PRAGMA busy_timeout={int(self.timeout_s * 1000)}")
        return self._store

    def _run(self, job: Job) -> Done:
        try:
            store = self._connection()
            return getattr(self, f"_{job.kind}")(store, job)
        except (sqlite3.Error, StoreError) as e:
            if job.kind == "poll":
                return Done([], [], False)      # a busy database at a poll: try again at the next one
            return Done([], [(f"NOT saved: the session database {clean(self.db_path)} is busy or read-only "
                              f"({clean(str(e))}); try again in a moment", "error")], False)
        except Exception as e:           # a bug: said on screen, and the queue goes on
            return Done([], [(f"NOT saved: internal error {type(e).__name__}: {clean(str(e))}", "error")], False)

    def _remember(self, store: Store, what: str, ids) -> None:
        self.undo.append((what, store.state(ids)))
        del self.undo[:-self.UNDO_DEPTH]

    def _rows(self, store: Store, ids) -> list[TaskRow]:
        return [r for r in (store.row(t) for t in ids) if r is not None]

    def _others_changed(self, store: Store, ids, shown: dict) -> int:
        return sum(1 for r in self._rows(store, ids) if shown.get(r.id) != seen(r))

    def _write(self, store: Store, job: Job, what: str, fn, *a, **k) -> list[TaskRow]:
        self._remember(store, what, job.ids)
        try:
            fn(*a, **k)
        except BaseException:
            self.undo.pop()
            raise
        return self._rows(store, job.ids)

    def _verdict(self, store: Store, job: Job) -> Done:
        verdict, family, origin = job.args["verdict"], job.args.get("family"), job.args.get("origin")
        clash = self._others_changed(store, job.ids, job.shown)
        rows = self._write(store, job, verdict, store.set_verdict, job.ids, verdict, self.reviewer,
                           family=family, origin=origin)
        what = f"reclassified as {family}/{origin or '-'}" if verdict == "reclassified" else verdict
        said = [(f"{what}: {_plural(len(job.ids))} (saved; z undoes)", "information")]
        if clash:
            said.append((f"{clash} of them had a verdict set meanwhile by another reviewer; yours replaced "
                         "it (z undoes)", "warning"))
        return Done(rows, said, True, job.done)

    def _clear(self, store: Store, job: Job) -> Done:
        rows = self._write(store, job, "clear", store.clear_verdict, job.ids, self.reviewer)
        return Done(rows, [(f"verdict cleared: {_plural(len(job.ids))} (z undoes)", "information")], True, job.done)

    def _note(self, store: Store, job: Job) -> Done:
        rows = self._write(store, job, "note", store.set_note, job.ids[0], job.args["text"], self.reviewer)
        return Done(rows, [("note saved", "information")], True, job.done)

    def _undo(self, store: Store, job: Job) -> Done:
        if not self.undo:
            return Done([], [("nothing to undo", "warning")], False)
        what, states = self.undo[-1]
        store.restore(states, self.reviewer)
        self.undo.pop()
        return Done(self._rows(store, states), [(f"undone: {what} on {_plural(len(states))}", "information")],
                    True, job.done)

    def _export(self, store: Store, job: Job) -> Done:
        out = job.args["path"]
        try:
            store.export(out)
        except StoreError as e:
            return Done([], [(str(e), "error")], False)
        return Done([], [(f"exported {store.count():,} tasks to {clean(out)}", "information")], True, job.done)

    def _reload(self, store: Store, job: Job) -> Done:
        self.version = store.data_version()
        rows = store.rows()
        said = [(f"reloaded: {len(rows):,} tasks", "information")] if job.args.get("announce") else []
        return Done([], said, True, job.done, all_rows=rows)

    def _poll(self, store: Store, job: Job) -> Done:
        """Another connection committed (a reviewer, a triage run): the session again, and what changed.
        This connection's own writes do not move its data_version, so they are never reported as others'."""
        version = store.data_version()
        if version == self.version:
            return Done([], [], True)
        self.version = version
        rows = store.rows()
        before = job.shown
        changed = sum(1 for r in rows if r.id in before and before[r.id] != seen(r))
        new = sum(1 for r in rows if r.id not in before)
        said = []
        if changed or new:
            said = [(f"the session changed on disk (another reviewer or a triage run): {changed} task"
                     f"{'s' if changed != 1 else ''} updated, {new} new", "warning")]
        return Done([], said, True, all_rows=rows)
