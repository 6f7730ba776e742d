"""TUI speed: open a 10,000-task session and a 1,000,000-line log, filter as you type; prints measured times.

Run: `make bench-tui` (python -m bench.tui_speed). Goals: the log opens in under 0.5 s; the table stays
responsive at 10,000+ rows.
"""
from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from diagnose.model import Diagnosis, Line  # noqa: E402
from diagnose.store import Store  # noqa: E402
from signatures.taxonomy import FAMILIES, ORIGINS  # noqa: E402

TASKS = 10_000
LOG_LINES = 1_000_000


def build_session(path: str, n: int) -> float:
    rng = random.Random(1)
    families, origins = list(FAMILIES), list(ORIGINS)
    store = Store(path)
    t0 = time.perf_counter()
    for i in range(n):
        fam = rng.choice(families)
        d = Diagnosis(path=f"/runs/batch{i % 37}/task{i:05d}.log", family=fam, origin=rng.choice(origins),
                      signature=f"{fam}.sig{i % 5}", confidence=round(rng.random(), 2), title="synthetic",
                      root=Line(i % 900 + 1, f"RuntimeError: failure {i} in kernel_{i % 97}"))
        store.put(d.path, None, f"{i:032x}", "0", d)
    took = time.perf_counter() - t0
    store.close()
    return took


def build_log(path: str, n: int) -> None:
    with open(path, "w") as fh:
        line = "[rank0]: 2024-05-01 12:00:00,123 INFO step {} loss=0.1234 lr=3e-4 tokens/s=123456.7 " + "x" * 20 + "\n"
        for i in range(0, n, 1000):
            fh.write("".join(line.format(j) for j in range(i, i + 1000)))


async def time_app(db: str, log: str) -> dict:
    from diagnose.store import Task, TaskRow
    from tui.app import TriageApp
    from tui.task_screen import TaskScreen

    out = {}
    t0 = time.perf_counter()
    app = TriageApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        out["open 10,000-task session (to first screen)"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        await pilot.press("slash", *"kernel_42")
        await pilot.pause()
        out["filter as you type: 9 keystrokes, each re-filtering 10,000 rows"] = time.perf_counter() - t1
        shown = len(app.tasks.visible)
        t1 = time.perf_counter()
        await pilot.press("escape", "escape", "end", "home", "pagedown", "pagedown")
        await pilot.pause()
        out["clear filter, end/home/page down x2 over 10,000 rows"] = time.perf_counter() - t1
        d = Diagnosis(path=log, family="unknown", root=Line(LOG_LINES - 5, "x"),
                      evidence=[Line(10, "x"), Line(LOG_LINES // 2, "x"), Line(LOG_LINES - 5, "x")])
        row = TaskRow(0, log, "unknown", "", "", 0.5, LOG_LINES - 5, "x", "", "", "", "", "", "", "", False)
        t1 = time.perf_counter()
        app.push_screen(TaskScreen(Task(row, log, d, []), "big.log"))
        await pilot.pause()
        out["open 1,000,000-line log in the task screen (index + first render)"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        await pilot.press("g", "n", "n", "G", "N")
        await pilot.pause()
        out["jump g, n, n, G, N across the 1,000,000-line log"] = time.perf_counter() - t1
    out["_filtered_rows"] = shown
    return out


def main() -> None:
    from tui.log_source import LogSource

    with tempfile.TemporaryDirectory() as tmp:
        db, log = os.path.join(tmp, "session.db"), os.path.join(tmp, "big.log")
        took = build_session(db, TASKS)
        print(f"build a {TASKS:,}-task session (one committed upsert each): {took:.2f} s "
              f"({took / TASKS * 1e6:.0f} us per task)")
        build_log(log, LOG_LINES)
        size = os.path.getsize(log)
        t0 = time.perf_counter()
        src = LogSource(log)
        index = time.perf_counter() - t0
        assert len(src) == LOG_LINES, len(src)
        t0 = time.perf_counter()
        for i in range(LOG_LINES - 50, LOG_LINES):
            src.line(i)
        read = time.perf_counter() - t0
        src.close()
        print(f"index a {LOG_LINES:,}-line log ({size / 1e6:.0f} MB): {index:.3f} s; read its last 50 lines: "
              f"{read * 1000:.2f} ms")
        results = asyncio.run(time_app(db, log))
        shown = results.pop("_filtered_rows")
        for what, seconds in results.items():
            print(f"{what}: {seconds:.3f} s")
        print(f"(filter kept {shown} rows)")
        goal = results["open 1,000,000-line log in the task screen (index + first render)"]
        print(f"log open goal < 0.5 s: {'met' if goal < 0.5 else 'MISSED'} ({goal:.3f} s)")


if __name__ == "__main__":
    main()
