"""Shared by the TUI tests: a session database built from fixed diagnoses (not live classification,
so the screens do not change when signatures do)."""
from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
from pathlib import Path

from diagnose.model import Diagnosis
from diagnose.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "tui"
os.environ["TEXTUAL_ANIMATIONS"] = "none"


def make_session(tmp: Path, extra: int = 0) -> str:
    """Copy the fixture logs into tmp/logs and store their diagnoses in tmp/session.db."""
    logs = tmp / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    db = str(tmp / "session.db")
    store = Store(db)
    for d in json.loads((FIXTURES / "diagnoses.json").read_text()):
        shutil.copy(FIXTURES / d["path"], logs / d["path"])
        d["path"] = str(logs / d["path"])
        store.put(d["path"], d["path"], "h-" + d["path"], "0", Diagnosis.from_json(d))
    for i in range(extra):
        path = str(logs / f"more{i:03d}.log")
        store.put(path, None, f"h{i}", "0", Diagnosis(path=path, family="none" if i % 2 else "oom",
                                                       origin=None if i % 2 else "resource-limit",
                                                       signature=None if i % 2 else "oom.torch-caching-allocator",
                                                       confidence=0.9, title="made up"))
    store.close()
    return db


async def settle(pilot, rounds: int = 3) -> None:
    """Wait for the app's workers (store writes, log indexing) and for the messages they post; a handler
    may start another worker (a saved verdict opens the next task), hence a few rounds."""
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def sync(fn):
    """Run an async Pilot test with asyncio (no async pytest plugin is needed)."""
    @functools.wraps(fn)
    def run(*a, **k):
        return asyncio.run(fn(*a, **k))
    return run
