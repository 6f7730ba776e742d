"""SVG snapshots of the main and task screens (pytest-textual-snapshot; update with --snapshot-update)."""
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from test_tui_support import make_session  # noqa: E402

pytest.importorskip("pytest_textual_snapshot")


@pytest.fixture
def session():
    # A fixed directory: the screen shows where the tasks live, and a snapshot must not depend on tmp names.
    base = Path(tempfile.gettempdir()) / "diagnose-tui-snapshot"
    shutil.rmtree(base, ignore_errors=True)
    yield make_session(base, extra=8)
    shutil.rmtree(base, ignore_errors=True)


def _app(db):
    from tui.app import TriageApp
    return TriageApp(db, reviewer="snap")


def test_main_screen(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=(120, 30))


def test_main_screen_80x24(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=(80, 24))


def test_task_screen(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=(140, 36), press=["slash", *"ima.log", "enter", "enter"])


def test_uncertain_task_screen_with_guidance(snap_compare, session):
    assert snap_compare(_app(session), terminal_size=(140, 40), press=["slash", *"hostile", "enter", "enter"])
