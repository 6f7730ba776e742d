"""`diagnose run [options] -- CMD ...`: run a task's command, capture everything into a task bundle, diagnose it.

The bundle (--out DIR) holds capture.json, output.log (stdout+stderr as written, in arrival order),
stdout.log, stderr.log, timeline.tsv, env.json and, when compilers spoke, compile.log and
compile_facts.json. `diagnose classify/explain DIR` and the triage TUI read it. The exit status is the
command's (128+N when a signal N ended it).
"""
import argparse

ASYNC_HINTS = (b"CUDA kernel errors might be asynchronously reported", b"CUDA_LAUNCH_BLOCKING=1")
ASYNC_FAMILIES = ("illegal-memory-access", "device-assert", "launch-config")


def add_parser(sub):
    p = sub.add_parser("run", help="run a command, capture its output into a task bundle and diagnose it",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", "-o", metavar="DIR", help="bundle directory (default: ./diagnose-runs/<time>-<cmd>)")
    p.add_argument("--timeout", type=float, metavar="S", help="kill the command's whole process group after S seconds")
    p.add_argument("--kill-grace", type=float, default=5.0, metavar="S",
                   help="seconds between SIGTERM and SIGKILL on timeout (default 5)")
    p.add_argument("--rerun", nargs="?", const="auto", choices=("auto", "always"),
                   help="re-run with CUDA_LAUNCH_BLOCKING=1 TORCH_SHOW_CPP_STACKTRACES=1 when the error was reported "
                        "asynchronously (auto) or in any case (always); both captures are kept")
    p.add_argument("--sanitize", action="store_true", help="also run the command under compute-sanitizer memcheck")
    p.add_argument("--ptxas-verbose", action="store_true",
                   help="make nvcc (NVCC_APPEND_FLAGS=-Xptxas -v) and Triton (TRITON_DUMP_PTXAS_LOG=1) print "
                        "register/spill/shared-memory usage")
    p.add_argument("--no-env", action="store_true", help="do not record an environment snapshot (env.json)")
    p.add_argument("--quiet", "-q", action="store_true", help="do not echo the command's output to the terminal")
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON instead of the report")
    p.add_argument("--buffered", action="store_true",
                   help="leave Python's stdout buffering alone (default: PYTHONUNBUFFERED=1, so stdout and "
                        "stderr interleave as they happened)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    return p


def default_out(cmd: list[str]) -> str:
    import os
    import re
    import time

    name = re.sub(r"[^\w.-]+", "_", os.path.basename(cmd[0]))[:40] or "cmd"
    base = os.path.join(os.getcwd(), "diagnose-runs", f"{time.strftime('%Y%m%d-%H%M%S')}-{name}")
    out, n = base, 1
    while os.path.exists(out):
        n += 1
        out = f"{base}-{n}"
    return out


def wants_rerun(mode: str | None, family: str, output_head: bytes) -> bool:
    """Re-run with CUDA_LAUNCH_BLOCKING=1 when the failing CUDA call may not be the one that faulted."""
    if not mode:
        return False
    if mode == "always":
        return True
    return family in ASYNC_FAMILIES or any(h in output_head for h in ASYNC_HINTS)


def _tail(path: str, n: int = 1 << 20) -> bytes:
    import os

    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - n))
            return f.read()
    except OSError:
        return b""


