"""SVG snapshots of every screen at 80x24 and 140x45, error states included (pytest-textual-snapshot;
update with --snapshot-update after looking at the change)."""
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from test_tui_support import make_session, settle  # noqa: E402

pytest.importorskip("pytest_textual_snapshot")

SIZES = {"80x24": (80, 24), "140x45": (140, 45)}


@pytest.fixture(scope="module")
def _exclusive():
    # the fixed directory below is shared by every checkout on this machine: one test run at a time uses it
    import fcntl

    with open(Path(tempfile.gettempdir()) / "diagnose-tui-snapshot.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def session(_exclusive):
    # A fixed directory: the screen shows where the tasks live, and a snapshot must not depend on tmp names.
    base = Path(tempfile.gettempdir()) / "diagnose-tui-snapshot"
    shutil.rmtree(base, ignore_errors=True)
    db = make_session(base, extra=8)
    from diagnose.model import Diagnosis, Line
    from diagnose.store import Store
    from findings import Evidence, Finding

    store = Store(db)
    logs = base / "logs"
    (logs / "core.bin.log").write_bytes(b"\x7fELF\x02\x01\x00\x00" * 64 + b"\nsegfault\n")
    store.put(str(logs / "core.bin.log"), str(logs / "core.bin.log"), "hb", "0",
              Diagnosis(path=str(logs / "core.bin.log"), family="unknown", confidence=0.3, title="binary output"))
    store.put(str(logs / "gone.log"), str(logs / "gone.log"), "hg", "0",
              Diagnosis(path=str(logs / "gone.log"), family="oom", confidence=0.9, title="a log deleted since"))
    reviewed = Diagnosis(path=str(base / "task-softmax"), family="numerical-mismatch", origin="kernel-logic",
                         signature="numerical-mismatch.torch-assert-close", confidence=0.9,
                         title="torch.testing.assert_close: values differ beyond tolerance",
                         root=Line(3, "AssertionError: Tensor-likes are not close!"),
                         notes=["review validity: pass: It compiles and its run shows no failure.",
                                "review numerics: fail: The output is numerically wrong. Chief finding: tail tile.",
                                "review benchmark: not assessable: No benchmark script in the task."])
    (base / "task-softmax").mkdir(exist_ok=True)
    (base / "task-softmax" / "test.log").write_text("$ pytest\nE\nAssertionError: Tensor-likes are not close!\n")
    f = Finding("lint.triton.masked-load-no-other", "warning", "lint", "masked tl.load without other= feeds tl.max",
                evidence=[Evidence("kernel.py", 11, 9)], fix="pass other=-float('inf')")
    store.put(str(base / "task-softmax"), str(base / "task-softmax" / "test.log"), "hr", "0", reviewed,
              [f.to_json()])
    store.close()
    yield db
    shutil.rmtree(base, ignore_errors=True)


def _app(db):
    from tui.app import TriageApp
    return TriageApp(db, reviewer="snap")


def _open(name):
    return ["slash", *name, "enter", "enter"]


def _keys(*keys):
    """Press the keys with a pause after each, then settle: a loaded machine must not change the picture."""
    async def run(pilot):
        for k in keys:
            await pilot.press(k)
            await settle(pilot, rounds=1)      # the log is indexed and store writes are done by workers
        await settle(pilot)
        for _ in range(3):
            await pilot.pause(0.05)
    return run


@pytest.mark.parametrize("size", SIZES)
def test_main_screen(snap_compare, session, size):
    assert snap_compare(_app(session), terminal_size=SIZES[size], run_before=_keys())


@pytest.mark.parametrize("size", SIZES)
def test_task_screen(snap_compare, session, size):
    assert snap_compare(_app(session), terminal_size=SIZES[size], run_before=_keys(*(_open("ima.log"))))


@pytest.mark.parametrize("size", SIZES)
def test_task_screen_panel_scrolled_to_the_end(snap_compare, session, size):
    assert snap_compare(_app(session), terminal_size=SIZES[size], run_before=_keys(*(_open("ima.log") + ["tab", "tab", "end"])))


def test_uncertain_task_screen_with_guidance(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=SIZES["140x45"], run_before=_keys(*(_open("hostile"))))


@pytest.mark.parametrize("size", SIZES)
def test_reviewed_task_with_findings(snap_compare, session, size):
    assert snap_compare(_app(session), terminal_size=SIZES[size], run_before=_keys(*(_open("task-softmax"))))


def test_binary_log(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=SIZES["80x24"], run_before=_keys(*(_open("core.bin"))))


def test_missing_log(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=SIZES["80x24"], run_before=_keys(*(_open("gone.log"))))


@pytest.mark.parametrize("size", SIZES)
def test_help(snap_compare, session, size):
    assert snap_compare(_app(session), terminal_size=SIZES[size], run_before=_keys(*(["question_mark"])))


def test_help_scrolled_to_its_end(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=SIZES["80x24"], run_before=_keys(*(["question_mark", "end"])))


def test_reclassify_picker_starts_on_the_current_family(snap_compare, session):
    # typing narrows the list (tests/test_tui_flow.py); the picture is the picker as it opens
    assert snap_compare(_app(session), terminal_size=SIZES["80x24"], run_before=_keys(*(_open("ima.log") + ["r"])))


def test_cluster_tagged(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=SIZES["80x24"], run_before=_keys(*(["slash", *"more000", "enter",
                                                                            "escape", "g", "A"])))


def test_empty_filter(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=SIZES["80x24"], run_before=_keys(*(["slash", *"nothing-matches", "enter"])))
