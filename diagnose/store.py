"""The triage session: one SQLite file (WAL) holding tasks, their diagnoses and the reviewers' verdicts.

This is the only module that touches the database. Ingestion is content-hashed and commits the
tasks in batches as their diagnoses arrive (at most INGEST_BATCH tasks or INGEST_FLUSH_S seconds
in hand), so a re-run skips what is stored and a killed run loses at most the batch in hand. Verdicts and notes are written at once, each in its own transaction, and every
change is also appended to a history table: nothing a reviewer saved is overwritten without trace.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from diagnose.model import Diagnosis

DEFAULT_DB = os.path.join(".diagnose", "triage.db")
SCHEMA_VERSION = 1
VERDICTS = ("confirmed", "reclassified", "needs-rerun", "not-a-failure")
BUNDLE_FILES = ("capture.json", "env.json")   # besides the log, what makes a bundle's content

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id          INTEGER PRIMARY KEY,
    path        TEXT NOT NULL UNIQUE,      -- absolute path of the task (log file or bundle directory)
    log         TEXT,                      -- the log to show (the file, or the bundle's output.log)
    hash        TEXT NOT NULL,             -- blake2b of the task's content
    stat        TEXT NOT NULL,             -- size:mtime of each file, to skip hashing unchanged tasks
    family      TEXT NOT NULL,
    origin      TEXT,
    signature   TEXT,
    confidence  REAL NOT NULL,
    root_line   INTEGER,
    root_text   TEXT,
    error       TEXT,
    diagnosis   TEXT NOT NULL,             -- Diagnosis.to_json()
    findings    TEXT NOT NULL DEFAULT '[]',-- env.json findings of a bundle
    ingested_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    task_id   INTEGER PRIMARY KEY REFERENCES tasks(id),
    verdict   TEXT CHECK (verdict IS NULL OR verdict IN ('confirmed','reclassified','needs-rerun','not-a-failure')),
    family    TEXT,                        -- set when reclassified
    origin    TEXT,
    note      TEXT NOT NULL DEFAULT '',
    reviewer  TEXT NOT NULL,
    at        TEXT NOT NULL,
    hash      TEXT NOT NULL                -- the content the reviewer saw
);
CREATE TABLE IF NOT EXISTS history (
    id        INTEGER PRIMARY KEY,
    task_id   INTEGER NOT NULL,
    verdict   TEXT, family TEXT, origin TEXT, note TEXT,
    reviewer  TEXT NOT NULL,
    at        TEXT NOT NULL
);
"""


class StoreError(Exception):
    """The database file cannot be used; the message names it and says what to do."""


@dataclass
class TaskRow:
    """What the task table shows: one light row per task."""
    id: int
    path: str
    family: str
    origin: str
    signature: str
    confidence: float
    root_line: int | None
    root_text: str
    error: str
    verdict: str          # '' when not reviewed
    verdict_family: str
    verdict_origin: str
    note: str
    reviewer: str
    at: str
    stale: bool           # the task changed after the verdict was given

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if not self.verdict:
            return "new"
        return "changed" if self.stale else "done"


@dataclass
class Task:
    """Everything stored for one task."""
    row: TaskRow
    log: str | None
    diagnosis: Diagnosis
    findings: list


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def default_reviewer() -> str:
    return os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


