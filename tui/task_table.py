"""The task table: a virtual table that renders only the rows on screen (fast at 10,000+ rows)."""
from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.safe import clean
from tui.task_list import COLUMNS, DROP_ORDER, ORIGIN_SHORT, TaskList, cell, unsure_none

FAMILY_STYLE = {"none": "green", "unknown": "yellow"}
STATUS_STYLE = {"new": "bold", "done": "dim", "changed": "magenta", "error": "red"}


class TaskTable(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("enter", "open", "Open"),
        Binding("space", "tag", "Tag"),
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
    ]

    class Opened(Message):
        def __init__(self, task_id: int) -> None:
            super().__init__()
            self.task_id = task_id

    class Moved(Message):
        pass

    def __init__(self, tasks: TaskList, **kw) -> None:
        super().__init__(**kw)
        self.tasks = tasks
        self.cursor = 0

    # -- data -------------------------------------------------------------------------------------

    def refresh_rows(self, keep_id: int | None = None) -> None:
        """The filter, sort or a row changed: resize and redraw (the cursor follows `keep_id`)."""
        rows = self.tasks.visible
        if keep_id is not None:
            for i, r in enumerate(rows):
                if r.id == keep_id:
                    self.cursor = i
                    break
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        self.virtual_size = Size(self.size.width, len(rows) + 1)
        self._follow()
        self.refresh()

    @property
    def current(self):
        rows = self.tasks.visible
        return rows[self.cursor] if rows else None

    # -- keys -------------------------------------------------------------------------------------

    def action_move(self, delta: int) -> None:
        self.cursor = max(0, min(self.cursor + delta, len(self.tasks.visible) - 1))
        self._follow()
        self.refresh()
        self.post_message(self.Moved())

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.size.height - 2))

    def action_edge(self, end: int) -> None:
        self.action_move(len(self.tasks.visible) if end else -len(self.tasks.visible))

    def action_open(self) -> None:
        if self.current:
            self.post_message(self.Opened(self.current.id))

    def action_tag(self) -> None:
        if self.current:
            self.tasks.toggle_tag(self.current.id)
            self.action_move(1)

    def _follow(self) -> None:
        body = max(1, self.size.height - 1)
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def on_resize(self) -> None:
        self.refresh_rows()

    def on_click(self, event) -> None:
        y = event.y
        if y == 0:
            x, at = event.x, 0
            for key, _, width in self._layout(self.scrollable_content_region.width):
                if at <= x < at + width + 1:
                    self.tasks.sort_by(key)
                    self.refresh_rows(keep_id=self.current.id if self.current else None)
                    return
                at += width + 1
            return
        self.cursor = min(self.scroll_offset.y + y - 1, len(self.tasks.visible) - 1)
        self.refresh()
        self.post_message(self.Moved())

    # -- rendering --------------------------------------------------------------------------------

    def _layout(self, width: int):
        """The columns that fit, with their widths. Flexible columns share what the fixed ones leave:
        the root line half, signature and path a quarter each; narrow terminals drop the root line,
        then shorten origins to one word (never drop them)."""
        cols = [(k, h, w) for k, h, w in COLUMNS]
        self._short_origin = False

        def room(cs):
            return width - (sum(w for _, _, w in cs if w) + len(cs) + 2)

        for drop in DROP_ORDER:
            if room(cols) >= 16 * sum(1 for _, _, w in cols if not w):
                break
            cols = [c for c in cols if c[0] != drop]
        if room(cols) < 16 * sum(1 for _, _, w in cols if not w):
            self._short_origin = True
            cols = [(k, h, 8 if k == "origin" else w) for k, h, w in cols]
        left = max(8, room(cols))
        flex = [k for k, _, w in cols if not w]
        weight = {"root": 2, "signature": 1, "path": 1}
        total = sum(weight[k] for k in flex) or 1
        shares = {k: max(6, left * weight[k] // total) for k in flex}
        if flex:
            shares[flex[-1]] += left - sum(shares.values())
        return [(k, h, w or shares[k]) for k, h, w in cols]

    def _line(self, parts, base: Style) -> Strip:
        text = Text(end="", no_wrap=True)
        for value, width, style in parts:
            if len(value) > width:       # paths lose their left end (what tells tasks apart is on the right)
                value = ("…" + value[-(width - 1):]) if style == "path" else value[:max(0, width - 1)] + "…"
            style = "" if style == "path" else style
            text.append(value.ljust(width) + " ", style)
        segments = list(text.render(self.app.console))
        strip = Strip(segments, text.cell_len)
        strip = strip.crop_extend(0, self.size.width, self.rich_style)
        return strip.apply_style(self.rich_style + base) if base else strip.apply_style(self.rich_style)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        layout = self._layout(self.scrollable_content_region.width or width)
        if y == 0:
            arrow = "▼" if self.tasks.reverse else "▲"
            parts = [("  ", 2, "")] + [
                (h + (arrow if k == self.tasks.sort_key else ""), w, "bold underline") for k, h, w in layout]
            return self._line(parts, Style(bold=True))
        index = self.scroll_offset.y + y - 1
        rows = self.tasks.visible
        if not rows and y == 1:
            msg = "no task matches the filter: Esc clears it" if self.tasks.rows else "the session has no tasks"
            return self._line([(msg, width - 3, "italic")], None)
        if index >= len(rows):
            return Strip.blank(width, self.rich_style)
        row = rows[index]
        tagged = row.id in self.tasks.tagged
        shown = self.tasks.shown_path.get(row.id, row.path)
        parts = [("*" if tagged else " ", 1, "bold")]
        parts[0] = ("* " if tagged else "  ", 2, "bold")
        for key, _, w in layout:
            value = clean(cell(row, key, shown))
            style = ""
            if key == "family":
                style = "yellow" if unsure_none(row) else FAMILY_STYLE.get(row.family, "red")
            elif key == "review":
                style = STATUS_STYLE.get(row.status, "") if not row.verdict or row.stale else "cyan"
            elif key == "origin" and getattr(self, "_short_origin", False):
                value = ORIGIN_SHORT.get(value, value)
            elif key == "path":
                style = "path"
            parts.append((value, w, style))
        base = None
        if index == self.cursor:
            base = Style(reverse=True, bold=self.has_focus)
        elif tagged:
            base = Style(bold=True)
        return self._line(parts, base)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def render_lines_check(self) -> list[str]:
        """The visible text, line by line (for tests and debugging)."""
        return ["".join(s.text for s in self.render_line(y)) for y in range(self.size.height)]
