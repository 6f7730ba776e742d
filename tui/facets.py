"""Facets: task counts by family and by origin (among the rows the text filter keeps); Enter filters."""
from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class Facets(OptionList):
    class Picked(Message):
        def __init__(self, kind: str, value: str) -> None:
            super().__init__()
            self.kind = kind
            self.value = value

    def show(self, families, origins, family: str | None, origin: str | None) -> None:
        highlighted = self.highlighted
        options = [Option(Text("family", style="bold underline"), disabled=True)]
        for name, n in families:
            options.append(self._option("family", name, n, name == family))
        options.append(Option(Text("origin", style="bold underline"), disabled=True))
        for name, n in origins:
            options.append(self._option("origin", name, n, name == origin))
        self.clear_options()
        self.add_options(options)
        if highlighted is not None and highlighted < len(options):
            self.highlighted = highlighted

    @staticmethod
    def _option(kind: str, name: str, n: int, active: bool) -> Option:
        text = Text(end="", no_wrap=True)
        text.append("● " if active else "  ", style="bold")
        text.append(f"{name:<22}", style="bold" if active else "")
        text.append(f"{n:>6}")
        return Option(text, id=f"{kind}:{name}")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        kind, _, value = (event.option.id or "").partition(":")
        self.post_message(self.Picked(kind, value))
