"""`diagnose env`: snapshot this machine (driver, GPUs, toolkits, libraries, frameworks, host) and check it.

Exit status: 0 when no finding is at or above --fail-on (default: error), 1 when one is, 2 when the input
is bad (an unreadable, oversized or malformed snapshot) or the tool itself failed; the message says which.
"""
MAX_SNAPSHOT_BYTES = 64 << 20
FAIL_ON = ("error", "warning", "info", "never")


def add_parser(sub):
    p = sub.add_parser("env", help="check this machine's GPU environment (or a recorded snapshot)",
                       description=__doc__)
    p.add_argument("--json", action="store_true", help="print the snapshot and its findings as JSON (schema diagnose.env/1)")
    p.add_argument("--from", dest="from_file", metavar="FILE",
                   help="check a snapshot recorded elsewhere (`diagnose env --json > FILE`) instead of this machine")
    p.add_argument("--output", "-o", metavar="FILE", help="also write the JSON snapshot to FILE")
    p.add_argument("--format", choices=("text", "jsonl", "markdown", "sarif"), default="text",
                   help="how to print the findings (text: the report with the machine's facts)")
    p.add_argument("--fail-on", choices=FAIL_ON, default="error",
                   help="exit 1 when a finding is at or above this severity (default: error; never: always 0)")
    p.add_argument("--full", action="store_true",
                   help="run every probe, even the cuda-bindings one when libcuda.so.1 cannot be loaded (+0.2 s)")
    p.add_argument("--import-frameworks", choices=("auto", "always", "never"), default="auto",
                   help="import torch to read its arch list and cuDNN: auto = only for a CUDA build (default)")
    p.add_argument("--timeout", type=float, default=20.0, metavar="S", help="seconds before a hung probe is killed")
    p.add_argument("--info", action="store_true", help="show info findings too in the text report")
    return p


def load_snapshot_file(path: str) -> dict:
    """A snapshot file read and validated, or UsageError naming the file and what to do."""
    import json
    import os

    from cli.errors import UsageError
    from probes.schema import SnapshotError, validate

    try:
        size = os.stat(path).st_size
        if size > MAX_SNAPSHOT_BYTES:
            raise UsageError(f"{path}: {size / 2**20:.0f} MB is larger than a snapshot can be "
                             f"({MAX_SNAPSHOT_BYTES >> 20} MB): is it the right file?")
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = json.loads(f.read(MAX_SNAPSHOT_BYTES + 1))
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}")
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply to be a snapshot; write one with `diagnose env --json > FILE`")
    except ValueError as e:
        raise UsageError(f"{path}: not JSON ({e}); write a snapshot with `diagnose env --json > FILE`")
    try:
        return validate(raw, path)
    except SnapshotError as e:
        raise UsageError(str(e))


