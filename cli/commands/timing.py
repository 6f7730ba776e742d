"""`diagnose timing`: is a benchmark fair? A static read of its scripts, the
evidence for a claimed speed-up (--results), and whether the task's correctness
check can fail (--probe-check)."""

EPILOG = """modes:
  diagnose timing bench.py kernel.cu ...   static read (never runs the code)
  diagnose timing --results times.csv      speed-up with a bootstrap interval
  diagnose timing --probe-check task.py    RUNS the check on trivial outputs

exit status: 0 nothing wrong found; 1 an error-severity finding (a speed-up
the measurements do not support, a check that accepts a trivial output);
2 bad input (the file is named). Rules, formats, harness: docs/timing.md."""


def add_parser(sub):
    import argparse

    p = sub.add_parser("timing", help="check a benchmark's methodology, a claimed speed-up, or a task's check",
                       description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", metavar="SCRIPT", help="benchmark scripts (.py) and CUDA sources (.cu, .cpp)")
    p.add_argument("--results", metavar="FILE", help="repeated measurements: CSV or JSON (do_bench, "
                   "torch.utils.benchmark, KernelBench eval JSON); see docs/timing.md")
    p.add_argument("--baseline", help="--results: the name of the baseline side (default: guessed, e.g. 'ref')")
    p.add_argument("--candidate", help="--results: the name of the candidate side")
    p.add_argument("--claim", type=float, help="--results: the claimed speed-up, checked against the interval")
    p.add_argument("--seed", type=int, default=0, help="--results: bootstrap seed (default 0)")
    p.add_argument("--resamples", type=int, default=10000, help="--results: bootstrap resamples (default 10000)")
    p.add_argument("--probe-check", metavar="TASK", help="run TASK's correctness check against trivial candidates "
                   "(zeros, empty, an input passed through, a stale reference output): executes TASK's code")
    p.add_argument("--timeout", type=float, default=120.0, help="--probe-check: seconds before the run is killed")
    p.add_argument("--device", help="static read: the device whose L2 size the cache rule uses (default 50 MB)")
    p.add_argument("--format", choices=("table", "jsonl", "markdown", "sarif"), default="table",
                   help="findings format (default table: text at 80 columns)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


def run(args) -> int:
    from cli.errors import UsageError

    modes = sum(bool(x) for x in (args.paths, args.results, args.probe_check))
    if modes != 1:
        raise UsageError("give benchmark scripts, or --results FILE, or --probe-check TASK (one of them)")
    if args.results:
        return _results(args)
    if args.probe_check:
        return _probe(args)
    return _static(args)


def _emit(findings, args, doc_extra=None, text_head=""):
    import json

    from findings import render

    if args.json:
        print(json.dumps({"schema": "diagnose.timing/1", **(doc_extra or {}),
                          "findings": [f.to_json() for f in findings]}, indent=2))
    elif args.format == "jsonl":
        print(render.jsonl(findings), end="")
    elif args.format == "markdown":
        print(render.markdown(findings), end="")
    elif args.format == "sarif":
        from diagnose import __version__
        from diagnose.timing import load_rules

        rules = {r.id: r.title for r in load_rules()}
        print(json.dumps(render.sarif(findings, tool="diagnose timing", version=__version__, rules={
            f.id: rules.get(f.id, f.id) for f in findings}), indent=2))
    else:
        if text_head:
            print(text_head)
        if findings:
            print(render.text(findings))


def _static(args) -> int:
    import sys
    from pathlib import Path

    from cli.errors import UsageError
    from diagnose.timing import read

    l2 = None
    if args.device:
        from diagnose.devices import DeviceError, lookup

        try:
            dev = lookup(args.device)
        except DeviceError as e:
            raise UsageError(str(e)) from None
        if not dev.l2_mb:
            raise UsageError(f"{dev.name} has no L2 figure in the device table; omit --device")
        l2 = dev.l2_mb * 1e6
    paths = []
    for p in args.paths:
        path = Path(p)
        if path.is_dir():
            paths += sorted(x for x in path.rglob("*") if x.suffix in (".py", ".cu", ".cuh", ".cpp", ".cc"))
        else:
            paths.append(path)
    findings, errors = read(paths, l2_bytes=l2)
    for e in errors:
        print(f"diagnose timing: {e}", file=sys.stderr)
    head = ""
    if not findings and not errors:
        import textwrap

        head = textwrap.fill(f"no timing findings in {len(paths)} file(s): checked {_rule_count()} rules "
                             "(docs/timing.md); a static read cannot see what the called code does", 80)
    _emit(findings, args, {"files": [str(p) for p in paths], "errors": errors}, head)
    if errors and len(errors) == len(paths):
        return 2
    return 1 if any(f.severity == "error" for f in findings) else 0


def _rule_count() -> int:
    from diagnose.timing import load_rules

    return len(load_rules())


def _results(args) -> int:
    from cli.errors import UsageError
    from diagnose.timing.results import ResultsError, analyse, load

    try:
        data = load(args.results, args.baseline, args.candidate)
        reading = analyse(data, claim=args.claim, seed=args.seed, resamples=args.resamples)
    except ResultsError as e:
        raise UsageError(str(e)) from None
    if args.json:
        import json

        print(json.dumps({"schema": "diagnose.timing.results/1", **reading.to_json()}, indent=2))
    else:
        _emit(reading.findings, args, text_head=reading.text() + "\n")
    return 0 if reading.supported and not any(f.severity == "error" for f in reading.findings) else 1


def _probe(args) -> int:
    from cli.errors import UsageError
    from diagnose.timing.probe import ProbeError, probe

    try:
        result = probe(args.probe_check, timeout=args.timeout)
    except ProbeError as e:
        raise UsageError(str(e)) from None
    if args.json:
        import json

        print(json.dumps({"schema": "diagnose.timing.probe/1", **result.to_json()}, indent=2))
    else:
        _emit(result.findings, args, text_head=result.text())
    return 1 if any(f.severity == "error" for f in result.findings) else 0
