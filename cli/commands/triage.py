"""`diagnose triage PATH...`: ingest tasks into a review session (SQLite) and export it."""
import argparse


def add_parser(sub):
    p = sub.add_parser(
        "triage", help="ingest failing tasks into a review session; export the reviewed session",
        description="Ingest tasks (task bundle directories, directories of logs, log files, .gz) into a session "
                    "database. Re-running adds new or changed tasks and skips the rest (content-hashed); a run "
                    "killed half-way keeps every task already stored. Review them with `diagnose tui`.")
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--db", metavar="FILE", default=None, help="session database (default: .diagnose/triage.db)")
    p.add_argument("--export", metavar="FILE", action="append", default=[],
                   help="write the session to FILE: .md for a Markdown review, .jsonl for JSON lines (repeatable)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--env", metavar="ENV_JSON", help="environment snapshot to fuse into tasks that carry none")
    p.add_argument("--review", metavar="TASKS", action="append", default=[],
                   help="review each task folder under TASKS (`diagnose review`) and add it to the session with its "
                        "verdicts and findings (repeatable)")
    return p


def open_store(path, create=True):
    from cli.errors import UsageError
    from diagnose.store import DEFAULT_DB, Store, StoreError

    try:
        return Store(path or DEFAULT_DB, create=create)
    except StoreError as e:
        raise UsageError(str(e)) from None


def ingest_paths(store, paths, jobs=None, env=None) -> int:
    """Ingest with a progress bar; prints a one-line summary to stderr. Returns the exit status."""
    import sys

    from cli.commands.classify import read_snapshot
    from diagnose.store import ingest
    from signatures.normalise import visible

    snapshot = read_snapshot(env)
    report = ingest(store, paths, jobs=jobs, progress=None if sys.stderr.isatty() else False, snapshot=snapshot)
    for m in report.missing:
        why = (report.problems or {}).get(m) or "no such file or directory"
        print(f"diagnose triage: {visible(m)}: {why} (skipped)" if m != "-" else
              "diagnose triage: '-' (stdin) cannot be part of a session: save it to a file first", file=sys.stderr)
    print(f"{store.path}: {report.added} added, {report.changed} changed, {report.unchanged} unchanged; "
          f"{store.count()} tasks in the session", file=sys.stderr)
    return 1 if report.missing else 0


def run(args: argparse.Namespace) -> int:
    import sys

    from cli.errors import UsageError
    from diagnose.store import StoreError

    if not args.paths and not args.export and not args.review:
        raise UsageError("nothing to do: give PATHs to ingest, --review TASKS and/or --export FILE")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    store = open_store(args.db, create=bool(args.paths or args.review))
    try:
        status = ingest_paths(store, args.paths, args.jobs, args.env) if args.paths else 0
        for root in args.review:
            status = max(status, ingest_reviews(store, root))
        for out in args.export:
            try:
                kind = store.export(out)
            except StoreError as e:
                raise UsageError(str(e)) from None
            print(f"wrote {out} ({kind}, {store.count()} tasks)", file=sys.stderr)
    finally:
        store.close()
    return status


def ingest_reviews(store, root) -> int:
    """Each task folder under ROOT (or ROOT itself) reviewed and stored as one task of the session."""
    import os
    import sys
    from pathlib import Path

    from diagnose.review import TaskError, review_task
    from diagnose.review.core import task_diagnosis
    from diagnose.store import content_hash, stat_key

    root = Path(root)
    if not root.is_dir():
        print(f"diagnose triage: {root}: not a folder of tasks (skipped)", file=sys.stderr)
        return 1
    subs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    tasks = [root] if (root / "task.toml").is_file() or not subs else subs
    n = 0
    for t in tasks:
        try:
            r = review_task(t)
        except TaskError as e:
            print(f"diagnose triage: {e}", file=sys.stderr)
            continue
        d = task_diagnosis(r)
        files = sorted(f for f in t.rglob("*") if f.is_file())
        log = next((f for f in r.parts.of("log") if os.path.isfile(f)), None)
        store.put(os.path.abspath(t), log, content_hash(files), stat_key(files), d,
                  [f.to_json() for f in d.findings])
        n += 1
    print(f"{store.path}: {n} reviewed task(s) from {root}; {store.count()} tasks in the session", file=sys.stderr)
    return 0
