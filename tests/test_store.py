"""The triage session store: incremental, resumable ingestion; verdicts saved at once; export."""
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from diagnose.model import Diagnosis, Line
from diagnose.store import Store, StoreError, ingest

LOG = "step 1\nRuntimeError: CUDA error: an illegal memory access was encountered\n"


def write_logs(d, n, text=LOG):
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (d / f"t{i:02d}.log").write_text(f"task {i}\n" + text)


def test_ingest_is_incremental_and_content_hashed(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, 5)
    store = Store(tmp_path / "s.db")
    r = ingest(store, [str(logs)], jobs=1, progress=False)
    assert (r.added, r.changed, r.unchanged) == (5, 0, 0)
    r = ingest(store, [str(logs)], jobs=1, progress=False)
    assert (r.added, r.changed, r.unchanged) == (0, 0, 5)
    os.utime(logs / "t00.log", ns=(1, 1))                 # touched, same content: not re-classified
    (logs / "t01.log").write_text("now it says\nERROR: something else\n")
    write_logs(tmp_path / "logs2", 1)
    r = ingest(store, [str(logs), str(tmp_path / "logs2")], jobs=1, progress=False)
    assert (r.added, r.changed, r.unchanged) == (1, 1, 4)
    assert store.count() == 6


def test_the_session_database_inside_the_scanned_folder_is_not_a_task(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, 2)
    store = Store(logs / "triage.db")          # the reviewer keeps the session beside the logs
    (logs / "triage.db-journal").write_bytes(b"")
    r = ingest(store, [str(logs)], jobs=1, progress=False)
    assert (r.added, r.missing) == (2, [])
    assert store.count() == 2
    assert ingest(store, [str(logs)], jobs=1, progress=False).unchanged == 2


def test_verdict_survives_reingestion_and_is_marked_stale_when_log_changes(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, 2)
    store = Store(tmp_path / "s.db")
    ingest(store, [str(logs)], jobs=1, progress=False)
    row = store.rows()[0]
    store.set_verdict([row.id], "reclassified", "ana", family="oom", origin="resource-limit")
    store.set_note(row.id, "saw this [/oops] \x1b]0;x\x07 before", "ana")
    (logs / "t00.log").write_text("changed\n")
    ingest(store, [str(logs)], jobs=1, progress=False)
    again = store.row(row.id)
    assert (again.verdict, again.verdict_family, again.reviewer) == ("reclassified", "oom", "ana")
    assert again.note.startswith("saw this [/oops]")
    assert again.stale
    assert len(store.history(row.id)) == 2


def test_verdict_is_committed_at_once_visible_to_another_connection(tmp_path):
    store = Store(tmp_path / "s.db")
    tid = store.put("/x.log", "/x.log", "h", "0", Diagnosis(path="/x.log", family="oom"))
    store.set_verdict([tid], "confirmed", "bo")
    other = sqlite3.connect(tmp_path / "s.db")
    assert other.execute("SELECT verdict, reviewer FROM verdicts").fetchall() == [("confirmed", "bo")]
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(ValueError):
        store.set_verdict([tid], "maybe", "bo")
    with pytest.raises(ValueError):
        store.set_verdict([tid], "reclassified", "bo", family="not-a-family")


def test_killed_ingestion_keeps_what_was_stored(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, 30)
    db = tmp_path / "s.db"
    # A run killed after its 2nd batch of 5 results: each batch is committed as it fills, so 10 remain.
    code = (
        "import os, sys\n"
        "from diagnose import store as s\n"
        "s.INGEST_BATCH = 5\n"
        "st = s.Store(sys.argv[1]); put = st.put_many; n = [0]\n"
        "def dying_put(rows):\n"
        "    put(rows); n[0] += len(rows)\n"
        "    if n[0] == 10: os._exit(9)\n"
        "st.put_many = dying_put\n"
        "s.ingest(st, [sys.argv[2]], jobs=1, progress=False)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(db), str(logs)])
    assert proc.returncode == 9
    store = Store(db)
    assert store.count() == 10
    r = ingest(store, [str(logs)], jobs=1, progress=False)
    assert (r.added, r.unchanged) == (20, 10)


def test_not_a_session_is_a_clear_error_and_is_not_overwritten(tmp_path):
    bad = tmp_path / "notes.db"
    bad.write_text("my precious notes\n")
    with pytest.raises(StoreError, match="notes.db: not a triage session"):
        Store(bad)
    assert bad.read_text() == "my precious notes\n"
    with pytest.raises(StoreError, match="no triage session"):
        Store(tmp_path / "missing.db", create=False)


def test_export_markdown_and_jsonl_with_counts_on_top(tmp_path):
    store = Store(tmp_path / "s.db")
    a = store.put("/r/a.log", None, "1", "0", Diagnosis(path="/r/a.log", family="oom", origin="resource-limit",
                                                        signature="oom.torch", confidence=0.9, fix="smaller batch",
                                                        root=Line(3, "CUDA out of memory \x1b]52;c;SGk=\x07"),
                                                        evidence=[Line(3, "CUDA out of memory")]))
    b = store.put("/r/b.log", None, "2", "0", Diagnosis(path="/r/b.log", family="unknown", confidence=0.5))
    store.set_verdict([a], "confirmed", "ana")
    store.set_verdict([b], "reclassified", "ana", family="device-assert", origin="kernel-logic")
    assert store.export(str(tmp_path / "out.md")) == "markdown"
    md = (tmp_path / "out.md").read_text()
    head = md.split("## ")[0]
    assert "| oom | 1 |" in head and "| confirmed | 1 |" in head and "| reclassified | 1 |" in head
    assert "**Failure:** device-assert" in md and "**Origin:** kernel logic" in md
    assert "\x1b" not in md and "\\e]52;c;SGk=" in md
    store.export(str(tmp_path / "out.jsonl"))
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert lines[0]["by_family"] == {"oom": 1, "unknown": 1}
    assert lines[0]["by_verdict"] == {"confirmed": 1, "reclassified": 1}
    assert lines[2]["review"]["family"] == "device-assert"
    with pytest.raises(StoreError, match="end it in .md"):
        store.export(str(tmp_path / "out.txt"))


def test_triage_command(tmp_path):
    logs = tmp_path / "logs"
    write_logs(logs, 3)
    db = tmp_path / "t.db"
    run = lambda *a: subprocess.run([sys.executable, "-m", "cli", "triage", *a], capture_output=True, text=True)
    p = run(str(logs), "--db", str(db), "--export", str(tmp_path / "o.md"), "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert "3 added" in p.stderr and (tmp_path / "o.md").exists()
    p = run(str(logs), str(tmp_path / "nope"), "--db", str(db))
    assert p.returncode == 1 and "nope: no such file" in p.stderr and "3 unchanged" in p.stderr
    p = run("--db", str(db))
    assert p.returncode == 2 and "nothing to do" in p.stderr
