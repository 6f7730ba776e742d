"""`diagnose explain PATH`: one log in full: evidence in context, cascade, facts, fix, next step."""


def add_parser(sub):
    p = sub.add_parser("explain", help="explain one log in full", description=__doc__)
    p.add_argument("path", metavar="PATH", help="a log file, .gz, task bundle or '-'")
    p.add_argument("--env", metavar="ENV_JSON", help="environment snapshot to fuse into the diagnosis")
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    p.add_argument("--signatures", metavar="DIR", action="append", default=[])
    p.add_argument("--source", metavar="PATH", action="append", default=[],
                   help="the task's kernel source (file or directory, repeatable): lint it and name the likely "
                        "root line of an illegal memory access or device assert")
    p.add_argument("--target", metavar="ARCH", help="GPU the source is linted for (with --source; default sm_90)")
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
        if args.source:
            from diagnose.lint import lint_paths
            from diagnose.lint.fuse import fuse_lint

            try:
                lr = lint_paths(args.source, target=args.target)
            except ValueError as e:
                raise UsageError(str(e)) from None
            log = bundle_log(Path(path)) if Path(path).is_dir() else Path(path)
            text = ""
            if log is not None:
                import zlib

                from signatures.reading import open_log

                try:
                    with open_log(log) as fh:     # kernel names it mentions (plain, gzip or UTF-16, as classified)
                        text = fh.read(16 << 20).decode("utf-8", "replace")
                except (OSError, EOFError, ValueError, zlib.error):
                    text = ""          # the diagnosis already says the log could not be read in full
            d = fuse_lint(d, lr.findings, lr.errors, log_text=text)
        if args.json:
            print(json.dumps(d.to_json(), indent=2, default=str))
        else:
            log = bundle_log(Path(path)) if Path(path).is_dir() else path
            report.write_explain(d, log_path=str(log) if log else None)
    finally:
        if tmp:
            os.unlink(tmp)
    return 0
