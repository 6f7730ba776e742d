"""Pilot tests of the triage TUI: filter, open a task, jump through evidence, set a verdict, reopen."""
import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from test_tui_support import make_session, settle, sync  # noqa: E402

from diagnose.store import Store  # noqa: E402
from tui.app import TriageApp  # noqa: E402
from tui.log_view import LogView  # noqa: E402
from tui.main_screen import MainScreen  # noqa: E402
from tui.task_screen import TaskScreen  # noqa: E402




@sync
async def test_filter_open_jump_verdict_and_reopen(tmp_path):
    db = make_session(tmp_path, extra=30)
    app = TriageApp(db, reviewer="rev1")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert len(app.tasks.visible) == 32
        await pilot.press("slash", *"illegal", "enter")
        await settle(pilot)
        assert [os.path.basename(r.path) for r in app.tasks.visible] == ["ima.log"]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen)
        log = app.screen.query_one(LogView)
        assert log.cursor + 1 == 5                      # opens on the root line
        await pilot.press("n")
        assert log.cursor + 1 == 6
        await pilot.press("n")
        assert log.cursor + 1 == 6                      # the last evidence line: n never jumps backwards
        await pilot.press("N")
        assert log.cursor + 1 == 5
        await pilot.press("G")
        assert log.cursor + 1 == 7
        await pilot.press("slash", *"cublas", "enter")
        await settle(pilot)
        assert log.cursor + 1 == 6
        await pilot.press("escape", "r")
        await settle(pilot)
        await pilot.press(*"dev-as", "enter")   # type-ahead: "dev-as" narrows to device-assert
        await settle(pilot)
        await pilot.press("escape")             # Esc in the origin step goes back to the family step...
        await settle(pilot)
        assert type(app.screen).__name__ == "FamilyPicker"
        await pilot.press(*"device-assert", "enter")
        await settle(pilot)
        await pilot.press("k")                  # ...and k picks kernel-logic
        await settle(pilot)
        await pilot.press("m", *"checked by hand", "escape")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
    store = Store(db)
    row = next(r for r in store.rows() if r.path.endswith("ima.log"))
    assert (row.verdict, row.verdict_family, row.verdict_origin) == ("reclassified", "device-assert", "kernel-logic")
    assert row.note == "checked by hand" and row.reviewer == "rev1"
    store.close()

    app = TriageApp(db, reviewer="rev1")                # reopen: the verdict is there
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"device-assert", "enter")
        await settle(pilot)
        assert [os.path.basename(r.path) for r in app.tasks.visible] == ["ima.log"]
        assert app.tasks.visible[0].verdict == "reclassified"


@sync
async def test_tag_rows_for_a_bulk_verdict_and_sort(tmp_path):
    db = make_session(tmp_path, extra=6)
    app = TriageApp(db, reviewer="rev2")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("space", "space", "space")
        assert len(app.tasks.tagged) == 3
        await pilot.press("x")
        await settle(pilot)
        assert not app.tasks.tagged
        assert sum(r.verdict == "not-a-failure" for r in app.tasks.rows) == 3
        await pilot.press("4")          # sort by confidence (highest first)
        confs = [r.confidence for r in app.tasks.visible]
        assert confs == sorted(confs, reverse=True)
        await pilot.press("4")
        assert [r.confidence for r in app.tasks.visible] == sorted(confs)
        await pilot.press("question_mark")
        await settle(pilot)
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape", "q")
        await settle(pilot)
    assert not app.is_running


@sync
async def test_no_color_keeps_marks(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    db = make_session(tmp_path)
    app = TriageApp(db)
    assert app.no_color
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"ima.log", "enter", "enter")
        await settle(pilot)
        text = app.screen.query_one(LogView).screen_text()
        assert any(line.lstrip().startswith("5 >") for line in text)      # root marked without colour
        assert any(line.lstrip().startswith("6 *") for line in text)      # evidence marked
