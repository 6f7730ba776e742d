"""Run a command the way a careful reviewer would, and keep everything it said: a task bundle.

The child runs in its own process group. Its stdout and stderr are read as they arrive and written at
once (os.write, no buffering) to stdout.log and stderr.log (raw bytes), to output.log (both merged in
arrival order, whole lines at a time so line numbers match what the program printed; a partial line
waits at most 0.5 s) and timeline.tsv (byte offset in output.log, stream, seconds since start, length), so nothing is lost if
the child or `diagnose` is killed. capture.json says what ran and how it ended; it is written at the
start with "state": "running" and replaced atomically at the end.
"""
from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time

import re2

from probes.supervise import kill_tree

SCHEMA = "diagnose.capture/1"
READ_SIZE = 1 << 20
ENV_KEEP = re.compile(r"^(CUDA_|NVIDIA_|TORCH|PYTORCH_|TRITON_|NCCL_|XLA_|JAX_|LD_LIBRARY_PATH$|PATH$|PYTHON|"
                      r"OMP_NUM_THREADS$|VIRTUAL_ENV$|CONDA_PREFIX$|NVCC_|CC$|CXX$)")
SECRET = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL|AUTH", re.I)


def selected_env(env: dict) -> dict:
    return {k: v for k, v in sorted(env.items()) if ENV_KEEP.match(k) and not SECRET.search(k)}


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _open_new(path: str, mode: int = 0o644) -> int:
    """A bundle file, created or truncated, never through a symlink planted in its place (O_NOFOLLOW)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)


def write_json(path: str, data: dict) -> None:
    """JSON written atomically (a temporary file, then rename), never through a symlink."""
    tmp = path + ".tmp"
    with os.fdopen(_open_new(tmp), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, default=str)
        f.write("\n")
    os.replace(tmp, path)


class _TreeMemory:
    """Peak resident memory of the child and its descendants, sampled (psutil); also every descendant
    seen (pid -> create time), so one that left the process group (setsid) is still killed at a timeout."""

    def __init__(self, pid: int, on_new=None):
        self.peak = 0
        self.seen: dict[int, float] = {}
        self.on_new = on_new
        try:
            import psutil

            self.root = psutil.Process(pid)
            self.psutil = psutil
        except Exception:
            self.root = None

    def sample(self) -> None:
        if self.root is None:
            return
        try:
            procs = [self.root] + self.root.children(recursive=True)
        except self.psutil.Error:
            return
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
                if p.pid not in self.seen and p is not self.root:
                    self.seen[p.pid] = p.create_time()
                    if self.on_new:
                        self.on_new(p.pid, self.seen[p.pid])
            except self.psutil.Error:
                pass
        self.peak = max(self.peak, total)


def run_capture(argv: list[str], out_dir: str, *, timeout: float | None = None, kill_grace: float = 5.0,
                extra_env: dict | None = None, echo: bool = True, snapshot_fn=None, label: str = "") -> dict:
    """Run argv, stream and record its output under out_dir; return the capture (also in capture.json)."""
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ)
    env.update(extra_env or {})
    paths = {name: os.path.join(out_dir, f"{name}.log") for name in ("output", "stdout", "stderr")}
    paths["timeline"] = os.path.join(out_dir, "timeline.tsv")
    cap: dict = {
        "schema": SCHEMA, "label": label, "state": "running", "command": list(argv), "cwd": os.getcwd(),
        "env": selected_env(env), "env_added": dict(extra_env or {}), "pid": None,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "timeout_s": timeout,
        "artefacts": {k: os.path.basename(v) for k, v in paths.items()},
    }
    cap_path = os.path.join(out_dir, "capture.json")
    fds = {k: _open_new(p) for k, p in paths.items()}
    os.write(fds["timeline"], b"offset\tstream\tseconds\tbytes\n")

    snap_thread = None
    snap_box: dict = {}
    if snapshot_fn is not None:      # the snapshot's probes run while the command does
        snap_thread = threading.Thread(target=lambda: snap_box.update(snap=snapshot_fn()), daemon=True)
        snap_thread.start()

    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
    except OSError as e:
        for fd in fds.values():
            os.close(fd)
        cap.update(state="failed-to-start", error=f"{argv[0]}: {e.strerror or e}", exit_code=127,
                   ended=time.strftime("%Y-%m-%dT%H:%M:%S%z"), wall_s=0.0)
        write_json(cap_path, cap)
        return cap
    cap["pid"] = proc.pid
    write_json(cap_path, cap)
    watchdog = _Supervisor(cap_path, proc.pid)
    cap["supervised"] = watchdog.alive

    mem = _TreeMemory(proc.pid, on_new=watchdog.child)
    mem.sample()
    sel = selectors.DefaultSelector()
    streams = {proc.stdout.fileno(): ("stdout", 1), proc.stderr.fileno(): ("stderr", 2)}
    for fd in streams:
        os.set_blocking(fd, False)
        try:       # a 1 MiB pipe: fewer wake-ups when the child prints a lot (Linux F_SETPIPE_SZ)
            import fcntl

            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), READ_SIZE)
        except (OSError, ImportError):
            pass
        sel.register(fd, selectors.EVENT_READ)
    offset, sizes = 0, {"stdout": 0, "stderr": 0}
    status, rusage = None, None
    timed_out = interrupted = False
    term_at = kill_at = drain_until = None
    deadline = t0 + timeout if timeout else None
    last_sample = 0.0

    pending = {"stdout": b"", "stderr": b""}
    pending_since = {"stdout": 0.0, "stderr": 0.0}

    def emit(name: str, data: bytes) -> None:
        nonlocal offset
        os.write(fds["output"], data)
        os.write(fds["timeline"], f"{offset}\t{name}\t{time.monotonic() - t0:.6f}\t{len(data)}\n".encode())
        offset += len(data)

    def merge(name: str, data: bytes, final: bool = False) -> None:
        """output.log gets whole lines, so a stderr line never lands inside a half-written stdout line."""
        buf = pending[name] + data
        cut = len(buf) if final or len(buf) > READ_SIZE else buf.rfind(b"\n") + 1
        if cut:
            emit(name, buf[:cut])
        if not pending[name] or cut:
            pending_since[name] = time.monotonic()
        pending[name] = buf[cut:]

    def flush_stale(now: float) -> None:
        # a prompt or progress bar without a newline still reaches output.log within half a second
        for name in pending:
            if pending[name] and now - pending_since[name] > 0.5:
                merge(name, b"", final=True)

    def kill_group(sig) -> None:
        mem.sample()                # the latest descendants too
        kill_tree(proc.pid, mem.seen, sig)

    old_handlers = {}
    stop = []

    def on_signal(signum, frame):   # Ctrl-C or a kill of `diagnose`: stop the whole group, then report
        # No exception here: one raised between a read and its write would lose that chunk of output.
        stop.append(signum)

    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            old_handlers[s] = signal.signal(s, on_signal)
    loop_done = False
    try:
        while sel.get_map():
            now = time.monotonic()
            if stop and not interrupted:
                interrupted = True
                kill_group(signal.SIGTERM)
                kill_at = now + min(kill_grace, 2.0)
                deadline = None
            try:
                if deadline and not timed_out and now >= deadline:
                    timed_out, term_at = True, now
                    kill_group(signal.SIGTERM)
                    kill_at = now + kill_grace
                if kill_at and now >= kill_at:
                    kill_group(signal.SIGKILL)
                    kill_at = None
                    drain_until = now + 2.0
                if drain_until and now >= drain_until:
                    break       # grandchildren may still hold the pipes open
                waits = [x for x in (deadline if not timed_out else None, kill_at, drain_until) if x]
                wait = min([0.1] + [max(0.0, x - now) for x in waits])
                for key, _ in sel.select(wait):
                    fd = key.fd
                    try:
                        data = os.read(fd, READ_SIZE)
                    except BlockingIOError:
                        continue
                    name, term_fd = streams[fd]
                    if not data:
                        sel.unregister(fd)
                        merge(name, b"", final=True)
                        continue
                    os.write(fds[name], data)
                    sizes[name] += len(data)
                    merge(name, data)
                    if echo:
                        try:
                            os.write(term_fd, data)
                        except OSError:
                            echo = False       # the terminal went away; keep recording
                if status is None:
                    pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
                    if pid:
                        status, rusage = st, ru
                        if not drain_until:
                            drain_until = time.monotonic() + 2.0
                flush_stale(time.monotonic())
                if time.monotonic() - last_sample >= 0.1:
                    mem.sample()
                    last_sample = time.monotonic()
            except KeyboardInterrupt:       # a signal handler of the caller's (not ours) raised
                stop.append(signal.SIGINT)
        loop_done = True
    except BaseException:
        _restore_handlers(old_handlers)
        raise
    finally:
        if status is None:
            if timed_out or interrupted or not loop_done:
                interrupted = interrupted or not loop_done
                kill_group(signal.SIGKILL)
            _, status, rusage = os.wait4(proc.pid, 0)
        if timed_out or interrupted:
            kill_group(signal.SIGKILL)     # whatever of the group is left
        for name in pending:
            if pending[name]:
                merge(name, b"", final=True)
        proc.returncode = os.waitstatus_to_exitcode(status)
        for f in (proc.stdout, proc.stderr):
            f.close()
        for fd in fds.values():
            os.close(fd)
    wall = time.monotonic() - t0
    rc = proc.returncode
    cap.update(state="timed-out" if timed_out else "interrupted" if interrupted else "exited",
               ended=time.strftime("%Y-%m-%dT%H:%M:%S%z"), wall_s=round(wall, 3),
               exit_code=rc if rc >= 0 else None, signal=signal.Signals(-rc).name if rc < 0 else None,
               exit_status=rc if rc >= 0 else 128 - rc, timed_out=timed_out, interrupted=interrupted,
               bytes={"output": offset, **sizes},
               # The sampled sum over the process tree; getrusage's ru_maxrss is the largest single process
               # and, for a tiny command, can be the pages it shared with `diagnose` right after the fork.
               peak_rss_bytes=mem.peak or ((rusage.ru_maxrss * 1024) if rusage else 0),
               peak_rss_source="psutil tree samples every 0.1 s" if mem.peak else "getrusage ru_maxrss",
               peak_rss_max_process_bytes=(rusage.ru_maxrss * 1024) if rusage else None,
               cpu_s={"user": round(rusage.ru_utime, 3), "system": round(rusage.ru_stime, 3)} if rusage else None)
    if term_at:
        cap["timeout_killed_after_s"] = round(term_at - t0, 3)

    # Compilers write diagnostics to stderr (Triton's ptxas log goes to stdout): a huge stdout is not read twice.
    scan = [paths["stderr"]] + ([paths["stdout"]] if sizes["stdout"] <= STDOUT_SCAN_LIMIT else [])
    compile_facts = scan_compile_output(*scan)
    if compile_facts["lines"]:
        with os.fdopen(_open_new(os.path.join(out_dir, "compile.log")), "wb") as f:
            f.write(b"".join(line + b"\n" for line in compile_facts.pop("lines")))
        cap["artefacts"]["compile_log"] = "compile.log"
        write_json(os.path.join(out_dir, "compile_facts.json"), compile_facts)
        cap["artefacts"]["compile_facts"] = "compile_facts.json"
    if snap_thread is not None:
        snap_thread.join(timeout=30)
        if "snap" in snap_box:
            write_json(os.path.join(out_dir, "env.json"), snap_box["snap"])
            cap["artefacts"]["env"] = "env.json"
    write_json(cap_path, cap)
    watchdog.done()
    # Our handlers stay until the bundle is whole: a second SIGTERM during the clean-up above must not
    # kill diagnose between the last read and the last write. (An exception on the way out still
    # restores them: see _restore_handlers.)
    _restore_handlers(old_handlers)
    return cap


def _restore_handlers(old: dict) -> None:
    for s, h in old.items():
        signal.signal(s, h)
    old.clear()


class _Supervisor:
    """The watchdog process (probes/supervise.py) that ends the command and marks the bundle
    "interrupted" if this process dies; told the command's pid, its descendants, and "done"."""

    def __init__(self, cap_path: str, pid: int):
        self.fd = None
        self.proc = None
        try:
            r, w = os.pipe()            # not inheritable: the command never holds the write end
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
            self.proc = subprocess.Popen([sys.executable, "-m", "probes.supervise", str(r), cap_path],
                                         pass_fds=(r,), start_new_session=True, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.close(r)
            self.fd = w
            self._say(f"pid {pid}")
        except OSError:
            self.done()

    @property
    def alive(self) -> bool:
        return self.fd is not None

    def _say(self, line: str) -> None:
        if self.fd is not None:
            try:
                os.write(self.fd, (line + "\n").encode())
            except OSError:
                self.fd = None

    def child(self, pid: int, created: float) -> None:
        self._say(f"child {pid} {created:.6f}")

    def done(self) -> None:
        self._say("done")
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None


# -- compiler diagnostics ----------------------------------------------------------------------------

# Compiler lines of a task's output, matched with re2 (linear time: the output is anyone's text).
_COMPILER_WORDS = re2.compile(rb"ptxas|bytes stack frame|nvcc|nvlink|cicc|\.cuh?\(\d+\)|\.cuh?:\d+:|CompilationError|LLVM ERROR")
_KEYWORDS = (b"ptxas", b"bytes stack frame", b"nvcc", b"nvlink", b"cicc", b".cu", b"CompilationError", b"LLVM ERROR")
_PTXAS_FN = re2.compile(rb"ptxas(?:-\w+)? info\s*: (?:Compiling|Function properties for) (?:entry function )?'?([^'\s]+)'?"
                           rb"(?: for '(sm_\w+)')?")
_PTXAS_USED = re2.compile(rb"ptxas(?:-\w+)? info\s*: Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")
_NUM = {key: re2.compile(pattern) for key, pattern in {
    "stack_frame_bytes": rb"(\d+) bytes stack frame", "spill_stores_bytes": rb"(\d+) bytes spill stores",
    "spill_loads_bytes": rb"(\d+) bytes spill loads", "smem_bytes": rb"(\d+) bytes smem",
    "cmem0_bytes": rb"(\d+) bytes cmem\[0\]"}.items()}
_TOO_MUCH_SMEM = re2.compile(rb"uses too much shared data \((0x[0-9a-f]+) bytes, (0x[0-9a-f]+) max\)")
MAX_COMPILE_LINES = 20000
STDOUT_SCAN_LIMIT = 16 << 20


def _line_chunks(path: str, size: int = 8 << 20):
    """A file in chunks that end at a newline (a line longer than `size` is cut): bounded memory."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(fd, "rb", buffering=0) as f:
        carry = b""
        while True:
            block = f.read(size)
            if not block:
                if carry:
                    yield carry
                return
            buf = carry + block
            cut = buf.rfind(b"\n") + 1
            if not cut or len(buf) > 2 * size:
                cut = len(buf)
            yield buf[:cut]
            carry = buf[cut:]


def scan_compile_output(*paths: str) -> dict:
    """The compiler's own lines from logs, and ptxas -v resource usage per function as facts.

    The logs are read in 8 MB chunks and only compiler lines are kept (at most MAX_COMPILE_LINES of
    4,000 bytes): a 500 MB stderr costs a chunk of memory, not the file."""
    lines: list[bytes] = []
    for path in paths:
        for data in _line_chunks(path):
            if len(lines) >= MAX_COMPILE_LINES:
                break
            if not any(k in data for k in _KEYWORDS):      # memchr-speed: most logs have no compiler output
                continue
            seen_start = -1
            for m in _COMPILER_WORDS.finditer(data):
                start = data.rfind(b"\n", 0, m.start()) + 1
                if start <= seen_start:
                    continue
                end = data.find(b"\n", m.end())
                end = len(data) if end < 0 else end
                seen_start = start
                lines.append(data[start:end][:4000])
                if len(lines) >= MAX_COMPILE_LINES:
                    break
    if not lines:
        return {"lines": lines, "functions": [], "facts": {}}
    functions: list[dict] = []
    current: dict | None = None
    facts: dict = {}
    for line in lines:
        m = _PTXAS_FN.search(line)
        if m:
            name = m[1].decode(errors="replace")
            if current is None or current.get("function") != name:
                current = {"function": name}
                functions.append(current)
            if m[2]:
                current["arch"] = m[2].decode()
        if current is not None:
            for key, pat in _NUM.items():
                mm = pat.search(line)
                if mm:
                    current[key] = int(mm[1])
            mu = _PTXAS_USED.search(line)
            if mu:
                current["registers"] = int(mu[1])
        ms = _TOO_MUCH_SMEM.search(line)
        if ms:
            facts.update(shared_memory_requested_bytes=int(ms[1], 16), shared_memory_limit_bytes=int(ms[2], 16))
    if functions:
        facts["max_registers"] = max(f.get("registers", 0) for f in functions)
        facts["spilling_functions"] = [f["function"] for f in functions
                                       if f.get("spill_stores_bytes") or f.get("spill_loads_bytes")]
    return {"lines": lines, "functions": functions, "facts": facts}
