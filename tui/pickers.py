"""Modal pickers: the verdict, a family/origin for a reclassification, and the note editor."""
from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, TextArea
from textual.widgets.option_list import Option

from signatures.taxonomy import FAMILIES, ORIGINS

VERDICT_KEYS = (("confirmed", "c", "the diagnosis is right"),
                ("reclassified", "r", "another family/origin: pick it next"),
                ("needs-rerun", "e", "cannot tell from this log: run it again"),
                ("not-a-failure", "x", "the task did not fail"))


class _Picker(ModalScreen):
    BINDINGS = [Binding("escape", "dismiss(None)", "Back")]
    DEFAULT_CLASSES = "picker"

    def __init__(self, title: str, options: list[Option]) -> None:
        super().__init__()
        self._title = title
        self._options = options

    def compose(self):
        with Vertical(classes="dialog"):
            yield Label(Text(self._title, style="bold"))
            yield OptionList(*self._options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)


class VerdictPicker(_Picker):
    BINDINGS = [Binding(key, f"pick('{verdict}')", verdict, show=False) for verdict, key, _ in VERDICT_KEYS]

    def __init__(self, count: int) -> None:
        options = []
        for verdict, key, what in VERDICT_KEYS:
            prompt = Text(end="")
            prompt.append(f"{key}  ", style="bold")
            prompt.append(f"{verdict:<14}", style="bold cyan")
            prompt.append(what, style="dim")
            options.append(Option(prompt, id=verdict))
        super().__init__(f"Verdict for {count} task{'s' if count != 1 else ''}", options)

    def action_pick(self, verdict: str) -> None:
        self.dismiss(verdict)


class FamilyPicker(_Picker):
    def __init__(self, current: str = "") -> None:
        options = []
        for fam, what in FAMILIES.items():
            prompt = Text(end="")
            prompt.append(f"{fam:<24}", style="bold" if fam != current else "bold reverse")
            prompt.append(what, style="dim")
            options.append(Option(prompt, id=fam))
        super().__init__("Reclassify as which family?", options)


class OriginPicker(_Picker):
    def __init__(self, family: str) -> None:
        options = []
        for org, what in ORIGINS.items():
            prompt = Text(end="")
            prompt.append(f"{org:<20}", style="bold")
            prompt.append(what, style="dim")
            options.append(Option(prompt, id=org))
        options.append(Option(Text("(no origin)", style="italic"), id="-"))
        super().__init__(f"{family}: where does the fault live?", options)


class NoteEditor(ModalScreen):
    """Esc and ctrl+s both save: backing out never loses what was typed."""
    BINDINGS = [Binding("escape", "save", "Save & back"), Binding("ctrl+s", "save", "Save")]
    DEFAULT_CLASSES = "picker"

    def __init__(self, note: str, title: str) -> None:
        super().__init__()
        self._note = note
        self._title = title

    def compose(self):
        with Vertical(classes="dialog"):
            yield Label(Text(self._title + "  (Esc or ctrl+s saves)", style="bold"))
            yield TextArea(self._note, id="note", soft_wrap=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        self.dismiss(text if text != self._note else None)
