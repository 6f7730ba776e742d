"""The task table's data: every row of the session, filtered as you type, faceted and sorted.

Pure Python over a list of `TaskRow`s, so it is fast at 10,000+ rows and testable without a screen.
"""
from __future__ import annotations

import collections
import os

from diagnose.store import TaskRow

# (key, header, width; 0 = shares the remaining width). Order is the order on screen. "review" is the
# reviewer's state in one word (new, the verdict, changed!, error) with "+" when the task has a note.
COLUMNS = (
    ("review", "review", 14),
    ("family", "family", 22),
    ("origin", "origin", 18),
    ("confidence", "conf", 4),
    ("signature", "signature", 0),
    ("root", "root line", 0),
    ("path", "path", 0),
)
# Narrow terminals: first the root line goes (the task screen shows it), then origins are abbreviated.
DROP_ORDER = ("root",)
ORIGIN_SHORT = {"kernel-logic": "kernel", "runtime-assumption": "caller", "resource-limit": "resource",
                "environment": "env", "hardware": "hardware", "numerics": "numerics"}
REVIEW_FILTERS = (None, "unreviewed", "reviewed", "changed")


def display_paths(rows: list[TaskRow]) -> tuple[str, dict[int, str]]:
    """The common directory of all tasks, and each task's path relative to it."""
    paths = [r.path for r in rows]
    if not paths:
        return "", {}
    base = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
    if base in paths:
        base = os.path.dirname(base)
    return base, {r.id: (os.path.relpath(r.path, base) if base else r.path) for r in rows}


def review_word(row: TaskRow) -> str:
    if row.error:
        word = "error"
    elif not row.verdict:
        word = "new"
    elif row.stale:
        word = "changed!"
    elif row.verdict == "reclassified":
        word = f"→{row.verdict_family}"
    else:
        word = row.verdict
    return word + ("+" if row.note else "")


def unsure_none(row: TaskRow) -> bool:
    """A `none` no surer than the table's low-confidence mark: it may be a missed failure (shown `none?`)."""
    from diagnose.report import LOW_CONFIDENCE

    return row.family == "none" and row.confidence is not None and row.confidence < LOW_CONFIDENCE


def cell(row: TaskRow, key: str, shown_path: str = "") -> str:
    if key == "status":
        return row.status
    if key == "review":
        return review_word(row)
    if key == "root":
        return (row.root_text or row.error or "").strip()
    if key == "signature":
        sig = row.signature or ""
        return sig.split(".", 1)[1] if sig.startswith(row.family + ".") else sig
    if key == "confidence":
        return f"{row.confidence:.2f}"
    if key == "family" and unsure_none(row):
        return "none?"
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
        self.review: str | None = None          # None | unreviewed | reviewed | changed
        self.cluster: tuple[str, str] | None = None   # ("signature", id) or ("family", name)
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
        self.update_many([row])

    def update_many(self, rows: list[TaskRow]) -> None:
        """Rows changed (one verdict on a cluster): replaced in place in one pass over each list."""
        new = {r.id: r for r in rows}
        for seq in (self.rows, self.visible, self._text_matches):
            for i, r in enumerate(seq):
                if r.id in new:
                    seq[i] = new[r.id]
        for r in rows:
            self._hay[r.id] = self._haystack(r)

    @property
    def by_id(self) -> dict[int, TaskRow]:
        return {r.id: r for r in self.rows}

    def apply(self) -> None:
        terms = self.text.lower().split()
        rows = self.rows
        if terms:
            hay = self._hay
            rows = [r for r in rows if all(t in hay[r.id] for t in terms)]
        self._text_matches = rows
        if self.family:
            rows = [r for r in rows if r.family == self.family]
        if self.origin is not None:
            rows = [r for r in rows if (r.origin or "") == self.origin]
        if self.review == "unreviewed":
            rows = [r for r in rows if not r.verdict]
        elif self.review == "reviewed":
            rows = [r for r in rows if r.verdict]
        elif self.review == "changed":
            rows = [r for r in rows if r.verdict and r.stale]
        if self.cluster:
            kind, value = self.cluster
            rows = [r for r in rows if (r.signature if kind == "signature" else r.family) == value]
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
        # origin "-" is a task with no origin; picking it filters to those (origin "")
        org = collections.Counter(r.origin or "-" for r in self._text_matches)
        return fam.most_common(), org.most_common()

    def toggle_tag(self, task_id: int) -> None:
        self.tagged ^= {task_id}

    def tag_visible(self) -> int:
        """Tag every row the filters keep (a cluster, a facet): the next verdict applies to all of them."""
        self.tagged = {r.id for r in self.visible}
        return len(self.tagged)

    def cycle_review(self) -> str | None:
        self.review = REVIEW_FILTERS[(REVIEW_FILTERS.index(self.review) + 1) % len(REVIEW_FILTERS)]
        self.apply()
        return self.review

    def cycle_cluster(self, row: TaskRow | None) -> tuple[str, str] | None:
        """Off -> the row's signature -> its family -> off: the rows that are probably one problem."""
        if row is None:
            self.cluster = None
        elif self.cluster is None and row.signature:
            self.cluster = ("signature", row.signature)
        elif self.cluster is None or self.cluster[0] == "signature":
            self.cluster = ("family", row.family)
        else:
            self.cluster = None
        self.apply()
        return self.cluster

    def next_unreviewed(self, after_id: int | None) -> TaskRow | None:
        """The first visible unreviewed row after `after_id` (wrapping), else None."""
        rows = self.visible
        start = next((i for i, r in enumerate(rows) if r.id == after_id), -1)
        for r in rows[start + 1:] + rows[:start + 1]:
            if not r.verdict and r.id != after_id:
                return r
        return None

    def neighbour(self, task_id: int, step: int) -> TaskRow | None:
        rows = self.visible
        i = next((i for i, r in enumerate(rows) if r.id == task_id), None)
        if i is None or not 0 <= i + step < len(rows):
            return None
        return rows[i + step]
