"""`diagnose explain PATH`: one log in full: evidence in context, cascade, facts, fix, next step."""


def add_parser(sub):
    p = sub.add_parser("explain", help="explain one log in full", description=__doc__)
    p.add_argument("path", metavar="PATH", help="a log file, .gz, task bundle or '-'")
    p.add_argument("--env", metavar="ENV_JSON", help="environment snapshot to fuse into the diagnosis")
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    p.add_argument("--signatures", metavar="DIR", action="append", default=[])
    return p


def run(args) -> int:
    import json
    import os
    import sys
    import tempfile
    from pathlib import Path

    from diagnose import report
    from cli.errors import UsageError
    from cli.commands.classify import load_extra_signatures, read_snapshot
    from diagnose.engine import bundle_log, diagnose_file

    load_extra_signatures(args.signatures)
    path = args.path
    tmp = None
    if path == "-":      # keep stdin so the evidence can be shown in context
        fd, tmp = tempfile.mkstemp(prefix="diagnose-stdin-")
        with os.fdopen(fd, "wb") as f:
            f.write(sys.stdin.buffer.read())
        path = tmp
    elif not Path(path).exists():
        raise UsageError(f"{path}: no such file or directory")
    try:
        d = diagnose_file(path, read_snapshot(args.env))
        if tmp:
            d.path = "-"
        if args.json:
            print(json.dumps(d.to_json(), indent=2, default=str))
        else:
            log = bundle_log(Path(path)) if Path(path).is_dir() else path
            report.write_explain(d, log_path=str(log) if log else None)
    finally:
        if tmp:
            os.unlink(tmp)
    return 0