class Store:
    def __init__(self, path: str | os.PathLike, create: bool = True, threads: bool = False):
        """`threads`: the connection may be used from another thread than its creator's (the caller
        serialises its use: the TUI's writer holds a lock)."""
        self.path = str(path)
        p = Path(self.path)
        if not p.exists() and not create:
            raise StoreError(f"{self.path}: no triage session here; create one with `diagnose triage PATH...`")
        if p.is_dir():
            raise StoreError(f"{self.path}: is a directory; pass a database file with --db")
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=10, isolation_level=None,
                                      check_same_thread=not threads)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path}: written by a newer diagnose (schema {version}); upgrade diagnose")
            if version == 0:
                tables = self.db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
                if tables and not self.db.execute(
                        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='tasks'").fetchone():
                    raise StoreError(f"{self.path}: an SQLite database that is not a triage session; "
                                     "pass another file with --db")
                with self.tx():
                    for stmt in _SCHEMA.split(";"):
                        if stmt.strip():
                            self.db.execute(stmt)
                    self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a triage session database ({e}); "
                             "pass another file with --db, or move this one away") from None
        except OSError as e:
            raise StoreError(f"{self.path}: cannot open ({e.strerror or e})") from None

    # -- transactions -----------------------------------------------------------------------------

    def tx(self):
        store = self

        class _Tx:
            def __enter__(self):
                store.db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind, value, tb):
                store.db.execute("COMMIT" if kind is None else "ROLLBACK")
                return False
        return _Tx()

    def close(self) -> None:
        self.db.close()

    # -- ingestion --------------------------------------------------------------------------------

    def known(self) -> dict[str, tuple[str, str]]:
        """path -> (stat, hash) of every stored task."""
        return {p: (s, h) for p, s, h in self.db.execute("SELECT path, stat, hash FROM tasks")}

    def touch(self, path: str, stat: str) -> None:
        """The content is unchanged but the files were touched: remember the new stat."""
        with self.tx():
            self.db.execute("UPDATE tasks SET stat=? WHERE path=?", (stat, path))

    _PUT = """INSERT INTO tasks (path, log, hash, stat, family, origin, signature, confidence, root_line,
                                 root_text, error, diagnosis, findings, ingested_at)
              VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
              ON CONFLICT(path) DO UPDATE SET log=excluded.log, hash=excluded.hash, stat=excluded.stat,
                family=excluded.family, origin=excluded.origin, signature=excluded.signature,
                confidence=excluded.confidence, root_line=excluded.root_line, root_text=excluded.root_text,
                error=excluded.error, diagnosis=excluded.diagnosis, findings=excluded.findings,
                ingested_at=excluded.ingested_at"""

    def put(self, path: str, log: str | None, content_hash: str, stat: str, d: Diagnosis,
            findings: list | None = None) -> int:
        """Insert or replace one task's diagnosis (its verdict, if any, is kept), committed at once."""
        with self.tx():
            self.db.execute(self._PUT, (path, log, content_hash, stat) + stored_fields(d, findings) + (now(),))
            return self.db.execute("SELECT id FROM tasks WHERE path=?", (path,)).fetchone()[0]

    def put_many(self, rows: list[tuple]) -> None:
        """Insert or replace many tasks in one transaction: (path, log, hash, stat, *stored_fields(d))."""
        at = now()
        with self.tx():
            self.db.executemany(self._PUT, [tuple(r) + (at,) for r in rows])

    # -- reading ----------------------------------------------------------------------------------

    _ROWS = """SELECT t.id, t.path, t.family, coalesce(t.origin,''), coalesce(t.signature,''), t.confidence,
                      t.root_line, coalesce(t.root_text,''), coalesce(t.error,''), coalesce(v.verdict,''),
                      coalesce(v.family,''), coalesce(v.origin,''), coalesce(v.note,''), coalesce(v.reviewer,''),
                      coalesce(v.at,''), coalesce(v.hash != t.hash, 0)
               FROM tasks t LEFT JOIN verdicts v ON v.task_id = t.id"""

    def rows(self) -> list[TaskRow]:
        return [TaskRow(*r[:15], bool(r[15])) for r in self.db.execute(self._ROWS + " ORDER BY t.path")]

    def row(self, task_id: int) -> TaskRow | None:
        r = self.db.execute(self._ROWS + " WHERE t.id=?", (task_id,)).fetchone()
        return TaskRow(*r[:15], bool(r[15])) if r else None

    def task(self, task_id: int) -> Task | None:
        row = self.row(task_id)
        if row is None:
            return None
        log, diag, findings = self.db.execute(
            "SELECT log, diagnosis, findings FROM tasks WHERE id=?", (task_id,)).fetchone()
        return Task(row, log, Diagnosis.from_json(json.loads(diag)), json.loads(findings))

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM tasks").fetchone()[0]

    def history(self, task_id: int) -> list[tuple]:
        return self.db.execute("SELECT verdict, family, origin, note, reviewer, at FROM history "
                               "WHERE task_id=? ORDER BY id", (task_id,)).fetchall()

    # -- the reviewer's state ---------------------------------------------------------------------

    def set_verdict(self, task_ids, verdict: str, reviewer: str, family: str | None = None,
                    origin: str | None = None) -> None:
        """One verdict for one or many tasks, in one transaction. The note, if any, is kept."""
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}")
        if verdict == "reclassified":
            from signatures.taxonomy import FAMILIES, ORIGINS
            if family not in FAMILIES or (origin is not None and origin not in ORIGINS):
                raise ValueError(f"reclassified needs a family from the taxonomy (and an origin or none), "
                                 f"not {family!r}/{origin!r}")
        else:
            family = origin = None
        self._write(list(task_ids), reviewer, verdict=verdict, family=family, origin=origin)

    def set_note(self, task_id: int, note: str, reviewer: str) -> None:
        self._write([task_id], reviewer, note=note)

    def clear_verdict(self, task_ids, reviewer: str) -> None:
        """The tasks go back to unreviewed; their notes are kept."""
        self._write(list(task_ids), reviewer, verdict=None, family=None, origin=None)

    def state(self, task_ids) -> dict[int, tuple]:
        """Each task's (verdict, family, origin, note) now: what an undo restores."""
        out = {}
        for tid in task_ids:
            r = self.db.execute("SELECT verdict, family, origin, note FROM verdicts WHERE task_id=?", (tid,)).fetchone()
            out[tid] = tuple(r) if r else (None, None, None, "")
        return out

    def restore(self, states: dict[int, tuple], reviewer: str) -> None:
        """Put back what `state` returned (the undo of a verdict or note), in one transaction."""
        at = now()
        with self.tx():
            for tid, (verdict, family, origin, note) in states.items():
                self._write_one(tid, reviewer, at, verdict, family, origin, note or "")

    def data_version(self) -> int:
        """Changes whenever another connection (another reviewer's TUI, a triage run) commits."""
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def _write(self, task_ids: list[int], reviewer: str, **change) -> None:
        at = now()
        with self.tx():
            for tid in task_ids:
                cur = self.db.execute("SELECT verdict, family, origin, note FROM verdicts WHERE task_id=?",
                                      (tid,)).fetchone()
                verdict, family, origin, note = cur or (None, None, None, "")
                if "verdict" in change:
                    verdict, family, origin = change["verdict"], change["family"], change["origin"]
                if "note" in change:
                    note = change["note"]
                self._write_one(tid, reviewer, at, verdict, family, origin, note)

    def _write_one(self, tid, reviewer, at, verdict, family, origin, note) -> None:
        content = self.db.execute("SELECT hash FROM tasks WHERE id=?", (tid,)).fetchone()
        if content is None:
            raise KeyError(f"no task {tid} in {self.path}")
        self.db.execute(
            """INSERT INTO verdicts (task_id, verdict, family, origin, note, reviewer, at, hash)
               VALUES (?,?,?,?,?,?,?,?)
               ON CONFLICT(task_id) DO UPDATE SET verdict=excluded.verdict, family=excluded.family,
                 origin=excluded.origin, note=excluded.note, reviewer=excluded.reviewer,
                 at=excluded.at, hash=excluded.hash""",
            (tid, verdict, family, origin, note, reviewer, at, content[0]))
        self.db.execute("INSERT INTO history (task_id, verdict, family, origin, note, reviewer, at) "
                        "VALUES (?,?,?,?,?,?,?)", (tid, verdict, family, origin, note, reviewer, at))

    # -- export -----------------------------------------------------------------------------------

    def counts(self) -> tuple[collections.Counter, collections.Counter]:
        """Tasks by diagnosed family and by verdict ('open' when none)."""
        fam, ver = collections.Counter(), collections.Counter()
        for family, verdict in self.db.execute(
                "SELECT t.family, v.verdict FROM tasks t LEFT JOIN verdicts v ON v.task_id=t.id"):
            fam[family] += 1
            ver[verdict or "open"] += 1
        return fam, ver

    def export(self, out_path: str) -> str:
        """Write the session to `out_path` (.md Markdown, .jsonl JSON lines), atomically; returns the format."""
        suffix = Path(out_path).suffix.lower()
        kind = {".md": "markdown", ".markdown": "markdown", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(suffix)
        if kind is None:
            raise StoreError(f"{out_path}: cannot tell the export format from the name; "
                             "end it in .md (Markdown) or .jsonl (JSON lines)")
        tmp = f"{out_path}.tmp{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as out:
                (write_markdown if kind == "markdown" else write_jsonl)(self, out)
            os.replace(tmp, out_path)
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise StoreError(f"{out_path}: cannot write ({e.strerror or e})") from None
        return kind

    def tasks(self):
        for (tid,) in self.db.execute("SELECT id FROM tasks ORDER BY path").fetchall():
            yield self.task(tid)


# -- export formats (plain functions of the stored data) ---------------------------------------------

ORIGIN_WORDS = {"kernel-logic": "kernel logic", "environment": "environment",
                "runtime-assumption": "runtime assumption", "resource-limit": "resource limit",
                "hardware": "hardware", "numerics": "numerics"}


def final_family(row: TaskRow) -> tuple[str, str]:
    """The family and origin after review: a reclassification wins over the diagnosis."""
    if row.verdict == "reclassified":
        return row.verdict_family, row.verdict_origin
    return row.family, row.origin


def write_jsonl(store: Store, out) -> None:
    fam, ver = store.counts()
    out.write(json.dumps({"schema": "diagnose.triage/1", "tasks": store.count(), "by_family": dict(fam.most_common()),
                          "by_verdict": dict(ver.most_common())}) + "\n")
    for t in store.tasks():
        r = t.row
        out.write(json.dumps({
            "path": r.path, "hash": store.db.execute("SELECT hash FROM tasks WHERE id=?", (r.id,)).fetchone()[0],
            "diagnosis": t.diagnosis.to_json(), "findings": t.findings,
            "review": {"verdict": r.verdict or None, "family": r.verdict_family or None,
                       "origin": r.verdict_origin or None, "note": r.note, "reviewer": r.reviewer or None,
                       "at": r.at or None, "stale": r.stale},
        }, ensure_ascii=False, default=str) + "\n")


def write_markdown(store: Store, out) -> None:
    from findings.render import md_code, md_code_block
    from findings.render import md_escape as _md

    fam, ver = store.counts()
    out.write(f"# Triage session: {store.count()} tasks\n\n")
    out.write("| family | tasks |\n|---|---:|\n" + "".join(f"| {k} | {v} |\n" for k, v in fam.most_common()))
    out.write("\n| verdict | tasks |\n|---|---:|\n" + "".join(f"| {k} | {v} |\n" for k, v in ver.most_common()))
    for t in store.tasks():
        r, d = t.row, t.diagnosis
        family, origin = final_family(r)
        out.write(f"\n## {_md(r.path)}\n\n")
        out.write(f"- **Failure:** {family}" + (f" ({_md(d.title)})" if d.title and family == d.family else "") + "\n")
        out.write(f"- **Origin:** {ORIGIN_WORDS.get(origin, origin or 'not known')}\n")
        if r.verdict == "reclassified":
            out.write(f"- **Diagnosed as:** {d.family}/{d.origin or '-'} ({md_code(d.signature or '-')}), "
                      f"confidence {d.confidence:.2f}\n")
        else:
            out.write(f"- **Signature:** {md_code(d.signature or '-')}, confidence {d.confidence:.2f}\n")
        verdict = r.verdict or "not reviewed"
        who = f" by {_md(r.reviewer)} at {r.at}" if r.verdict else ""
        out.write(f"- **Verdict:** {verdict}{who}" + (" (the log changed since)" if r.stale else "") + "\n")
        if d.error:
            out.write(f"- **Input problem:** {_md(d.error)}\n")
        if d.root:
            out.write(f"- **Root line {d.root.line}:** {md_code(d.root.text[:300])}\n")
        if d.evidence:
            out.write("\nEvidence:\n\n" + md_code_block("\n".join(f"{e.line:>7}  {e.text[:300]}"
                                                                for e in d.evidence[:20])))
        if d.fix:
            out.write(f"\n**Fix:** {_md(d.fix)}\n")
        if d.next_step:
            out.write(f"\n**Next step:** {_md(d.next_step)}\n")
        for f in t.findings:
            if isinstance(f, dict):
                out.write(f"\n- env {f.get('severity', '')}: {_md(str(f.get('message', '')))}"
                          + (f" — {_md(str(f['fix']))}" if f.get("fix") else "") + "\n")
        if r.note:
            out.write(f"\n**Reviewer's note:** {_md(r.note)}\n")


# -- ingestion (reads files, classifies, writes through the Store) -----------------------------------

INGEST_BATCH = 256        # tasks per transaction at ingestion; a killed run loses at most the batch in hand
INGEST_FLUSH_S = 1.0      # ... or what arrived in the last second, whichever is less


def stored_fields(d: Diagnosis, findings: list | None = None) -> tuple:
    """The columns stored for a diagnosis, from family to findings (JSON rendered here: in a worker process
    at ingestion)."""
    return (d.family, d.origin, d.signature, float(d.confidence), d.root.line if d.root else None,
            d.root.text if d.root else None, d.error, json.dumps(d.to_json(), ensure_ascii=False, default=str),
            json.dumps(findings, ensure_ascii=False, default=str) if findings else "[]")


def _stored_for_ingest(d: Diagnosis) -> tuple:
    """Runs in the classify workers: a bundle's env.json findings read and everything rendered there."""
    return stored_fields(d, bundle_findings(d.path) if os.path.isdir(d.path) else None)


def task_files(task: str) -> tuple[str | None, list[Path]]:
    """The log to show and the files whose content identifies a task."""
    from diagnose.engine import bundle_log

    p = Path(task)
    if p.is_dir():
        log = bundle_log(p)
        files = ([log] if log else []) + [p / n for n in BUNDLE_FILES if (p / n).exists()]
        return (str(log) if log else None), files
    return task, [p]


def stat_key(files: list[Path]) -> str:
    parts = []
    for f in files:
        try:
            st = f.stat()
            parts.append(f"{f.name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{f.name}:-")
    return "|".join(parts)


def content_hash(files: list[Path]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for f in files:
        h.update(f.name.encode() + b"\0")
        try:
            with open(f, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
        except OSError as e:
            h.update(f"unreadable:{e}".encode())
        h.update(b"\0")
    return h.hexdigest()


def bundle_findings(task: str) -> list:
    env = Path(task) / "env.json"
    if not Path(task).is_dir() or not env.exists():
        return []
    try:
        findings = json.loads(env.read_text(encoding="utf-8")).get("findings", [])
    except (OSError, ValueError, AttributeError):
        return []
    return findings if isinstance(findings, list) else []


@dataclass
class IngestReport:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    missing: list = None
    problems: dict = None       # path -> why it could not be read (inputs.collect)


def _is_fifo(path: str) -> bool:
    import stat

    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def ingest(store: Store, paths, jobs: int | None = None, progress: bool | None = None,
           snapshot: dict | None = None) -> IngestReport:
    """Add new or changed tasks under `paths` to the session; skip the rest. Each task is committed
    as soon as its diagnosis arrives."""
    from diagnose import batch

    found, missing = batch.collect(paths)
    report = IngestReport(missing=[m.path for m in missing], problems={m.path: m.error for m in missing})
    known = store.known()
    todo: dict[str, tuple] = {}
    # the session's own database (and SQLite's files beside it) inside a scanned folder is not a task
    own = {os.path.abspath(store.path) + suffix for suffix in ("", "-wal", "-shm", "-journal")}
    for task in found:
        if task != "-" and os.path.abspath(task) in own:
            continue
        if task == "-":
            report.missing.append("-")     # stdin has no identity to resume from
            continue
        if _is_fifo(task):                 # nor has a pipe; and hashing it would block or consume it
            report.missing.append(task)
            report.problems[task] = "a FIFO cannot be part of a session: save what it gives to a file first"
            continue
        path = os.path.abspath(task)
        log, files = task_files(path)
        stat = stat_key(files)
        old = known.get(path)
        if old and old[0] == stat:
            report.unchanged += 1
            continue
        digest = content_hash(files)
        if old and old[1] == digest:
            store.touch(path, stat)
            report.unchanged += 1
            continue
        todo[path] = (log, digest, stat, bool(old))

    pending: list[tuple] = []
    flushed = [time.monotonic()]

    def flush() -> None:
        if pending:
            store.put_many(pending)
            pending.clear()
        flushed[0] = time.monotonic()

    def on_result(item: tuple[str, tuple]) -> None:
        path, fields = item
        log, digest, stat, existed = todo[path]
        pending.append((path, log, digest, stat) + fields)
        if existed:
            report.changed += 1
        else:
            report.added += 1
        if len(pending) >= INGEST_BATCH or time.monotonic() - flushed[0] >= INGEST_FLUSH_S:
            flush()

    if todo:
        try:
            batch.classify(list(todo), jobs=jobs, snapshot=snapshot, progress=progress, on_result=on_result,
                           render=_stored_for_ingest)
        finally:
            flush()                   # an interrupted run keeps what arrived
    return report
