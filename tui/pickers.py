"""Modal pickers: the verdict, a family/origin for a reclassification, and the note editor."""
from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, TextArea
from textual.widgets.option_list import Option

from signatures.taxonomy import FAMILIES, ORIGINS
from tui.safe import clean

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


def family_matches(q: str, family: str) -> bool:
    """Type-ahead: a substring (`memory`), word prefixes in order (`dev-as`, `sh mem`), or initials (`ima`)."""
    q = q.strip().lower()
    if not q or q in family:
        return True
    parts = family.split("-")
    if "".join(p[0] for p in parts).startswith(q):
        return True
    tokens = [t for t in q.replace(" ", "-").split("-") if t]
    i = 0
    for p in parts:
        if i < len(tokens) and p.startswith(tokens[i]):
            i += 1
    return i == len(tokens)


def _family_option(fam: str, what: str, current: str) -> Option:
    prompt = Text(end="")
    prompt.append(f"{fam:<24}", style="bold" if fam != current else "bold reverse")
    prompt.append(what, style="dim")
    return Option(prompt, id=fam)


class FamilyPicker(_Picker):
    """Type to narrow the families (any part of the name: `sha` -> shape-stride-mismatch,
    shared-memory-exceeded), arrows to choose, Enter to pick; starts on the task's current family."""
    BINDINGS = [Binding("down", "focus_list", show=False)]

    def __init__(self, current: str = "") -> None:
        self.current = current
        super().__init__("Reclassify as which family? (type to narrow)", [
            _family_option(f, w, current) for f, w in FAMILIES.items()])

    def compose(self):
        with Vertical(classes="dialog"):
            yield Label(Text(self._title, style="bold"))
            box = Input(placeholder="type part of a family name", id="typeahead")
            box.cursor_blink = False          # a steady cursor: the screen is the same at every instant
            yield box
            yield OptionList(*self._options)

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        names = list(FAMILIES)
        if self.current in names:
            ol.highlighted = names.index(self.current)
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        q = event.value.strip().lower()
        ol = self.query_one(OptionList)
        ol.clear_options()
        hits = [(f, w) for f, w in FAMILIES.items() if family_matches(q, f)]
        ol.add_options([_family_option(f, w, self.current) for f, w in hits])
        if hits:
            ol.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        ol = self.query_one(OptionList)
        if ol.option_count and ol.highlighted is not None:
            self.dismiss(ol.get_option_at_index(ol.highlighted).id)

    def action_focus_list(self) -> None:
        self.query_one(OptionList).focus()


class OriginPicker(_Picker):
    """Esc goes back to the family step (the app reopens it), not out of the reclassification."""
    BINDINGS = [Binding(key, f"pick('{org}')", org, show=False)
                for org, key in (("kernel-logic", "k"), ("runtime-assumption", "a"), ("resource-limit", "l"),
                                 ("environment", "v"), ("hardware", "h"), ("numerics", "n"))]

    def __init__(self, family: str, current: str = "") -> None:
        options = []
        keys = {b.action.split("'")[1]: b.key for b in self.BINDINGS}
        for org, what in ORIGINS.items():
            prompt = Text(end="")
            prompt.append(f"{keys.get(org, ' ')}  ", style="bold")
            prompt.append(f"{org:<20}", style="bold reverse" if org == current else "bold")
            prompt.append(what, style="dim")
            options.append(Option(prompt, id=org))
        options.append(Option(Text("   (no origin)", style="italic"), id="-"))
        self._current = current
        super().__init__(f"{family}: where does the fault live? (Esc: back to the family)", options)

    def on_mount(self) -> None:
        names = list(ORIGINS)
        if self._current in names:
            self.query_one(OptionList).highlighted = names.index(self._current)

    def action_pick(self, origin: str) -> None:
        self.dismiss(origin)


class NoteEditor(ModalScreen):
    """Esc and ctrl+s both save: backing out never loses what was typed."""
    BINDINGS = [Binding("escape", "save", "Save & back"), Binding("ctrl+s", "save", "Save")]
    DEFAULT_CLASSES = "picker"

    def __init__(self, note: str, title: str) -> None:
        super().__init__()
        # another reviewer's note may carry terminal escapes (OSC 52 writes the clipboard): the editor
        # shows and keeps them as visible text
        self._note = "\n".join(clean(line) for line in (note or "").split("\n"))
        self._title = clean(title)

    def compose(self):
        with Vertical(classes="dialog"):
            yield Label(Text(self._title + "  (Esc or ctrl+s saves)", style="bold"))
            yield TextArea(self._note, id="note", soft_wrap=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        self.dismiss(text if text != self._note else None)
