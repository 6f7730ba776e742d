"""`diagnose classify PATH...`: batch classification of crash logs."""
import argparse


def add_parser(sub):
    p = sub.add_parser("classify", help="classify crash logs into families, facts and fixes",
                       description="Classify logs: files, directories (recursive), .gz files, task bundles, '-' for stdin. "
                                   "Output order is sorted by path whatever --jobs is.")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--format", "-f", choices=("table", "jsonl", "csv", "markdown"), default="table")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--env", metavar="ENV_JSON", help="environment snapshot (diagnose env --json) to fuse into every diagnosis")
    p.add_argument("--signatures", metavar="DIR", action="append", default=[],
                   help="extra signature files or directories (added to the shipped ones)")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--cluster", metavar="tcp://HOST:PORT",
                   help="run the batch on a Dask distributed scheduler (extra `cluster`; docs/cluster.md)")
    p.add_argument("--cluster-timeout", type=float, default=10, metavar="SECONDS",
                   help="with --cluster: how long to try to reach the scheduler (default 10)")
    p.add_argument("--send-bytes", action="store_true",
                   help="with --cluster: send each file's bytes to the workers (no shared filesystem needed)")
    return p


def load_extra_signatures(dirs):
    if dirs:
        import signatures.matcher as m

        m._default = m.default_matcher(tuple(dirs))


def read_snapshot(path):
    from cli.errors import UsageError
    from diagnose.engine import load_snapshot

    if not path:
        return None
    snap = load_snapshot(path)
    if snap is None:
        raise UsageError(f"{path}: not a readable JSON environment snapshot (write one with `diagnose env --json`)")
    return snap


class _Output:
    """The -o file, opened before the batch runs (a bad path fails at once, not after an hour of
    classifying): a temporary file beside it, renamed over it only when everything was written, so
    a failed run leaves the previous file alone. A FIFO or device is written directly."""

    def __init__(self, path: str):
        import os
        import tempfile

        from cli.errors import UsageError

        self.path, self.tmp = path, None
        try:
            if os.path.exists(path) and not os.path.isfile(path):
                if os.path.isdir(path):
                    raise UsageError(f"{path}: is a directory; give -o a file name")
                self.file = open(path, "w", encoding="utf-8", newline="")
                return
            fd, self.tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                                            prefix=f".{os.path.basename(path)}.", suffix=".tmp")
            self.file = os.fdopen(fd, "w", encoding="utf-8", newline="")
        except OSError as e:
            raise UsageError(f"{path}: cannot write the output there: {e.strerror or e}") from None

    def commit(self) -> None:
        import os

        self.file.close()
        if self.tmp:
            os.chmod(self.tmp, 0o666 & ~_umask())
            os.replace(self.tmp, self.path)
            self.tmp = None

    def discard(self) -> None:
        import os

        self.file.close()
        if self.tmp:
            os.unlink(self.tmp)


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def run(args: argparse.Namespace) -> int:
    import sys

    from cli.errors import UsageError
    from diagnose import batch, report

    try:
        batch.start_method()
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.send_bytes and not args.cluster:
        raise UsageError("--send-bytes goes with --cluster tcp://HOST:PORT")
    snapshot = read_snapshot(args.env)
    output = _Output(args.output) if args.output else None     # before the batch: fail fast
    out = output.file if output else sys.stdout
    render = report.jsonl_line if args.format == "jsonl" else None   # workers render the lines, in parallel
    try:
        if args.cluster:
            from diagnose import cluster

            try:    # the snapshot and the extra signatures' text travel with every task
                results = cluster.classify(cluster.scheduler_address(args.cluster), args.paths, snapshot=snapshot,
                                           render=render, send_bytes=args.send_bytes,
                                           extra_signatures=args.signatures, timeout=args.cluster_timeout)
            except cluster.ClusterError as e:
                raise UsageError(str(e)) from None
        else:
            # the extra signatures, like the snapshot, reach the workers through the pool's initializer
            results = batch.classify(args.paths, jobs=args.jobs, snapshot=snapshot, render=render,
                                     signature_dirs=args.signatures)
        if args.format == "jsonl":
            out.writelines(results)
        elif args.format == "csv":
            report.write_csv(results, out)
        elif args.format == "markdown":
            report.write_markdown(results, out)
        else:
            from rich.console import Console

            report.write_table(results, Console(file=out) if output else None)
    except BaseException:
        if output:
            output.discard()
        raise
    if output:
        output.commit()
    return 0
