"""`diagnose env`: snapshot this machine (driver, GPUs, toolkits, frameworks, host) and check it.

Exit status: 0 when no finding is an error, 1 when one is, 2 when the tool itself failed.
"""


def add_parser(sub):
    p = sub.add_parser("env", help="check this machine's GPU environment (or a recorded snapshot)",
                       description=__doc__)
    p.add_argument("--json", action="store_true", help="print the snapshot and its findings as JSON (schema diagnose.env/1)")
    p.add_argument("--from", dest="from_file", metavar="FILE",
                   help="check a snapshot recorded elsewhere (`diagnose env --json > FILE`) instead of this machine")
    p.add_argument("--output", "-o", metavar="FILE", help="also write the JSON snapshot to FILE")
    p.add_argument("--full", action="store_true",
                   help="run every probe, even the cuda-bindings one when libcuda.so.1 cannot be loaded (+0.2 s)")
    p.add_argument("--import-frameworks", choices=("auto", "always", "never"), default="auto",
                   help="import torch to read its arch list and cuDNN: auto = only for a CUDA build (default)")
    p.add_argument("--timeout", type=float, default=20.0, metavar="S", help="seconds before a hung probe is killed")
    p.add_argument("--info", action="store_true", help="show info findings too in the human report")
    return p


def run(args) -> int:
    import json
    import sys

    from cli.errors import UsageError
    from probes.checks import run_checks
    from probes.schema import SnapshotError, validate

    if args.from_file:
        try:
            with open(args.from_file, encoding="utf-8") as f:
                raw = json.load(f)
        except OSError as e:
            raise UsageError(f"{args.from_file}: cannot read: {e.strerror or e}")
        except ValueError as e:
            raise UsageError(f"{args.from_file}: not JSON ({e}); write a snapshot with `diagnose env --json > FILE`")
        try:
            snap = validate(raw, args.from_file)
        except SnapshotError as e:
            raise UsageError(str(e))
    else:
        import threading

        warm = None
        if not args.json:      # the report's imports (~0.1 s) overlap the probes' waits on their children
            warm = threading.Thread(target=_import_rich, daemon=True)
            warm.start()
        from probes.gather import snapshot

        snap = snapshot(full=args.full, import_frameworks=args.import_frameworks, timeout=args.timeout)
        if warm:
            warm.join()
    snap["findings"] = run_checks(snap)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                json.dump(snap, f, indent=1, default=str)
        except OSError as e:
            raise UsageError(f"{args.output}: cannot write: {e.strerror or e}")
    if args.json:
        sys.stdout.write(json.dumps(snap, indent=1, default=str) + "\n")
    else:
        write_report(snap, show_info=args.info, source=args.from_file)
    return 1 if any(f["severity"] == "error" for f in snap["findings"]) else 0


def _import_rich():
    import rich.console  # noqa: F401
    import rich.table  # noqa: F401
    import rich.text  # noqa: F401

    import signatures.normalise  # noqa: F401


STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def write_report(snap: dict, console=None, show_info: bool = False, source: str | None = None) -> None:
    """Failing checks first (errors, then warnings, grouped by section), then the facts per section."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from probes.schema import SECTIONS
    from signatures.normalise import visible

    def T(s, style=""):
        return Text(visible(str(s)), style=style)

    console = console or Console()
    findings = snap.get("findings") or []
    counts = {s: sum(1 for f in findings if f["severity"] == s) for s in ("error", "warning", "info")}
    head = Text()
    head.append(f"diagnose env{' --from ' + visible(source) if source else ''}: ", style="bold")
    for s in ("error", "warning", "info"):
        head.append(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}  ", style=STYLE[s] if counts[s] else "dim")
    console.print(head)

    shown = [f for f in findings if show_info or f["severity"] != "info"]
    if shown:
        t = Table(show_header=True, header_style="bold", expand=True, show_lines=True)
        t.add_column("", no_wrap=True, width=7)
        t.add_column("check", overflow="fold", ratio=2, min_width=16)
        t.add_column("what", ratio=3, overflow="fold")
        t.add_column("fix", ratio=2, overflow="fold")
        order = {s: i for i, s in enumerate(SECTIONS)}
        sev = {"error": 0, "warning": 1, "info": 2}
        for f in sorted(shown, key=lambda f: (sev[f["severity"]], order.get(f["section"], 99))):
            t.add_row(T(f["severity"], STYLE[f["severity"]]), T(f["id"]), T(f["message"]), T(f["fix"], "dim"))
        console.print(t)
    if counts["info"] and not show_info:
        console.print(Text(f"{counts['info']} info finding(s) hidden: --info shows them", style="dim"))

    facts = Table(show_header=False, box=None, padding=(0, 1), title="facts", title_justify="left")
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column()
    d = snap.get("driver") or {}
    facts.add_row("driver", T(f"{d['version']} (CUDA {d.get('cuda_version', '?')})" if d.get("version")
                              else f"none: {d.get('error', 'unknown')}"))
    for g in snap.get("gpus") or []:
        mem = g.get("memory_total_bytes")
        facts.add_row(f"gpu {g.get('index', '?')}", T(f"{g.get('name', '?')}  CC {g.get('compute_capability', '?')}  "
                                                      f"{g.get('sm_count', '?')} SMs  "
                                                      f"{mem / 2**30:.0f} GiB" if mem else g.get("name", "?")))
    if not snap.get("gpus"):
        facts.add_row("gpus", T("none visible"))
    for name, f in sorted((snap.get("frameworks") or {}).items()):
        extra = ""
        if name == "torch":
            extra = f"  CUDA {f.get('cuda') or 'none (CPU-only)'}"
            if f.get("arch_list"):
                extra += f"  arch {' '.join(f['arch_list'])}"
        elif name == "triton" and f.get("ptxas_version"):
            extra = f"  ptxas {f['ptxas_version']}"
        facts.add_row(name, T(f"{f.get('version') or ', '.join(f'{k} {v}' for k, v in (f.get('packages') or {}).items())}{extra}"))
    seen = set()
    for t in snap.get("toolkits") or []:
        key = (t.get("tool"), t.get("realpath"))
        if key in seen:
            continue
        seen.add(key)
        facts.add_row(t.get("tool", "?"), T(f"{t.get('version') or 'unknown: ' + str(t.get('error', ''))}  {t.get('path')}"))
    h = snap.get("host") or {}
    mem = (h.get("memory") or {}).get("total_bytes")
    facts.add_row("host", T(f"{h.get('distro') or h.get('os', '?')}  kernel {h.get('kernel', '?')}  glibc "
                            f"{h.get('glibc', '?')}  Python {h.get('python', '?')}  "
                            f"{(h.get('cpu') or {}).get('logical_cores', '?')} cores"
                            + (f"  {mem / 2**30:.0f} GiB" if mem else "")))
    env = {k: v for k, v in (snap.get("env") or {}).items() if k != "PATH"}
    if env:
        facts.add_row("env", T("  ".join(f"{k}={v}" for k, v in env.items())[:400]))
    el = (snap.get("probes") or {}).get("elapsed_s")
    console.print(facts)
    if el is not None:
        when = f"recorded {snap.get('created', '?')}, " if source else ""
        console.print(Text(f"{when}probed in {el:.2f} s", style="dim"))
