"""docs/tui.md lists every key the TUI binds, in the section of the screen that binds it."""
import re
from pathlib import Path

import pytest

DOC = Path(__file__).parent.parent / "docs" / "tui.md"
NAMES = {"slash": "/", "question_mark": "?", "right_square_bracket": "]", "left_square_bracket": "[",
         "greater_than_sign": ">", "less_than_sign": "<"}


def _sections() -> dict[str, str]:
    out = {}
    for block in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        head = block.split("\n", 1)[0]
        for name in re.findall(r"\((.*?)\)", head)[-1:]:
            for cls in name.split(","):
                out[cls.strip()] = block
    return out


@pytest.mark.parametrize("module, cls", [
    ("tui.main_screen", "MainScreen"), ("tui.task_table", "TaskTable"), ("tui.task_screen", "TaskScreen"),
    ("tui.log_view", "LogView"), ("tui.pickers", "VerdictPicker"), ("tui.pickers", "OriginPicker"),
    ("tui.pickers", "NoteEditor")])
def test_every_bound_key_is_in_the_docs(module, cls):
    import importlib

    screen = getattr(importlib.import_module(module), cls)
    text = _sections()[cls]
    missing = []
    for b in screen.BINDINGS:
        for key in b.key.split(","):
            if f"`{NAMES.get(key, key)}`" not in text:
                missing.append(key)
    assert not missing, f"docs/tui.md, section for {cls}: keys not described: {missing}"