def run(args) -> int:
    import json
    import os
    import shutil

    from cli.errors import UsageError

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("no command given: diagnose run [options] -- CMD ARGS...")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if shutil.which(cmd[0]) is None and not os.path.exists(cmd[0]):
        raise UsageError(f"{cmd[0]}: command not found (check PATH, or give its path)")
    out = os.path.abspath(args.out or default_out(cmd))
    if os.path.islink(out) and not os.path.exists(out):
        raise UsageError(f"{out}: a dangling symbolic link (to {os.readlink(out)}); choose another --out")
    try:
        if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
            raise UsageError(f"{out}: exists and is not an empty directory; choose another --out")
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{out}: cannot create the bundle directory: {e.strerror or e}; choose another --out") from None

    from probes.capture import run_capture

    extra = {}
    if not args.buffered and "PYTHONUNBUFFERED" not in os.environ:
        extra["PYTHONUNBUFFERED"] = "1"
    if args.ptxas_verbose:
        extra["NVCC_APPEND_FLAGS"] = (os.environ.get("NVCC_APPEND_FLAGS", "") + " -Xptxas -v").strip()
        extra["TRITON_DUMP_PTXAS_LOG"] = "1"
    snap_fn = None if args.no_env else _snapshot
    cap = run_capture(cmd, out, timeout=args.timeout, kill_grace=args.kill_grace, extra_env=extra,
                      echo=not args.quiet, snapshot_fn=snap_fn, label="run")
    if cap["state"] == "failed-to-start":
        raise UsageError(cap["error"])
    d = _diagnose(out, cap)
    reruns = []
    if wants_rerun(args.rerun, d.family, _tail(os.path.join(out, "output.log"))):
        rerun_extra = dict(extra, CUDA_LAUNCH_BLOCKING="1", TORCH_SHOW_CPP_STACKTRACES="1")
        _say(args, f"re-running with CUDA_LAUNCH_BLOCKING=1 into {out}/rerun-blocking")
        rc2 = run_capture(cmd, os.path.join(out, "rerun-blocking"), timeout=args.timeout, kill_grace=args.kill_grace,
                          extra_env=rerun_extra, echo=not args.quiet, label="rerun-blocking")
        reruns.append({"dir": "rerun-blocking", "why": "asynchronous CUDA error: find the kernel that faulted",
                       "exit_status": rc2["exit_status"]})
    if args.sanitize:
        san = shutil.which("compute-sanitizer")
        if san:
            _say(args, f"running compute-sanitizer memcheck into {out}/sanitize")
            c3 = run_capture([san, "--tool", "memcheck", "--error-exitcode", "86", *cmd], os.path.join(out, "sanitize"),
                             timeout=args.timeout, kill_grace=args.kill_grace, extra_env=extra,
                             echo=not args.quiet, label="sanitize")
            reruns.append({"dir": "sanitize", "why": "compute-sanitizer memcheck", "exit_status": c3["exit_status"]})
        else:
            reruns.append({"dir": None, "why": "compute-sanitizer memcheck",
                           "error": "compute-sanitizer is not on PATH (install the CUDA toolkit's sanitizer)"})
            _say(args, "--sanitize: compute-sanitizer is not on PATH; skipped")
    if reruns:
        from probes.capture import write_json

        cap["reruns"] = reruns
        write_json(os.path.join(out, "capture.json"), cap)
    if args.json:
        print(json.dumps({"capture": cap, "diagnosis": d.to_json()}, indent=2, default=str))
    else:
        _report(d, cap, out, reruns)
    return int(cap["exit_status"])


def _snapshot():
    from cli.commands.env import judge
    from probes.gather import snapshot

    snap = snapshot()
    judge(snap)
    return snap


def _diagnose(out: str, cap: dict):
    from diagnose.engine import diagnose_file

    d = diagnose_file(out)
    # A timeout or a fatal signal is itself the failure when the log explains nothing more.
    if cap.get("timed_out") and d.family in ("none", "unknown"):
        d.family, d.origin, d.confidence = "timeout-hang", None, 0.9
        d.title = f"the command did not finish within --timeout {cap.get('timeout_s')} s; its process group was killed"
        d.fix = ("Find where it waits: re-run with a larger --timeout to tell slow from hung; for a hang, "
                 "`py-spy dump --pid PID` or `gdb -p PID` on the live process shows the stuck call.")
    elif cap.get("signal") and d.family == "none":
        d.family, d.confidence = "unknown", 0.5
        d.title = f"the command was killed by {cap['signal']} with no error in its output"
        d.fix = ("SIGKILL with no message is usually the kernel's OOM killer (`dmesg | grep -i killed`); "
                 "SIGSEGV/SIGABRT: run it under gdb or with faulthandler (`python -X faulthandler`).")
    elif cap.get("exit_status") and d.family == "none":
        d.family, d.confidence = "unknown", 0.4
        d.title = f"the command exited with status {cap['exit_status']} but its output shows no error"
    return d


def _say(args, text: str) -> None:
    import sys

    if not args.json:
        print(f"diagnose run: {text}", file=sys.stderr)


def _report(d, cap: dict, out: str, reruns: list) -> None:
    import os

    from rich.console import Console
    from rich.text import Text

    from diagnose import report
    from signatures.normalise import visible

    console = Console(stderr=False)
    how = (f"timed out after {cap.get('timeout_s')} s (group killed)" if cap.get("timed_out")
           else f"killed by {cap['signal']}" if cap.get("signal") else f"exit status {cap.get('exit_code')}")
    line = Text()
    line.append("diagnose run: ", style="bold")
    line.append(f"{visible(' '.join(cap['command']))[:200]}  {how}  {cap.get('wall_s', 0):.2f} s  "
                f"peak RSS {cap.get('peak_rss_bytes', 0) / 2**20:.0f} MiB  {cap['bytes']['output']} bytes of output\n"
                f"bundle: {visible(out)}")
    for r in reruns:
        line.append(f"\n{r['why']}: " + (f"{r['dir']} (exit {r.get('exit_status')})" if r.get("dir") else r.get("error", "")))
    console.print(line)
    report.write_explain(d, console=console, log_path=os.path.join(out, "output.log"))

