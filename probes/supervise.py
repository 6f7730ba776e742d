"""The watchdog of `diagnose run`: if diagnose dies (kill -9, OOM killer), end the command and mark the bundle.

It runs as its own small process in its own session (a Ctrl-C to the terminal does not reach it),
reading a pipe from diagnose: first the command's pid, at the end "done". End of file without
"done" means diagnose died: the command's process group and every descendant are killed, and
capture.json is rewritten with state "interrupted", so a later classify says so instead of
calling a cut-off log clean.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time


def kill_tree(pid: int, known: dict[int, float] | None = None, sig: int = signal.SIGKILL) -> None:
    """Signal a process, its process group, every descendant psutil can see, and the `known`
    descendants (pid -> create time, checked so a reused pid is left alone): a grandchild that
    called setsid has left the group but not the tree."""
    targets: dict[int, float | None] = dict(known or {})
    try:
        import psutil

        try:
            root = psutil.Process(pid)
            targets.setdefault(pid, root.create_time())
            for c in root.children(recursive=True):
                targets.setdefault(c.pid, c.create_time())
        except psutil.Error:
            pass
    except ImportError:
        psutil = None
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for p, created in targets.items():
        if psutil is not None and created is not None:
            try:
                if abs(psutil.Process(p).create_time() - created) > 0.01:
                    continue
            except psutil.Error:
                continue
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _mark_interrupted(cap_path: str) -> None:
    try:
        with open(cap_path, encoding="utf-8") as f:
            cap = json.load(f)
    except (OSError, ValueError):
        cap = {}
    if cap.get("state") not in (None, "running"):
        return
    cap.update(state="interrupted", interrupted=True, ended=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               interrupted_by="diagnose itself was killed while the command ran; the supervisor ended the command")
    tmp = cap_path + ".supervisor.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(cap, f, indent=1, default=str)
        f.write("\n")
    os.replace(tmp, cap_path)


def main(argv: list[str]) -> int:
    fd, cap_path = int(argv[0]), argv[1]
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    pid, known, buf = None, {}, b""
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while True:
            data = pipe.read(4096)
            if not data:
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                word, *rest = line.decode().split()
                if word == "done":
                    return 0
                if word == "pid":
                    pid = int(rest[0])
                elif word == "child":          # a descendant seen by diagnose: pid, create time
                    known[int(rest[0])] = float(rest[1])
    if pid is not None:
        kill_tree(pid, known, signal.SIGKILL)
    _mark_interrupted(cap_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
