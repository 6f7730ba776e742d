"""The main screen: the task table, `/` to filter as you type, facets, sorting, tags and bulk verdicts."""
from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from tui.facets import Facets
from tui.safe import safe
from tui.task_list import COLUMNS, TaskList
from tui.task_table import TaskTable


class MainScreen(Screen):
    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("escape", "back", "Back out", show=False),
        Binding("f", "facets", "Facets"),
        Binding("s", "sort_next", "Sort"),
        Binding("S", "sort_reverse", "Reverse", show=False),
        Binding("v", "verdict", "Verdict"),
        Binding("c", "set_verdict('confirmed')", "Confirm", show=False),
        Binding("r", "reclassify", "Reclassify", show=False),
        Binding("e", "set_verdict('needs-rerun')", "Needs rerun", show=False),
        Binding("x", "set_verdict('not-a-failure')", "Not a failure", show=False),
        Binding("m", "note", "Note", show=False),
        Binding("g", "cluster", "Cluster"),
        Binding("A", "tag_all", "Tag all shown"),
        Binding("z", "undo", "Undo"),
        Binding("delete,backspace", "clear_verdict", "Clear verdict", show=False),
        Binding("R", "review_filter", "Unreviewed/reviewed", show=False),
        Binding("u", "untag", "Untag all", show=False),
        Binding("w", "export", "Export", show=False),
        Binding("ctrl+r", "reload", "Reload", show=False),
    ] + [Binding(str(i + 1), f"sort('{key}')", f"Sort by {key}", show=False) for i, (key, _, _) in enumerate(COLUMNS)]

    def __init__(self, tasks: TaskList, title: str) -> None:
        super().__init__()
        self.tasks = tasks
        self.session_title = title
        self._facet_timer = None

    def compose(self):
        yield Static(id="top")
        yield Input(placeholder="filter: words in family, origin, signature, path, root line, note",
                    id="filter")
        with Horizontal(id="body"):
            yield Facets(id="facets")
            yield TaskTable(self.tasks, id="table")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self.query_one(TaskTable).focus()
        self.refresh_all()

    @property
    def table(self) -> TaskTable:
        return self.query_one(TaskTable)

    def refresh_all(self, keep_id: int | None = None, facets_later: bool = False) -> None:
        t = self.tasks
        self.table.refresh_rows(keep_id)
        self.update_top()
        # Typing re-filters the table at once; the facet counts follow when the typing pauses.
        if self._facet_timer:
            self._facet_timer.stop()
            self._facet_timer = None
        if facets_later:
            self._facet_timer = self.set_timer(0.25, self.refresh_facets)
        else:
            self.refresh_facets()

    def refresh_facets(self) -> None:
        self._facet_timer = None
        t = self.tasks
        fam, org = t.facets()
        self.query_one(Facets).show(fam, org, t.family, t.origin)

    def update_top(self) -> None:
        t = self.tasks
        top = Text(end="", no_wrap=True, overflow="ellipsis")
        top.append(" triage ", style="bold reverse")
        top.append_text(safe(f" {self.session_title}"))
        top.append(f"  {len(t.visible):,}/{len(t.rows):,} tasks", style="bold")
        if t.tagged:
            top.append(f" · {len(t.tagged)} tagged", style="bold")
        filters = [f for f in (t.text and f"“{t.text}”", t.family, t.origin if t.origin is None else
                                (t.origin or "no origin"), t.review) if f]
        if t.cluster:
            top.append_text(safe(f" · cluster {t.cluster[0]} {t.cluster[1]}", "bold magenta"))
        if filters:
            top.append_text(safe(" · filter " + " ".join(filters)))
        if t.base:
            top.append_text(safe(f" · in {t.base}/", "dim"))
        self.query_one("#top", Static).update(top)

    # -- filter -----------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            keep = self.table.current.id if self.table.current else None
            self.tasks.text = event.value
            self.tasks.apply()
            self.refresh_all(keep, facets_later=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if not event.value:
                event.input.display = False
            self.table.focus()

    def action_back(self) -> None:
        """Esc: leave the filter box, then clear the filter, then the facets, then the tags."""
        box = self.query_one("#filter", Input)
        t = self.tasks
        keep = self.table.current.id if self.table.current else None   # before the rows change under it
        if box.has_focus:
            self.table.focus()
            if not box.value:
                box.display = False
            return
        if self.query_one(Facets).has_focus:
            self.table.focus()
            return
        if t.text:
            box.value = ""          # Input.Changed re-applies the filter
            box.display = False
            t.text = ""
        elif t.cluster:
            t.cluster = None
        elif t.family or t.origin is not None or t.review:
            t.family = t.origin = t.review = None
        elif t.tagged:
            t.tagged.clear()
        else:
            return
        t.apply()
        self.refresh_all(keep)

    # -- facets and sort --------------------------------------------------------------------------

    def action_facets(self) -> None:
        """f: show the facets and go to them; f again there hides them (at any width)."""
        facets = self.query_one(Facets)
        if facets.has_focus:
            facets.display = False
            self._facets_hidden = True
            self.table.focus()
        else:
            facets.display = True
            self._facets_hidden = False
            facets.focus()

    def on_facets_picked(self, event: Facets.Picked) -> None:
        t = self.tasks
        if event.kind == "family":
            t.family = None if t.family == event.value else event.value
        elif event.kind == "origin":
            value = "" if event.value == "-" else event.value
            t.origin = None if t.origin == value else value
        t.apply()
        self.refresh_all()

    def action_sort(self, key: str) -> None:
        keep = self.table.current.id if self.table.current else None
        self.tasks.sort_by(key)
        self.refresh_all(keep)

    def action_sort_next(self) -> None:
        """Cycle the sort column (confidence sorts highest first)."""
        keys = [k for k, _, _ in COLUMNS]
        t = self.tasks
        keep = self.table.current.id if self.table.current else None
        t.sort_key = keys[(keys.index(t.sort_key) + 1) % len(keys)]
        t.reverse = t.sort_key == "confidence"
        t.apply()
        self.refresh_all(keep)

    def action_sort_reverse(self) -> None:
        self.action_sort(self.tasks.sort_key)

    # -- verdicts ---------------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """The tagged rows, or the row under the cursor when none is tagged."""
        if self.tasks.tagged:
            return sorted(self.tasks.tagged)
        return [self.table.current.id] if self.table.current else []

    def action_verdict(self) -> None:
        self.app.pick_verdict(self.selected_ids(), self._after_verdict)

    def action_set_verdict(self, verdict: str) -> None:
        self.app.save_verdict(self.selected_ids(), verdict, done=self._after_verdict)

    def action_reclassify(self) -> None:
        self.app.reclassify(self.selected_ids(), self._after_verdict)

    def action_note(self) -> None:
        if self.table.current:
            self.app.edit_note(self.table.current.id, self._after_verdict)

    def action_untag(self) -> None:
        self.tasks.tagged.clear()
        self.refresh_all()

    def _after_verdict(self) -> None:
        if self.tasks.tagged:
            self.tasks.tagged.clear()
        self.refresh_all(self.table.current.id if self.table.current else None)

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "untag":
            return True if self.tasks.tagged else None
        if action in ("verdict", "set_verdict", "reclassify", "note", "cluster", "tag_all", "clear_verdict"):
            return True if self.tasks.visible else None
        if action == "undo":
            return True if self.app.can_undo() else None
        return True

    # -- events -----------------------------------------------------------------------------------

    def on_task_table_opened(self, event: TaskTable.Opened) -> None:
        self.app.open_task(event.task_id)

    def on_task_table_moved(self, event: TaskTable.Moved) -> None:
        self.update_top()

    def on_resize(self, event) -> None:
        if not getattr(self, "_facets_hidden", False):
            self.query_one(Facets).display = event.size.width >= 110

    # -- clusters, undo, session ------------------------------------------------------------------

    def action_cluster(self) -> None:
        """g: only the tasks with this task's signature; g again: its family; again: all."""
        row = self.table.current
        cluster = self.tasks.cycle_cluster(row)
        self.refresh_all(row.id if row else None)
        if cluster:
            n = len(self.tasks.visible)
            self.notify(f"cluster: {n:,} task{'s' if n != 1 else ''} with {cluster[0]} {cluster[1]}; "
                        "A tags them all, then c/x/e/r gives one verdict", markup=False)

    def action_tag_all(self) -> None:
        n = self.tasks.tag_visible()
        self.refresh_all(self.table.current.id if self.table.current else None)
        self.notify(f"{n:,} task{'s' if n != 1 else ''} tagged: the next verdict applies to "
                    f"{'all of them' if n != 1 else 'it'} (Esc untags)", markup=False)

    def action_undo(self) -> None:
        self.app.undo()

    def action_clear_verdict(self) -> None:
        self.app.clear_verdict(self.selected_ids(), done=self._after_verdict)

    def action_review_filter(self) -> None:
        self.tasks.cycle_review()
        self.refresh_all(self.table.current.id if self.table.current else None)

    def action_export(self) -> None:
        self.app.export_session()

    def action_reload(self) -> None:
        self.app.reload_rows(announce=True)
