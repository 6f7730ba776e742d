"""End to end in a real terminal (tmux): the app runs, keys work, and hostile log text (OSC 52, OSC 0,
cursor movement, markup) shows as visible text while the terminal title stays unchanged."""
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from test_tui_support import make_session

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(not TMUX, reason="tmux is not installed: `make sysdeps` installs it where it can")


class Term:
    def __init__(self, cmd: str, width=120, height=40):
        self.sock = f"diag-{uuid.uuid4().hex[:8]}"
        self.t = ["tmux", "-L", self.sock]
        subprocess.run(self.t + ["new-session", "-d", "-s", "S", "-x", str(width), "-y", str(height),
                                 cmd + "; sleep 60"], check=True)
        subprocess.run(self.t + ["set-option", "-g", "allow-rename", "on"], check=False)

    def screen(self) -> str:
        return subprocess.run(self.t + ["capture-pane", "-p", "-t", "S"], capture_output=True, text=True).stdout

    def title(self) -> str:
        return subprocess.run(self.t + ["display-message", "-p", "-t", "S", "#{pane_title}"],
                              capture_output=True, text=True).stdout.strip()

    def keys(self, *keys, literal=False):
        subprocess.run(self.t + ["send-keys", "-t", "S"] + (["-l"] if literal else []) + list(keys), check=True)

    def wait_for(self, text: str, timeout=15.0) -> str:
        end = time.time() + timeout
        while time.time() < end:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen()}")

    def close(self):
        subprocess.run(self.t + ["kill-server"], check=False)


def test_real_terminal_review_and_hostile_text(tmp_path):
    db = make_session(tmp_path)
    exe = Path(sys.executable).with_name("diagnose")
    cmd = f"cd {tmp_path} && TEXTUAL_ANIMATIONS=none {exe if exe.exists() else sys.executable + ' -m cli'} tui {db} --reviewer tmuxer"
    term = Term(cmd)
    try:
        before = term.title()
        term.wait_for("2/2 tasks")
        term.keys("/")
        term.wait_for("filter: words")       # the box has focus once it shows; then type
        time.sleep(0.2)
        term.keys("hostile", literal=True)
        term.wait_for("1/2 tasks")
        term.keys("Enter")
        time.sleep(0.3)
        term.keys("Enter")
        screen = term.wait_for("title change")
        # the escapes are shown as text...
        assert "\\e]0;pwned-title\\x07" in screen
        assert "\\e]52;c;SGVsbG8=\\x07" in screen
        assert "\\e[2J\\e[H cursor movement" in screen
        # ...markup is shown, not parsed...
        assert "[/oops] closing tag" in screen and "[bold red]markup[/bold red]" in screen
        # ...and the terminal title did not change
        assert term.title() == before and "pwned" not in term.title()
        term.keys("x")
        term.wait_for("not-a-failure")
        term.keys("Escape")
        time.sleep(0.3)
        term.keys("q")
        time.sleep(1.0)
    finally:
        term.close()
    from diagnose.store import Store
    store = Store(db)
    row = next(r for r in store.rows() if r.path.endswith("hostile.log"))
    assert (row.verdict, row.reviewer) == ("not-a-failure", "tmuxer")
    store.close()
