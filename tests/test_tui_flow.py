"""Pilot tests of the reviewer's flow at scale: clusters and bulk verdicts with undo, review filters,
moving between tasks, two TUIs on one database, export, and the log viewer's hard cases."""
import os
import sqlite3

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from test_tui_support import make_session, settle, sync  # noqa: E402

from diagnose.model import Diagnosis, Line  # noqa: E402
from diagnose.store import Store  # noqa: E402
from tui.app import TriageApp  # noqa: E402
from tui.diagnosis_panel import DiagnosisPanel  # noqa: E402
from tui.log_source import LogSource  # noqa: E402
from tui.log_view import LogView  # noqa: E402
from tui.main_screen import MainScreen  # noqa: E402
from tui.pickers import NoteEditor, family_matches  # noqa: E402
from tui.task_screen import TaskScreen  # noqa: E402




def _verdicts(db):
    s = Store(db)
    try:
        return {os.path.basename(r.path): r.verdict for r in s.rows()}
    finally:
        s.close()


@sync
async def test_cluster_tag_all_one_verdict_and_undo(tmp_path):
    db = make_session(tmp_path, extra=20)
    app = TriageApp(db, reviewer="bulk")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        t = app.tasks
        first_oom = next(i for i, r in enumerate(t.visible) if r.signature == "oom.torch-caching-allocator")
        app.screen.table.cursor = first_oom
        await pilot.press("g")                      # the cluster of this signature
        assert t.cluster == ("signature", "oom.torch-caching-allocator") and len(t.visible) == 10
        await pilot.press("A", "c")                 # tag all shown, one verdict: 3 keys for 10 tasks
        await settle(pilot)
        got = _verdicts(db)
        assert sum(v == "confirmed" for v in got.values()) == 10
        await pilot.press("z")                      # undo puts all ten back
        await settle(pilot)
        assert not any(_verdicts(db).values())
        await pilot.press("g")                      # g again: the whole family
        assert t.cluster == ("family", "oom")
        await pilot.press("g", "escape")
        assert t.cluster is None
        await pilot.press("space", "c")             # one task confirmed, then cleared
        await settle(pilot)
        assert sum(bool(v) for v in _verdicts(db).values()) == 1
        await pilot.press("up", "backspace")
        await settle(pilot)
        assert not any(_verdicts(db).values())


@sync
async def test_review_filter_and_next_unreviewed_from_the_task_screen(tmp_path):
    db = make_session(tmp_path, extra=6)
    app = TriageApp(db, reviewer="walker")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen)
        first = app.screen.task_.row.id
        await pilot.press("C")                      # confirm, and on to the next unreviewed task
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen) and app.screen.task_.row.id != first
        second = app.screen.task_.row.id
        await pilot.press("right_square_bracket")   # ] next task, [ previous
        await settle(pilot)
        third = app.screen.task_.row.id
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert app.screen.task_.row.id == second and third != second
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.tasks.visible[0].verdict == "confirmed"   # the list is fresh after a verdict given there
        await pilot.press("R")                              # unreviewed only
        assert all(not r.verdict for r in app.tasks.visible) and len(app.tasks.visible) == len(app.tasks.rows) - 1


@sync
async def test_two_tuis_on_one_database_see_each_other(tmp_path):
    db = make_session(tmp_path, extra=4)
    app = TriageApp(db, reviewer="alice")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        target = app.tasks.visible[0]
        other = Store(db)
        other.set_verdict([target.id], "needs-rerun", "bob")
        other.close()
        app.check_for_changes()                     # what the 2 s poll does
        await settle(pilot)
        row = next(r for r in app.tasks.rows if r.id == target.id)
        assert row.verdict == "needs-rerun" and row.reviewer == "bob"
        # alice confirming it now is told she replaces bob's verdict (and can undo)
        other = Store(db)
        other.set_verdict([target.id], "not-a-failure", "bob")
        other.close()
        app.screen.table.cursor = 0
        await pilot.press("c")
        await settle(pilot)
        texts = [n.message for n in app._notifications]
        assert any("another reviewer" in m for m in texts)
        await pilot.press("w")                      # export from inside the TUI
        await settle(pilot)
        assert os.path.exists(os.path.splitext(db)[0] + "-review.md")