def run(args) -> int:
    import json
    import sys

    from cli.errors import UsageError

    if args.from_file:
        snap = load_snapshot_file(args.from_file)
    else:
        import threading

        warm = None
        if not args.json and args.format == "text":   # the report's imports overlap the probes' waits
            warm = threading.Thread(target=_import_rich, daemon=True)
            warm.start()
        from probes.gather import snapshot

        snap = snapshot(full=args.full, import_frameworks=args.import_frameworks, timeout=args.timeout)
        if warm:
            warm.join()
    try:
        findings = judge(snap, source=args.from_file or "")
    except Exception as e:  # a bug in a check's plumbing: say so, exit 2, never a traceback
        print(f"diagnose env: internal error while checking the snapshot: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                json.dump(snap, f, indent=1, default=str)
        except OSError as e:
            raise UsageError(f"{args.output}: cannot write: {e.strerror or e}")
    try:
        if args.json:
            sys.stdout.write(json.dumps(snap, indent=1, default=str) + "\n")
        elif args.format != "text":
            from findings import render

            if args.format == "jsonl":
                sys.stdout.write(render.jsonl(findings))
            elif args.format == "markdown":
                sys.stdout.write(render.markdown(findings))
            else:
                from diagnose import __version__
                from diagnose.env import CHECKS

                sys.stdout.write(json.dumps(render.sarif(findings, version=__version__,
                                                         rules={c.id: c.summary for c in CHECKS}), indent=1) + "\n")
        else:
            write_report(snap, findings, show_info=args.info, source=args.from_file)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except Exception as e:  # the report must not turn a judged snapshot into a traceback
        print(f"diagnose env: internal error while printing the report: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    return exit_status(findings, args.fail_on)


def judge(snap: dict, source: str = ""):
    """Run the checks; store them in the snapshot (`findings`) with the tool that judged it (`tool`)."""
    from diagnose import __version__
    from diagnose.env import run_checks, snapshot_json

    findings = run_checks(snap, source=source)
    snap["findings"] = [snapshot_json(f) for f in findings]
    tool = snap.get("tool") if isinstance(snap.get("tool"), dict) else {}
    if not source:
        tool = {"name": "diagnose", "version": __version__}
    snap["tool"] = tool
    if source:
        snap["judged_by"] = {"name": "diagnose", "version": __version__}
    return findings


def exit_status(findings, fail_on: str) -> int:
    from findings.model import severity_rank

    if fail_on == "never":
        return 0
    limit = severity_rank(fail_on)
    return 1 if any(severity_rank(f.severity) <= limit for f in findings) else 0


def _import_rich():
    import rich.console  # noqa: F401
    import rich.table  # noqa: F401
    import rich.text  # noqa: F401

    import signatures.normalise  # noqa: F401


STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def write_report(snap: dict, findings, console=None, show_info: bool = False, source: str | None = None) -> None:
    """The counts, the findings (findings.render text blocks, 80 columns, worst first), then the facts."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from findings import render
    from signatures.normalise import visible

    def T(s, style=""):
        return Text(visible(str(s)), style=style)

    def d(x):
        return x if isinstance(x, dict) else {}

    class _Console(Console):
        def on_broken_pipe(self):          # rich exits 1 here; `diagnose env | head` is not a failure
            raise BrokenPipeError

    console = console or _Console()
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    head = Text()
    head.append(f"diagnose env{' --from ' + visible(source) if source else ''}: ", style="bold")
    for s in ("error", "warning", "info"):
        head.append(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}  ", style=STYLE[s] if counts[s] else "dim")
    console.print(head)
    shown = [f for f in findings if show_info or f.severity != "info"]
    width = min(console.width or 80, 100)
    for f in shown:
        block = render.text_block(f, width=width)
        first, _, rest = block.partition("\n")
        console.print(T(first, STYLE[f.severity]))
        if rest:
            console.print(T(rest), soft_wrap=True)
        console.print()
    if counts["info"] and not show_info:
        console.print(Text(f"{counts['info']} info finding(s) hidden: --info shows them", style="dim"))

    facts = Table(show_header=False, box=None, padding=(0, 1), title="facts", title_justify="left")
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    dr = d(snap.get("driver"))
    facts.add_row("driver", T(f"{dr['version']} (CUDA {dr.get('cuda_version', '?')})" if dr.get("version")
                              else f"none: {dr.get('error', 'unknown')}"))
    gpus = [g for g in snap.get("gpus") or [] if isinstance(g, dict)] if isinstance(snap.get("gpus"), list) else []
    for g in gpus:
        mem = g.get("memory_total_bytes")
        mem = mem if isinstance(mem, (int, float)) and not isinstance(mem, bool) else None
        desc = (f"{g.get('name', '?')}  CC {g.get('compute_capability', '?')}  {g.get('sm_count', '?')} SMs"
                + (f"  {mem / 2**30:.0f} GiB" if mem else "")) if not g.get("error") else f"ERROR: {g.get('error')}"
        facts.add_row(f"gpu {g.get('index', '?')}", T(desc))
    if not gpus:
        facts.add_row("gpus", T("none visible"))
    for name, f in sorted(d(snap.get("frameworks")).items()):
        f = d(f)
        extra = ""
        if name == "torch":
            extra = f"  CUDA {f.get('cuda') or 'none (CPU-only)'}"
            if isinstance(f.get("arch_list"), list) and f["arch_list"]:
                extra += f"  arch {' '.join(map(str, f['arch_list']))}"
        elif name == "triton" and f.get("ptxas_version"):
            extra = f"  ptxas {f['ptxas_version']}"
        pk = d(f.get("packages"))
        facts.add_row(str(name), T(f"{f.get('version') or ', '.join(f'{k} {v}' for k, v in pk.items())}{extra}"))
    seen = set()
    for t in snap.get("toolkits") if isinstance(snap.get("toolkits"), list) else []:
        t = d(t)
        key = (str(t.get("tool")), str(t.get("realpath")))
        if key in seen:
            continue
        seen.add(key)
        facts.add_row(str(t.get("tool", "?")), T(f"{t.get('version') or 'unknown: ' + str(t.get('error', ''))}  "
                                                 f"{t.get('path')}"))
    for lib, info in sorted(d(snap.get("libraries")).items()):
        cs = [c for c in d(info).get("candidates") or [] if isinstance(c, dict)] \
            if isinstance(d(info).get("candidates"), list) else []
        if cs and lib not in ("libcuda", "libnvidia-ml"):
            facts.add_row(str(lib), T(f"{cs[0].get('version') or '?'}  {cs[0].get('path')} ({cs[0].get('via')})"
                                      + (f"  +{len(cs) - 1} more" if len(cs) > 1 else "")))
    h = d(snap.get("host"))
    mem = d(h.get("memory")).get("total_bytes")
    mem = mem if isinstance(mem, (int, float)) and not isinstance(mem, bool) else None
    facts.add_row("host", T(f"{h.get('distro') or h.get('os', '?')}  kernel {h.get('kernel', '?')}  glibc "
                            f"{h.get('glibc', '?')}  Python {h.get('python', '?')}  "
                            f"{d(h.get('cpu')).get('logical_cores', '?')} cores"
                            + (f"  {mem / 2**30:.0f} GiB" if mem else "")))
    env = {k: v for k, v in d(snap.get("env")).items() if k != "PATH"}
    if env:
        facts.add_row("env", T("  ".join(f"{k}={v}" for k, v in env.items())[:400]))
    el = d(snap.get("probes")).get("elapsed_s")
    console.print(facts)
    if isinstance(el, (int, float)) and not isinstance(el, bool):
        when = f"recorded {snap.get('created', '?')}, " if source else ""
        console.print(Text(f"{when}probed in {el:.2f} s", style="dim"))
