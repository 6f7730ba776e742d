"""`?`: every key that applies on the screen underneath, read from its live bindings."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEY_NAMES = {"greater_than_sign": ">", "less_than_sign": "<", "question_mark": "?", "slash": "/",
             "space": "space", "escape": "Esc", "enter": "Enter"}


def key_label(key: str) -> str:
    return ", ".join(KEY_NAMES.get(k.strip(), k.strip()) for k in key.split(","))


class HelpScreen(ModalScreen):
    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Back")]
    DEFAULT_CLASSES = "picker"

    def __init__(self, bindings: list[tuple[str, str, bool]], about: str) -> None:
        super().__init__()
        self._bindings_list = bindings
        self._about = about

    def compose(self):
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("key", no_wrap=True)
        table.add_column("what it does")
        seen = set()
        for key, description, enabled in self._bindings_list:
            if (key, description) in seen or not description:
                continue
            seen.add((key, description))
            table.add_row(Text(key_label(key), style="bold"),
                          Text(description + ("" if enabled else "  (not now)"), style="" if enabled else "dim"))
        with Vertical(classes="dialog help"):
            yield Static(Text("Keys (Esc closes; arrows and page keys scroll)", style="bold"))
            with VerticalScroll(id="help-body"):
                yield Static(table)
                yield Static(Text(self._about, style="dim"))