@sync
async def test_a_locked_database_is_said_not_lost(tmp_path):
    db = make_session(tmp_path, extra=2)
    app = TriageApp(db, reviewer="alice")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        lock = sqlite3.connect(db, timeout=0)
        lock.execute("BEGIN EXCLUSIVE")
        app.writer.timeout_s = 0.05                 # the writer's wait for the lock (5 s in use)
        await pilot.press("c")
        await settle(pilot)
        assert any("NOT saved" in n.message for n in app._notifications)
        lock.rollback()
        lock.close()
        await pilot.press("c")
        await settle(pilot)
    assert sum(bool(v) for v in _verdicts(db).values()) == 1


def _one_task_session(tmp_path, log_bytes: bytes, name="task.log", root=None, root_text=""):
    tmp_path.mkdir(parents=True, exist_ok=True)
    log = tmp_path / name
    log.write_bytes(log_bytes)
    db = str(tmp_path / "s.db")
    s = Store(db)
    s.put(str(log), str(log), "h", "0", Diagnosis(path=str(log), family="oom", confidence=0.9, title="t",
                                                  root=Line(root, root_text) if root else None,
                                                  next_step="run `nvidia-smi`"))
    s.close()
    return db, log


@sync
async def test_root_line_in_view_and_a_200mb_style_single_line(tmp_path):
    lines = [f"step {i} ok" for i in range(1000)]
    lines[699] = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    db, _ = _one_task_session(tmp_path, ("\n".join(lines) + "\n").encode(), root=700, root_text=lines[699])
    app = TriageApp(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await settle(pilot)
        view = app.screen.query_one(LogView)
        assert any("CUDA out of memory" in line for line in view.screen_text())
    # one 9 MB line with the failure near its end: shown on the row that holds it
    big = b"x" * 9_000_000 + b" RuntimeError: CUDA error: an illegal memory access was encountered " + b"y" * 5000
    db2, log2 = _one_task_session(tmp_path / "big", big, root=1,
                                  root_text="RuntimeError: CUDA error: an illegal memory access was encountered")
    src = LogSource(str(log2))
    assert src.lines == 1 and len(src) > 2000
    src.close()
    app = TriageApp(db2)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await settle(pilot)
        view = app.screen.query_one(LogView)
        shown = "\n".join(view.screen_text())
        assert "illegal memory" in shown and "↪" in shown


def test_binary_log_is_drawn_as_visible_bytes(tmp_path):
    p = tmp_path / "core.log"
    p.write_bytes(b"\x7fELF\x02\x01\x00\x00\x1b[2J\x00\xff\xfe" * 100)
    src = LogSource(str(p))
    assert src.binary and all(32 <= ord(c) < 127 or c == "·" for c in src.line(0))
    src.close()


@sync
async def test_hostile_names_and_notes_reach_the_screen_as_text(tmp_path):
    name = "evil\x1b]0;pwned\x07.log"
    db, log = _one_task_session(tmp_path, b"line\n", name=name)
    s = Store(db)
    row = s.rows()[0]
    s.set_note(row.id, "see \x1b]52;c;cm0gLXJmIH4=\x07 here", "mallory")
    s.close()
    log.unlink()                                      # the deleted-log message names the path
    app = TriageApp(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen.query_one(LogView)
        text = "\n".join(view.screen_text())
        assert "\x1b" not in text and "\\e]0;pwned" in text
        await pilot.press("m")
        await settle(pilot)
        editor = app.screen
        assert isinstance(editor, NoteEditor)
        area = editor.query_one("TextArea")
        assert "\x1b" not in area.text and "\\e]52;c;" in area.text
        assert "\x1b" not in editor._title


@sync
async def test_panel_and_help_scroll_by_keyboard_at_80x24(tmp_path):
    db = make_session(tmp_path)
    app = TriageApp(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"ima.log", "enter", "enter")
        await settle(pilot)
        panel = app.screen.query_one(DiagnosisPanel)
        await pilot.press("tab", "tab")             # log -> chain -> panel
        assert panel.has_focus
        await pilot.press("end")
        await settle(pilot)
        assert panel.scroll_y > 0 and panel.scroll_y == panel.max_scroll_y
        await pilot.press("question_mark")
        await settle(pilot)
        body = app.screen.query_one("#help-body")
        await pilot.press("end")
        await settle(pilot)
        assert body.max_scroll_y == 0 or body.scroll_y == body.max_scroll_y


@sync
async def test_empty_filter_says_so_and_escape_then_key_is_not_alt(tmp_path):
    db = make_session(tmp_path, extra=4)
    app = TriageApp(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"zzzz-no-such", "enter")
        await settle(pilot)
        lines = app.screen.table.render_lines_check()
        assert any("no task matches the filter" in line for line in lines)
        await pilot.press("alt+j")                  # what a fast Esc, j arrives as
        await settle(pilot)
        assert app.tasks.text == "" and app.screen.table.cursor == 1


def test_family_type_ahead():
    assert family_matches("dev-as", "device-assert") and family_matches("ima", "illegal-memory-access")
    assert family_matches("sh mem", "shared-memory-exceeded") and not family_matches("sh mem", "shape-stride-mismatch")
    assert family_matches("stride", "shape-stride-mismatch")


@sync
async def test_a_big_log_says_indexing_at_once_and_keys_work_meanwhile(tmp_path, monkeypatch):
    import threading

    import tui.log_view as log_view

    lines = [f"step {i} ok" for i in range(300)]
    lines[249] = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    db, _ = _one_task_session(tmp_path, ("\n".join(lines) + "\n").encode(), root=250, root_text=lines[249])
    release, started = threading.Event(), threading.Event()

    class SlowSource(LogSource):                       # indexing a 1 GB log, held until the test says
        def __init__(self, path):
            started.set()
            assert release.wait(10)
            super().__init__(path)
    monkeypatch.setattr(log_view, "LogSource", SlowSource)
    app = TriageApp(db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert started.wait(5)
        view = app.screen.query_one(LogView)
        assert view.indexing and "indexing the log..." in view.screen_text()[0]
        assert "indexing the log" in str(app.screen.top_text())
        await pilot.press("d")                         # the screen answers keys while the thread indexes
        await pilot.pause()
        assert not app.screen.query_one(DiagnosisPanel).display
        release.set()
        await settle(pilot)
        assert not view.indexing and view.current_line == 250
        assert any("> RuntimeError: CUDA out of memory" in t for t in view.screen_text())


@sync
async def test_store_writes_run_off_the_ui_thread_in_order(tmp_path, monkeypatch):
    import threading

    db = make_session(tmp_path, extra=4)
    threads, calls = set(), []
    real_set, real_restore = Store.set_verdict, Store.restore

    def set_verdict(self, ids, verdict, *a, **k):
        threads.add(threading.get_ident())
        calls.append(verdict)
        return real_set(self, ids, verdict, *a, **k)

    def restore(self, *a, **k):
        threads.add(threading.get_ident())
        calls.append("undo")
        return real_restore(self, *a, **k)
    monkeypatch.setattr(Store, "set_verdict", set_verdict)
    monkeypatch.setattr(Store, "restore", restore)
    app = TriageApp(db, reviewer="t")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("c", "x", "z")              # pressed at once: saved in the order pressed
        await settle(pilot)
    assert calls == ["confirmed", "not-a-failure", "undo"]
    assert threading.get_ident() not in threads and threads
    assert list(_verdicts(db).values()).count("confirmed") == 1


@sync
async def test_writes_still_queued_at_quit_are_made(tmp_path):
    from tui.writes import Job

    db = make_session(tmp_path, extra=2)
    app = TriageApp(db, reviewer="late")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        tid = app.tasks.visible[0].id
        app.writer.submit(Job("verdict", [tid], {"verdict": "needs-rerun"}))   # queued, no worker started yet
    assert list(_verdicts(db).values()).count("needs-rerun") == 1
