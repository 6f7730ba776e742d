"""`diagnose tui [DB | PATH...]`: review a triage session in the terminal."""
import argparse


def add_parser(sub):
    p = sub.add_parser(
        "tui", help="review a triage session: task table, log viewer, verdicts",
        description="Open a triage session database, or ingest PATHs (logs, directories, task bundles) into "
                    "the session (--db, default .diagnose/triage.db) and open it. Keys: ? lists them all.")
    p.add_argument("paths", nargs="*", metavar="DB|PATH")
    p.add_argument("--db", metavar="FILE", default=None, help="session database (default: .diagnose/triage.db)")
    p.add_argument("--reviewer", metavar="NAME", default=None, help="who is reviewing (default: $USER)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes for ingestion")
    return p


def is_session(path: str) -> bool:
    """An SQLite file (a session), as opposed to a log."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def run(args: argparse.Namespace) -> int:
    import os

    from cli.errors import UsageError
    from cli.commands.triage import ingest_paths, open_store
    from diagnose.store import DEFAULT_DB

    db = args.db
    paths = list(args.paths)
    if len(paths) == 1 and is_session(paths[0]):
        if db:
            raise UsageError(f"{paths[0]} is a session database: give it or --db, not both")
        db, paths = paths[0], []
    db = db or DEFAULT_DB
    if paths:
        store = open_store(db, create=True)
        try:
            ingest_paths(store, paths, args.jobs)
        finally:
            store.close()
    elif not os.path.exists(db):
        raise UsageError(f"{db}: no triage session here; run `diagnose tui PATH...` or "
                         "`diagnose triage PATH...` first, or pass a session database")
    open_store(db, create=False).close()      # a clear error for a file that is not a session

    # a fast Esc then a key must not read as alt+key: a short escape delay (the app also splits alt+key)
    os.environ.setdefault("ESCDELAY", "25")
    from tui.app import TriageApp

    TriageApp(db, reviewer=args.reviewer).run()
    return 0
