"""The task table's data: every row of the session, filtered as you type, faceted and sorted.

Pure Python over a list of `TaskRow`s, so it is fast at 10,000+ rows and testable without a screen.
"""
from __future__ import annotations

import collections
import os

from diagnose.store import TaskRow

# (key, header, width; 0 = takes the remaining width). Order is the order on screen.
COLUMNS = (
    ("status", "status", 7),
    ("family", "family", 22),
    ("origin", "origin", 18),
    ("signature", "signature", 0),
    ("confidence", "conf", 4),
    ("verdict", "verdict", 13),
    ("path", "path", 0),
)
# Dropped first when the terminal is narrow.
DROP_ORDER = ("signature", "origin")


def display_paths(rows: list[TaskRow]) -> tuple[str, dict[int, str]]:
    """The common directory of all tasks, and each task's path relative to it."""
    paths = [r.path for r in rows]
    if not paths:
        return "", {}
    base = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
    if base in paths:
        base = os.path.dirname(base)
    return base, {r.id: (os.path.relpath(r.path, base) if base else r.path) for r in rows}


def cell(row: TaskRow, key: str, shown_path: str = "") -> str:
    if key == "status":
        return row.status
    if key == "confidence":
        return f"{row.confidence:.2f}"
    if key == "verdict":
        return (f"→{row.verdict_family}" if row.verdict == "reclassified" else row.verdict) or ""
    if key == "path":
        return shown_path or row.path
    return getattr(row, key) or ""


class TaskList:
    def __init__(self, rows: list[TaskRow]):
        self.rows: list[TaskRow] = []
        self.base = ""
        self.shown_path: dict[int, str] = {}
        self.text = ""
        self.family: str | None = None
        self.origin: str | None = None
        self.sort_key = "path"
        self.reverse = False
        self.tagged: set[int] = set()
        self.visible: list[TaskRow] = []
        self._text_matches: list[TaskRow] = []
        self.load(rows)

    def load(self, rows: list[TaskRow]) -> None:
        self.rows = rows
        self.base, self.shown_path = display_paths(rows)
        self._hay = {r.id: self._haystack(r) for r in rows}
        self.apply()

    def _haystack(self, r: TaskRow) -> str:
        return " ".join((r.family, r.origin, r.signature, self.shown_path.get(r.id, r.path), r.root_text,
                         r.verdict, r.verdict_family, r.note, r.error)).lower()

    def update(self, row: TaskRow) -> None:
        """One row changed (a verdict, a note): replace it in place, keep order and filter."""
        for seq in (self.rows, self.visible, self._text_matches):
            for i, r in enumerate(seq):
                if r.id == row.id:
                    seq[i] = row
        self._hay[row.id] = self._haystack(row)

    def apply(self) -> None:
        terms = self.text.lower().split()
        rows = self.rows
        if terms:
            hay = self._hay
            rows = [r for r in rows if all(t in hay[r.id] for t in terms)]
        self._text_matches = rows
        if self.family:
            rows = [r for r in rows if r.family == self.family]
        if self.origin:
            rows = [r for r in rows if r.origin == self.origin]
        key = self.sort_key
        if key == "confidence":
            rows = sorted(rows, key=lambda r: (r.confidence, r.path), reverse=self.reverse)
        elif key == "path":
            rows = sorted(rows, key=lambda r: r.path, reverse=self.reverse)
        else:
            rows = sorted(rows, key=lambda r: (cell(r, key), r.path), reverse=self.reverse)
        self.visible = rows

    def sort_by(self, key: str) -> None:
        """Sort by a column; the same column again reverses the order."""
        if key == self.sort_key:
            self.reverse = not self.reverse
        else:
            self.sort_key, self.reverse = key, key == "confidence"
        self.apply()

    def facets(self) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        """Counts by family and by origin among the rows the text filter keeps."""
        fam = collections.Counter(r.family for r in self._text_matches)
        org = collections.Counter(r.origin or "-" for r in self._text_matches)
        return fam.most_common(), org.most_common()

    def toggle_tag(self, task_id: int) -> None:
        self.tagged ^= {task_id}
