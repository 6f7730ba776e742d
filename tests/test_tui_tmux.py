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


def _db_verdicts(db) -> dict[str, tuple]:
    from diagnose.store import Store
    store = Store(db)
    try:
        return {os.path.basename(r.path): (r.verdict, r.verdict_family, r.verdict_origin) for r in store.rows()}
    finally:
        store.close()


def _wait_db(db, check, timeout=15.0):
    """The store writes run on a worker thread: poll the database until `check` holds."""
    end = time.time() + timeout
    while time.time() < end:
        got = _db_verdicts(db)
        if check(got):
            return got
        time.sleep(0.1)
    raise AssertionError(f"the database never reached the expected state: {got}")


def _count(got, verdict):
    return sum(v[0] == verdict for v in got.values())


def test_real_terminal_keyboard_flow_for_a_day_of_tasks(tmp_path):
    """The reviewer's flow by keyboard only: one verdict on a signature cluster (g A c), undo (z), confirm and
    on to the next unreviewed (C), reclassify by type-ahead (r), next unreviewed (u), export (w); a file name
    and another reviewer's note carrying escapes (OSC 0 title, OSC 52 `rm -rf ~` to the clipboard) are shown
    as text, and neither the terminal title nor its clipboard changes."""
    from diagnose.model import Diagnosis
    from diagnose.store import Store

    db = make_session(tmp_path, extra=20)      # 10 oom tasks with one signature (even), 10 none (odd)
    evil = tmp_path / "logs" / "evil\x1b]0;pwned\x07.log"
    evil.write_text("step 1\nRuntimeError: boom\n")
    store = Store(db)
    tid = store.put(str(evil), str(evil), "hevil", "0", Diagnosis(path=str(evil), family="unknown", confidence=0.3,
                                                                   title="hostile name"))
    store.set_note(tid, "see \x1b]52;c;cm0gLXJmIH4=\x07 here", "mallory")    # base64 of `rm -rf ~`
    store.close()
    exe = Path(sys.executable).with_name("diagnose")
    cmd = (f"cd {tmp_path} && TEXTUAL_ANIMATIONS=none "
           f"{exe if exe.exists() else sys.executable + ' -m cli'} tui {db} --reviewer flow")
    term = Term(cmd)
    # an OSC 52 that reached tmux would land in its paste buffers: let it, so that the check below can fail
    subprocess.run(term.t + ["set-option", "-g", "set-clipboard", "on"], check=False)
    try:
        before = term.title()
        term.wait_for("23/23 tasks")
        # -- a signature cluster, one verdict: g A c (3 keys for 10 tasks), then undo and again ----------
        term.keys("/")
        term.wait_for("filter: words")
        time.sleep(0.2)
        term.keys("more000", literal=True)
        term.wait_for("1/23 tasks")
        term.keys("Enter")
        time.sleep(0.3)
        term.keys("Escape")                    # Esc alone (then a pause): the filter goes, the cursor stays
        term.wait_for("23/23 tasks")
        term.keys("g")
        term.wait_for("cluster: 10 tasks")
        term.keys("A")
        term.wait_for("10 tasks tagged")
        term.keys("c")
        term.wait_for("confirmed: 10 tasks")
        _wait_db(db, lambda g: _count(g, "confirmed") == 10)
        term.keys("z")
        term.wait_for("undone: confirmed on 10 tasks")
        _wait_db(db, lambda g: _count(g, "confirmed") == 0)
        term.keys("A")
        term.wait_for("10 tasks tagged")
        term.keys("c")
        _wait_db(db, lambda g: _count(g, "confirmed") == 10)
        time.sleep(0.3)
        term.keys("Escape")                    # out of the cluster
        term.wait_for("23/23 tasks")
        # -- the task screen: confirm and on to the next unreviewed (C), reclassify by type-ahead, u ---------
        term.keys("/")
        term.wait_for("filter: words")
        time.sleep(0.2)
        term.keys("ima.log", literal=True)
        term.wait_for("1/23 tasks")
        term.keys("Enter")
        time.sleep(0.3)
        term.keys("Escape")
        term.wait_for("23/23 tasks")
        term.keys("Enter")
        term.wait_for("line 5/7")
        term.keys("C")
        term.wait_for("more001.log")           # the next task without a verdict, after ima.log
        _wait_db(db, lambda g: g["ima.log"][0] == "confirmed")
        term.keys("r")
        term.wait_for("Reclassify as which family?")
        time.sleep(0.2)
        term.keys("compil", literal=True)
        time.sleep(0.3)
        term.keys("Enter")
        term.wait_for("where does the fault live?")
        term.keys("v")                          # environment
        term.wait_for("reclassified → compile-error/environment  by flow")   # the review panel
        _wait_db(db, lambda g: g["more001.log"] == ("reclassified", "compile-error", "environment"))
        term.keys("u")
        term.wait_for("more003.log")
        time.sleep(0.3)
        term.keys("Escape")
        term.wait_for("23/23 tasks")
        # -- export from the TUI ---------------------------------------------------------------------------
        term.keys("w")
        term.wait_for("exported 23 tasks")
        out = Path(os.path.splitext(db)[0] + "-review.md")
        text = out.read_text()
        assert text.count("**Verdict:** confirmed by flow") == 11
        assert text.count("**Verdict:** reclassified by flow") == 1
        # -- hostile text: the file name and mallory's OSC 52 note, as visible text ------------------------
        term.keys("/")
        term.wait_for("filter: words")
        time.sleep(0.2)
        term.keys("evil", literal=True)
        term.wait_for("1/23 tasks")
        term.keys("Enter")
        time.sleep(0.3)
        term.keys("Enter")
        screen = term.wait_for("RuntimeError: boom")
        assert "evil\\e]0;pwned\\x07.log" in screen          # the file name, at the top
        assert "\\e]52;c;cm0gLXJmIH4=\\x07" in screen        # the note, in the review panel
        term.keys("m")
        screen = term.wait_for("Esc or ctrl+s saves")
        assert "\\e]52;c;cm0gLXJmIH4=\\x07" in screen
        time.sleep(0.3)
        term.keys("Escape")                    # unchanged: nothing saved
        time.sleep(0.5)
        assert term.title() == before and "pwned" not in term.title()
        buffers = subprocess.run(term.t + ["list-buffers"], capture_output=True, text=True).stdout
        assert buffers.strip() == "", f"the clipboard (tmux buffers) was written: {buffers!r}"
        term.keys("q")
        time.sleep(0.5)
        term.keys("q")
        time.sleep(0.5)
    finally:
        term.close()
    got = _db_verdicts(db)
    assert _count(got, "confirmed") == 11 and got[evil.name][0] == ""
