"""The log viewer: any size of log at once (lines read on demand, rendered lines cached), evidence
highlighted, the root line marked, a cursor line, evidence and search jumps."""
from __future__ import annotations

import bisect
from collections import OrderedDict

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.log_source import LogSource
from tui.safe import clean

CACHE_LINES = 2000
ROOT_STYLE = Style(bold=True, color="red")
EVIDENCE_STYLE = Style(bold=True, color="yellow")
MATCH_STYLE = Style(underline=True, bold=True)


class LogView(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("n", "evidence(1)", "Evidence"),
        Binding("N", "evidence(-1)", "Prev evidence", show=False),
        Binding("g", "edge(0)", "Top", show=False),
        Binding("G", "edge(1)", "Bottom", show=False),
        Binding("greater_than_sign", "match(1)", "Next match", show=False),
        Binding("less_than_sign", "match(-1)", "Prev match", show=False),
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup,b", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("left,h", "pan(-8)", "Left", show=False),
        Binding("right,l", "pan(8)", "Right", show=False),
    ]

    class Indexed(Message):
        """The worker opened and indexed the log (or says why it could not)."""

        def __init__(self, source: LogSource | None, problem: str) -> None:
            super().__init__()
            self.source = source
            self.problem = problem

    class Moved(Message):
        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, path: str | None, evidence=(), root: int | None = None, root_text: str = "", **kw) -> None:
        super().__init__(**kw)
        self.path = path
        self.source: LogSource | None = None
        self.indexing = bool(path)
        self.problem = "indexing the log..." if path else "this task has no log file"
        self.root = root                                  # 1-based line of the file
        self.root_text = root_text
        self.evidence = sorted({n for n in evidence if n})  # 1-based
        self._evidence_set = set(self.evidence)
        self.cursor = 0                                   # 0-based
        self.query = ""
        self._cache: OrderedDict[int, Strip] = OrderedDict()
        self._gutter = 4

    @property
    def line_count(self) -> int:
        return len(self.source) if self.source else 0

    def on_mount(self) -> None:
        self.virtual_size = Size(self._gutter + len(self.problem), 1)
        if self.path:
            # a 1 GB log takes seconds to map and index: a thread does it, the screen answers keys meanwhile
            self.run_worker(self._index, thread=True, exit_on_error=False)

    def _index(self) -> None:
        from textual.worker import get_current_worker

        path, source, problem = self.path, None, ""
        try:
            source = LogSource(path)
        except OSError as e:
            problem = f"cannot open the log {path}: {e.strerror or e}"
        except (EOFError, ValueError, MemoryError) as e:       # a corrupt .gz
            problem = f"cannot read the log {path}: {e}"
        if get_current_worker().is_cancelled:                  # the screen closed meanwhile
            if source:
                source.close()
            return
        self.post_message(self.Indexed(source, problem))

    def on_log_view_indexed(self, message: "LogView.Indexed") -> None:
        message.stop()
        self.indexing = False
        self.source, self.problem = message.source, message.problem
        if self.source and self.source.binary:
            self.problem = "binary file: its bytes are shown one character each (· for non-printable)"
        self._gutter = len(str(self.source.lines if self.source else 1)) + 3
        self._cache.clear()
        width = self._gutter + (min(self.source.longest, 4100) if self.source else len(self.problem))
        self.virtual_size = Size(width, max(1, self.line_count))
        target = self.root or (self.evidence[0] if self.evidence else 1)
        text = self.root_text if self.root else ""
        self.goto(target, text=text)
        # the size is known only after the first layout: bring the root into view again then
        self.call_after_refresh(lambda: self.goto(target, text=text))
        self.refresh()
        self.post_message(self.Moved(self.current_line))

    def on_unmount(self) -> None:
        if self.source:
            self.source.close()

    # -- movement ---------------------------------------------------------------------------------

    @property
    def current_line(self) -> int:
        """The 1-based file line under the cursor (a long line spans several rows)."""
        return int(self.source.row_line[self.cursor]) + 1 if self.source and self.line_count else 0

    def goto(self, line: int, center: bool = True, text: str = "") -> None:
        """Put the cursor on 1-based file `line` (the row of it holding `text`, for a long line)."""
        if not self.line_count:
            return
        self.goto_row(self.source.row_of_line(line - 1, text), center)

    def goto_row(self, row: int, center: bool = True) -> None:
        if not self.line_count:
            return
        self.cursor = max(0, min(row, self.line_count - 1))
        height = max(1, self.size.height or 20)
        top = self.scroll_offset.y
        if center and not (top <= self.cursor < top + height):
            self.scroll_to(y=max(0, self.cursor - height // 3), animate=False, immediate=True)
        elif self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)
        self.refresh()
        self.post_message(self.Moved(self.current_line))

    def action_move(self, delta: int) -> None:
        self.goto_row(self.cursor + delta, center=False)

    def action_page(self, direction: int) -> None:
        self.goto_row(self.cursor + direction * max(1, self.size.height - 1), center=False)

    def action_edge(self, end: int) -> None:
        self.goto_row(self.line_count - 1 if end else 0)

    def action_pan(self, delta: int) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x + delta), animate=False)

    def action_evidence(self, direction: int) -> None:
        here = self.current_line
        if not self.evidence:
            self.notify("no evidence lines in this diagnosis", severity="warning")
            return
        # never backwards on n (nor forwards on N): at the end, say so and stay
        if direction > 0:
            i = bisect.bisect_right(self.evidence, here)
            if i >= len(self.evidence):
                self.notify("last evidence line (N goes back)", markup=False)
                return
            target = self.evidence[i]
        else:
            i = bisect.bisect_left(self.evidence, here) - 1
            if i < 0:
                self.notify("first evidence line (n goes on)", markup=False)
                return
            target = self.evidence[i]
        self.goto(target)

    def search(self, query: str, backward: bool = False) -> bool:
        self.query = query
        self._cache.clear()
        if not self.source:
            return False
        found = self.source.search(query, self.cursor, backward=backward)
        if found is None:
            self.notify(f"not found: {clean(query)}", severity="warning", markup=False)
            self.refresh()
            return False
        self.goto_row(found)
        return True

    def action_match(self, direction: int) -> None:
        if self.query:
            self.search(self.query, backward=direction < 0)

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "match":
            return True if self.query else None        # shown greyed until there is a search
        if action == "evidence":
            return True if self.evidence else None
        return True

    # -- rendering --------------------------------------------------------------------------------

    def _render(self, i: int) -> Strip:
        strip = self._cache.get(i)
        if strip is not None:
            self._cache.move_to_end(i)
            return strip
        n = int(self.source.row_line[i]) + 1
        mark = ">" if n == self.root else ("*" if n in self._evidence_set else " ")
        label = "↪" if self.source.is_continuation(i) else str(n)
        gutter = Text(f"{label:>{self._gutter - 3}} {mark} ", style="dim" if mark == " " else "bold", end="")
        body = clean(self.source.line(i))
        text = Text(body, end="", no_wrap=True)
        if n == self.root:
            text.stylize(ROOT_STYLE)
        elif n in self._evidence_set:
            text.stylize(EVIDENCE_STYLE)
        if self.query:
            low, q = body.lower(), self.query.lower()
            at = low.find(q)
            while at >= 0 and q:
                text.stylize(MATCH_STYLE, at, at + len(q))
                at = low.find(q, at + len(q))
        line = gutter + text
        strip = Strip(list(line.render(self.app.console)), line.cell_len)
        self._cache[i] = strip
        if len(self._cache) > CACHE_LINES:
            self._cache.popitem(last=False)
        return strip

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        i = scroll_y + y
        if not self.source or not self.line_count:
            if y == 0:
                msg = Text(clean(self.problem or "(empty log)"), style="italic", end="")
                return Strip(list(msg.render(self.app.console)), msg.cell_len).apply_style(self.rich_style).crop_extend(
                    0, width, self.rich_style)
            return Strip.blank(width, self.rich_style)
        if i >= self.line_count:
            return Strip.blank(width, self.rich_style)
        strip = self._render(i).apply_style(self.rich_style)    # no segment without a style (NO_COLOR filter)
        if i == self.cursor:
            strip = strip.apply_style(Style(reverse=True) if self.has_focus else Style(underline=True))
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def screen_text(self) -> list[str]:
        """What the viewer shows now, line by line (for tests)."""
        return ["".join(s.text for s in self.render_line(y)) for y in range(self.size.height)]
