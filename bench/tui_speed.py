"""TUI speed: keys per task for the review flows, ingestion of 10,000 small logs, a 10,000-task session and
a 1,000,000-line log; prints measured figures.

Run: `make bench-tui` (python -m bench.tui_speed; `--quick` skips the ingestion rounds). Goals: the log opens
in under 0.5 s; the table stays responsive at 10,000+ rows; a confirmed task costs one key.

The key counts are measured, not typed in: each flow is driven through the app with the Pilot, every key
pressed is counted, and the verdicts are read back from the database.
"""
from __future__ import annotations

import asyncio
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from diagnose.model import Diagnosis, Line  # noqa: E402
from diagnose.store import Store  # noqa: E402
from signatures.taxonomy import FAMILIES, ORIGINS  # noqa: E402

TASKS = 10_000
LOG_LINES = 1_000_000
INGEST_LOGS = 10_000
ROOT = Path(__file__).resolve().parent.parent


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
    from tui.log_view import LogView
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
        view = app.screen.query_one(LogView)
        out["open 1,000,000-line log: the task screen drawn (indexing... shown)"] = time.perf_counter() - t1
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.source is not None and view.current_line == LOG_LINES - 5, view.current_line
        out["open 1,000,000-line log in the task screen (index + first render)"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        await pilot.press("g", "n", "n", "G", "N")
        await pilot.pause()
        out["jump g, n, n, G, N across the 1,000,000-line log"] = time.perf_counter() - t1
    out["_filtered_rows"] = shown
    return out


async def time_gb_log(db: str, log: str, lines: int) -> tuple[float, float, bool]:
    """A 1 GB log: when the task screen is first drawn (saying indexing...), when the root line is shown,
    and whether a key was answered while the thread indexed."""
    from diagnose.store import Task, TaskRow
    from tui.app import TriageApp
    from tui.diagnosis_panel import DiagnosisPanel
    from tui.log_view import LogView
    from tui.task_screen import TaskScreen

    app = TriageApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        d = Diagnosis(path=log, family="oom", root=Line(lines - 3, "x"), evidence=[Line(lines - 3, "x")])
        row = TaskRow(0, log, "oom", "", "", 0.5, lines - 3, "x", "", "", "", "", "", "", "", False)
        t0 = time.perf_counter()
        app.push_screen(TaskScreen(Task(row, log, d, []), "gb.log"))
        await pilot.pause()
        view = app.screen.query_one(LogView)
        drawn, said = time.perf_counter() - t0, view.indexing
        await pilot.press("d")                        # hide the panel: answered while indexing?
        answered = view.indexing and not app.screen.query_one(DiagnosisPanel).display
        await app.workers.wait_for_complete()
        await pilot.pause()
        root = time.perf_counter() - t0
        assert view.current_line == lines - 3, view.current_line
    return drawn, root, answered, said


# -- keys per task, measured by driving the app ---------------------------------------------------------

def flow_session(tmp: str, n: int) -> str:
    """n tasks: half with one OOM signature (a cluster), half clean; each with a small log."""
    logs = Path(tmp) / "flow-logs"
    logs.mkdir(parents=True, exist_ok=True)
    db = os.path.join(tmp, "flow.db")
    store = Store(db)
    for i in range(n):
        path = logs / f"task{i:04d}.log"
        path.write_text(f"step 1\nstep 2\nRuntimeError: CUDA out of memory {i}\n")
        oom = i % 2 == 0
        store.put(str(path), str(path), f"h{i}", "0", Diagnosis(
            path=str(path), family="oom" if oom else "unknown", origin="resource-limit" if oom else None,
            signature="oom.torch-caching-allocator" if oom else None, confidence=0.9, title="t",
            root=Line(3, f"RuntimeError: CUDA out of memory {i}")))
    store.close()
    return db


def _verdicts(db: str) -> list[tuple]:
    store = Store(db)
    try:
        return [(r.verdict, r.verdict_family, r.verdict_origin) for r in store.rows()]
    finally:
        store.close()


def shortest_typeahead(target: str) -> str:
    """The fewest letters of the family's name that put it first in the reclassify picker."""
    from tui.pickers import family_matches

    for size in range(1, len(target) + 1):
        for start in range(0, len(target) - size + 1):
            q = target[start:start + size]
            if "-" in q:
                continue
            if next(f for f in FAMILIES if family_matches(q, f)) == target:
                return q
    return target


async def count_keys(tmp: str, n: int = 40) -> dict:
    from tui.app import TriageApp
    from tui.task_screen import TaskScreen

    async def settle(pilot):
        for _ in range(3):
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    out = {}
    # confirm and on to the next unreviewed: C on the task screen
    db = flow_session(os.path.join(tmp, "confirm"), n)
    app = TriageApp(db, reviewer="bench")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        keys = ["enter"]
        await pilot.press("enter")
        await settle(pilot)
        t0 = time.perf_counter()
        for _ in range(n):
            await pilot.press("C")
            keys.append("C")
            await settle(pilot)
        took = time.perf_counter() - t0
        assert isinstance(app.screen, TaskScreen)
    done = sum(v[0] == "confirmed" for v in _verdicts(db))
    out["confirm"] = (len(keys), done, took)

    # reclassify on the task screen: r, the type-ahead letters, Enter, the origin's key
    db = flow_session(os.path.join(tmp, "reclassify"), n)
    query = shortest_typeahead("compile-error")
    app = TriageApp(db, reviewer="bench")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        keys = ["enter"]
        await pilot.press("enter")
        await settle(pilot)
        t0 = time.perf_counter()
        for _ in range(n):
            flow = ["r", *query, "enter", "v", "u"]        # ... and u: on to the next unreviewed
            for k in flow:
                await pilot.press(k)
                await settle(pilot)
            keys += flow
        took = time.perf_counter() - t0
    done = sum(v == ("reclassified", "compile-error", "environment") for v in _verdicts(db))
    out["reclassify"] = (len(keys), done, took, query)

    # bulk: a signature cluster, tag all shown, one verdict
    db = flow_session(os.path.join(tmp, "bulk"), n)
    app = TriageApp(db, reviewer="bench")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        t0 = time.perf_counter()
        keys = ["g", "A", "c"]
        await pilot.press(*keys)
        await settle(pilot)
        took = time.perf_counter() - t0
    done = sum(v[0] == "confirmed" for v in _verdicts(db))
    out["bulk"] = (len(keys), done, took)
    return out


# -- ingestion of 10,000 small logs ------------------------------------------------------------------------

def make_logs(out: str, n: int) -> int:
    """n small logs, each a corpus log (produced by real tools here) with its task number on top."""
    texts = [open(p, "rb").read() for p in sorted(glob.glob(str(ROOT / "corpus" / "logs" / "**" / "*.log"),
                                                           recursive=True))]
    for i in range(n):
        d = os.path.join(out, f"b{i % 50:02d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"task{i:05d}.log"), "wb") as fh:
            fh.write(f"task {i}\n".encode() + texts[i % len(texts)])
    return len(texts)


INGEST_CHILD = """
import sys, time
from diagnose import store as s
s.INGEST_BATCH = int(sys.argv[3])
st = s.Store(sys.argv[1])
t0 = time.perf_counter()
r = s.ingest(st, [sys.argv[2]], progress=False)
took = time.perf_counter() - t0
import resource
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(took, r.added, st.count(), me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime)
"""


def time_ingest(logs: str, db: str, batch: int) -> tuple[float, float, float]:
    """Wall seconds, the main process's CPU seconds (the store writes), the classify workers' CPU seconds."""
    if os.path.exists(db):
        os.unlink(db)
    proc = subprocess.run([sys.executable, "-c", INGEST_CHILD, db, logs, str(batch)], capture_output=True,
                          text=True, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    took, added, count, me, kids = proc.stdout.split()
    assert int(added) == int(count) == INGEST_LOGS, proc.stdout
    return float(took), float(me), float(kids)


def main() -> None:
    from tui.log_source import LogSource

    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        keys = asyncio.run(count_keys(tmp))
        k, done, took = keys["confirm"]
        print(f"confirm and next (C on the task screen): {k} keys for {done} tasks confirmed = "
              f"{(k - 1) / done:.2f} key per task after the first Enter ({took / done * 1000:.0f} ms per task "
              "in the Pilot, its waits for the save and the next log included)")
        k, done, took, query = keys["reclassify"]
        print(f"reclassify as compile-error/environment and next (r, '{query}', Enter, v, u): {k} keys for {done} "
              f"tasks = {(k - 1) / done:.2f} keys per task")
        k, done, took = keys["bulk"]
        print(f"bulk verdict on a signature cluster (g, A, c): {k} keys for {done} tasks = {k / done:.3f} keys "
              f"per task ({took * 1000:.0f} ms)")
        if not quick:
            logs = os.path.join(tmp, "ingest-logs")
            sources = make_logs(logs, INGEST_LOGS)
            size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(logs) for f in fs)
            # alternating rounds: one transaction per task (how ingestion committed before) and batches
            per_task, batched = [], []
            for _ in range(2):
                per_task.append(time_ingest(logs, os.path.join(tmp, "i1.db"), 1))
                batched.append(time_ingest(logs, os.path.join(tmp, "ib.db"), 256))
            a, b = min(per_task), min(batched)
            print(f"ingest {INGEST_LOGS:,} small logs ({size / 1e6:.0f} MB, from {sources} corpus logs; "
                  f"{os.cpu_count()} cores; best of 2, alternating):")
            for what, (wall, me, kids) in (("one transaction per task", a), ("batches of 256", b)):
                print(f"  {what}: {wall:.2f} s wall; main process (hashing, store writes) {me:.2f} s CPU, "
                      f"classify workers {kids:.2f} s CPU")
            print(f"  batching alone: x{a[0] / b[0]:.2f} wall, x{a[1] / b[1]:.2f} main-process CPU")
            shutil.rmtree(logs, ignore_errors=True)
            gb = os.path.join(tmp, "gb.log")
            line = ("[rank0]: 2024-05-01 12:00:00,123 INFO step loss=0.1234 lr=3e-4 " + "x" * 60 + "\n").encode()
            lines = (1 << 30) // len(line)
            with open(gb, "wb") as fh:
                block = line * 10_000
                for _ in range(lines // 10_000):
                    fh.write(block)
                fh.write(line * (lines % 10_000))
            db = os.path.join(tmp, "gb.db")
            flow_session(os.path.join(tmp, "gbs"), 2)
            shutil.copy(os.path.join(tmp, "gbs", "flow.db"), db)
            drawn, root, answered, said = asyncio.run(time_gb_log(db, gb, lines))
            print(f"open a {os.path.getsize(gb) / 2**30:.2f} GiB log just written ({lines:,} lines): screen drawn "
                  f"after {drawn:.3f} s ({'saying indexing the log...' if said else 'the index was already done'}), "
                  f"a key answered while indexing: {'yes' if answered else 'no (the index came first)'}, root line "
                  f"shown after {root:.2f} s")
            os.unlink(gb)

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
