"""`diagnose profile FILE...`: profiler exports -> per-kernel and timeline verdicts; BEFORE AFTER compared."""
import argparse


def add_parser(sub):
    p = sub.add_parser(
        "profile", help="read Nsight Compute / Nsight Systems / torch.profiler exports: bound, occupancy, conflicts, ...",
        description="Read profiler exports (ncu --csv --page details|raw, .ncu-rep, nsys .sqlite, nsys stats CSV, "
                    "torch.profiler / perfetto JSON) and say per kernel what bounds it, with its numbers and what to "
                    "change; for timelines, GPU idle time, tiny kernels, copies and syncs. --compare BEFORE AFTER "
                    "says whether an optimisation did what it claims. See docs/profile.md.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--compare", action="store_true", help="two files: BEFORE AFTER of the same work")
    p.add_argument("--device", metavar="NAME", help="device for the roofline ceilings (e.g. 'H100 SXM'), when the "
                                                   "export does not name one the table knows")
    p.add_argument("--format", "-f", choices=("table", "jsonl", "markdown"), default="table")
    p.add_argument("--json", action="store_true", help="the same as --format jsonl")
    return p


def run(args: argparse.Namespace) -> int:
    import sys

    from cli.errors import UsageError
    from diagnose.profile import ProfileError, compare, read_one, read_paths
    from findings import render

    fmt = "jsonl" if args.json else args.format
    if args.compare:
        if len(args.files) != 2:
            raise UsageError("--compare takes exactly two files: BEFORE AFTER")
        try:
            found = compare(read_one(args.files[0]), read_one(args.files[1]))
        except ProfileError as e:
            raise UsageError(str(e)) from None
        errors = []
    else:
        rep = read_paths(args.files, device=args.device)
        found, errors = rep.findings, rep.errors
        for e in errors:
            print(f"diagnose profile: {e}", file=sys.stderr)
        if errors and not rep.profiles:
            return 2
    text = {"jsonl": render.jsonl, "markdown": render.markdown}.get(fmt, render.text)(found)
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    if errors:
        return 2
    return 1 if any(f.severity == "error" for f in found) else 0
