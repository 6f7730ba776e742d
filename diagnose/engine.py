"""Root-cause choice: from the matches in one log (and optionally an environment snapshot) to a diagnosis.

`decide(scan, path)` is a pure function of the scan; `diagnose_file` reads a file or a task bundle
and applies `fusion.fuse` when an environment snapshot is available.
"""
from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from diagnose.inputs import unreadable
from diagnose.model import ChainLink, Diagnosis, Line
from signatures.facts import render
from signatures.matcher import ScanResult, default_matcher
from signatures.model import Match
from signatures.normalise import line_level, strip_prefix

# A benign line ("... assuming every input is mutated") excuses failures logged just before it.
BENIGN_REACH = 200
FAILURE_HINTS = ("traceback", "frame", "exception", "fatal", "exit", "error")

UNKNOWN_NEXT = (
    "Read the root line and the traceback above it. If it is a CUDA error, re-run with "
    "CUDA_LAUNCH_BLOCKING=1 so the failing kernel is the one reported; then run "
    "`diagnose clusters` over similar logs to see whether a signature should be written for it."
)


def fill(templates, facts: dict) -> str:
    """The first template whose {fact} names are all known, with the facts rendered for a reader."""
    for template in templates:
        names = re.findall(r"\{(\w+)\}", template)
        if all(n in facts for n in names):
            return re.sub(r"\{(\w+)\}", lambda m: render(m[1], facts[m[1]]), template)
    return re.sub(r"\{(\w+)\}", "?", templates[-1]) if templates else ""


def _rank(m: Match):
    # highest priority first; among equals the earliest line is the first in the causal chain
    return (-m.signature.priority, m.line)


def _chain(root: Match | None, matches: list[Match]) -> list[ChainLink]:
    seen, links = set(), []
    ordered = ([root] if root else []) + sorted((m for m in matches if m is not root), key=lambda m: m.line)
    for m in ordered:
        key = (m.line, m.signature.family)
        if key in seen:
            continue
        seen.add(key)
        if m is root:
            role = "root"
        elif m.demoted:
            role = "demoted"
        elif m.signature.role == "root":
            # another line of the root's own family adds detail; a root of another family lost on priority
            role = "detail" if root is not None and m.signature.family == root.signature.family else "competing"
        else:
            role = m.signature.role
        links.append(ChainLink(m.line, m.signature.family, m.signature.id, role, m.text))
    return links[:50]


def decide(scan: ScanResult, path: str) -> Diagnosis:
    d = Diagnosis(path=path, lines=scan.lines, bytes=scan.bytes, error=scan.error)
    matches = scan.matches
    active = [m for m in matches if not m.demoted]
    benign = [m for m in active if m.signature.role == "benign"]
    failures = [m for m in active if m.signature.role != "benign"]
    if benign:
        failures = [f for f in failures if not _excused(f.line, benign)]

    if not failures:
        return _no_signature(d, scan, matches, benign)

    roots = [m for m in failures if m.signature.role == "root"]
    wrappers = [m for m in failures if m.signature.role == "wrapper"]
    pool = roots or wrappers or failures
    root = min(pool, key=_rank)
    sig = root.signature

    facts: dict = {}
    for m in sorted(failures, key=lambda m: (m.signature.family != sig.family, m is not root, m.line)):
        if m.signature.family == sig.family:
            for k, v in m.facts.items():
                facts.setdefault(k, v)

    d.family, d.origin, d.signature, d.title = sig.family, sig.origin, sig.id, sig.title
    d.root = Line(root.line, root.text)
    d.chain = _chain(root, matches)
    d.facts = facts
    d.fix = fill(sig.fix, facts)
    d.next_step = fill((sig.next_step,), facts)
    d.explanation = sig.explanation
    d.references = list(sig.references)
    d.frameworks = list(sig.frameworks)
    d.confidence = _confidence(root, roots, wrappers, failures)
    d.evidence = _evidence(root, failures, scan)
    return d


def _readings(d: Diagnosis) -> Diagnosis:
    """Other readers' view of the chosen root (outside `decide`, which stays a pure function of the scan):
    assert_close text in a log gets the same tolerance reading as `diagnose numerics`."""
    if d.family == "numerical-mismatch":
        from diagnose.numerics import annotate_diagnosis

        annotate_diagnosis(d)
    return d


def _confidence(root: Match, roots, wrappers, failures) -> float:
    if root.signature.role == "root":
        c = 0.85
        same = sum(1 for m in failures if m.signature.family == root.signature.family and m is not root)
        c += min(0.1, 0.05 * same)
        rivals = {m.signature.family for m in roots
                  if m.signature.family != root.signature.family and m.signature.priority >= root.signature.priority - 5}
        c -= 0.15 * len(rivals)
    elif root.signature.role == "wrapper":
        c = 0.6
    else:
        c = 0.5
    return round(max(0.2, min(0.99, c)), 2)


def _evidence(root: Match | None, failures: list[Match], scan: ScanResult) -> list[Line]:
    lines = {m.line: m.text for m in failures}
    if root:
        lines[root.line] = root.text
    for kind, n, text in scan.hints:
        if kind in ("traceback", "exception", "fatal") and line_level(text) is None:
            lines.setdefault(n, text)
    return [Line(n, t) for n, t in sorted(lines.items())][:200]


def _fallback_guess(d: Diagnosis, hints: list, root) -> None:
    """An unexplained failure gets the family its wording points at, as a low-confidence guess.

    The root line counts double; the last few error lines count once. The log stays marked as
    unexplained (signature `fallback.<family>`), so `diagnose clusters` still lists it."""
    from signatures.fallback import guess

    lines = [(strip_prefix(root[2]), 2.0)] + [(strip_prefix(t), 1.0) for _, n, t in hints[-8:] if n != root[1]]
    g = guess(lines)
    if g is None:
        return
    d.family, d.origin, d.signature = g.family, g.origin, f"fallback.{g.family}"
    d.confidence = 0.3
    d.title = f"probably {g.family}: guessed from the wording ({', '.join(g.words[:3])}); no signature matched"
    d.fix = g.fix
    d.explanation = ("No signature explains this failure. The family is a guess from words in the error "
                     "lines, not a recognised message: confirm it by reading the root line.")


def _excused(line: int, benign: list[Match]) -> bool:
    return any(b.line - BENIGN_REACH <= line <= b.line + 5 for b in benign)


def _no_signature(d: Diagnosis, scan: ScanResult, matches: list[Match], benign: list[Match]) -> Diagnosis:
    # generic error lines around a handled fallback belong to it, like the failures it excuses
    hints = [h for h in scan.hints if h[0] in FAILURE_HINTS and line_level(h[2]) is None
             and not _excused(h[1], benign)]
    d.chain = _chain(None, matches)
    if scan.error and not scan.bytes:
        d.family, d.confidence, d.title = "unknown", 0.0, "input could not be read"
        d.fix = "Check the file: " + scan.error
        return d
    if hints:
        order = {"exception": 0, "fatal": 1, "error": 2, "exit": 3, "traceback": 4, "frame": 5}
        best = min(order[h[0]] for h in hints)
        root = [h for h in hints if order[h[0]] == best][-1]
        d.family, d.confidence = "unknown", 0.5
        d.title = "a failure no signature explains"
        d.root = Line(root[1], root[2])
        frames = [h for h in hints if h[0] == "frame"]
        shown = [h for h in hints if h[0] != "frame"] + frames[-1:]   # the innermost frame, not the whole stack
        d.evidence = [Line(n, t) for _, n, t in sorted(shown, key=lambda h: h[1])][-40:]
        d.fix = ("No signature explains this failure; the root line is the most likely error "
                 "(last exception, fatal signal or error line).")
        d.next_step = UNKNOWN_NEXT
        _fallback_guess(d, [h for h in hints if h[0] != "frame"], root)
        return d
    d.family = "none"
    if matches:
        d.confidence = 0.7
        d.title = "failure text appears only in warnings or handled exceptions"
        d.evidence = [Line(m.line, m.text) for m in matches][:40]
        d.explanation = ("Every line that looks like a failure was logged at warning/info level or "
                         "was caught and handled (a fallback); the run itself did not fail.")
    else:
        d.confidence = 0.9
        d.title = "no failure found"
    return d


# -- files and task bundles ---------------------------------------------------------------------

def bundle_log(path: Path) -> Path | None:
    """A task bundle (from `diagnose run`) is a directory with capture.json; its log is output.log."""
    from diagnose.inputs import is_bundle

    if is_bundle(path):
        for name in ("output.log", "stdout.log", "stderr.log"):
            if os.path.lexists(path / name):
                return path / name
    return None


def load_snapshot(path) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


# -- hard-wrapped lines --------------------------------------------------------------------------

RESCUE_MAX_BYTES = 4 << 20      # an unexplained log up to this size is re-read for wrapped lines


def _decide(scan: ScanResult, path: str, matcher, reader) -> Diagnosis:
    return _readings(_decide_scan(scan, path, matcher, reader))


def _decide_scan(scan: ScanResult, path: str, matcher, reader) -> Diagnosis:
    """decide(), then, when nothing explained the log, the same again over its hard-wrapped lines.

    Terminals and issue pastes cut long lines mid-word ("...ProcessGroupNCCL'" / "s watchdog got
    stuck"); signatures are exact, so adjacent lines are joined (with and without a space) and
    matched again. Only logs left unexplained (`unknown`) pay for this, never one too big to re-read.
    """
    d = decide(scan, path)
    if d.error and d.family == "none":
        d.family = "unknown"
    # Only unexplained logs (failure evidence, no signature; at most a wording guess): a clean-looking
    # log would cost a second read and scan each, a fifth of the time on a batch of mostly clean logs.
    if not _unexplained(d) or scan.error or not scan.bytes or scan.bytes > RESCUE_MAX_BYTES:
        return d
    try:
        data = reader()
    except (OSError, EOFError, ValueError):
        return d
    if data is None:
        return d
    joined = _joined_matches(data, matcher, {m.signature.id for m in scan.matches})
    if not joined:
        return d
    rescued = ScanResult(matches=sorted(scan.matches + joined, key=lambda m: m.line), hints=scan.hints,
                         lines=scan.lines, bytes=scan.bytes, error=scan.error)
    d2 = decide(rescued, path)
    if d2.family == "none" or _unexplained(d2):
        return d
    d2.confidence = round(min(d2.confidence, 0.75), 2)
    d2.notes.append("matched across a hard-wrapped line (the message was cut in two by a terminal or a paste)")
    return d2


def _unexplained(d: Diagnosis) -> bool:
    return d.family == "unknown" or (d.signature or "").startswith("fallback.")


def _joined_matches(data: bytes, matcher, seen_ids: set[str]) -> list:
    from signatures.normalise import normalise_chunk

    lines = normalise_chunk(data).split(b"\n")
    pairs: list[tuple[int, bytes]] = []
    for i in range(len(lines) - 1):
        a = lines[i].rstrip(b"\r").rstrip()
        b = strip_prefix(lines[i + 1].rstrip(b"\r").decode("utf-8", "replace")).strip().encode()
        if len(a) < 20 or not b:
            continue
        pairs.append((i, a + b))
        pairs.append((i, a + b" " + b))
    if not pairs:
        return []
    scan = matcher.scan_bytes(b"\n".join(p for _, p in pairs) + b"\n")
    out, taken = [], set()
    for m in scan.matches:
        i = pairs[m.line - 1][0]
        if m.signature.id in seen_ids or (m.signature.id, i) in taken or m.signature.role == "benign":
            continue
        taken.add((m.signature.id, i))
        m.line = i + 1
        out.append(m)
    return out


def _file_reader(path):
    """Reads the log again (plain or gzip), only if the rescue needs it."""
    def read():
        from signatures.matcher import Matcher

        with Matcher.open(path) as f:
            return f.read(RESCUE_MAX_BYTES + 1)
    return read


def diagnose_file(path, snapshot: dict | None = None, matcher=None) -> Diagnosis:
    """Diagnose one log file, `-` (stdin) or task bundle directory."""
    from diagnose.fusion import fuse

    matcher = matcher or default_matcher()
    p = Path(path)
    log = p
    if str(path) != "-" and p.is_dir():
        log = bundle_log(p)
        if log is None:
            return unreadable(path, "a directory that is not a task bundle (no capture.json and output.log in it)")
        if snapshot is None and (p / "env.json").exists():
            snapshot = load_snapshot(p / "env.json")
    try:
        scan = matcher.scan_file(log)
    except OSError as e:
        return unreadable(path, e)
    if scan.error and not scan.bytes and (problem := _open_problem(log)):
        return unreadable(path, problem)
    _note_empty_fifo(scan, log)
    d = _decide(scan, str(path), matcher, _file_reader(log) if str(path) != "-" else (lambda: None))
    if log is not p and (p / "capture.json").exists():
        d = apply_capture(d, load_snapshot(p / "capture.json") or {})
    return fuse(d, snapshot) if snapshot else d


def _open_problem(path) -> OSError | None:
    """Why a file that gave nothing cannot be opened (one wording for every reader: inputs.os_problem)."""
    if str(path) == "-":
        return None
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as e:
        return e
    return None


def _note_empty_fifo(scan: ScanResult, path) -> None:
    """A FIFO is opened without waiting for a writer (no hang): one that gave nothing says so."""
    if scan.bytes or scan.error or str(path) == "-":
        return
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            scan.error = "a FIFO that gave no data (nothing was writing to it when it was opened)"
    except OSError:
        pass


def diagnose_files(paths: list[str], snapshot: dict | None = None, matcher=None) -> list[Diagnosis]:
    """diagnose_file for many inputs; plain log files are scanned together (Matcher.scan_many)."""
    from diagnose.fusion import fuse

    matcher = matcher or default_matcher()
    plain = [p for p in paths if p != "-" and not os.path.isdir(p)]
    scans = dict(zip(plain, matcher.scan_many(plain)))
    out = []
    for p in paths:
        if p not in scans:
            out.append(diagnose_file(p, snapshot, matcher))
            continue
        scan = scans[p]
        if scan.error and not scan.bytes and (problem := _open_problem(p)):
            out.append(unreadable(p, problem))
            continue
        _note_empty_fifo(scan, p)
        d = _decide(scan, p, matcher, _file_reader(p))
        out.append(fuse(d, snapshot) if snapshot else d)
    return out


def apply_capture(d: Diagnosis, cap: dict) -> Diagnosis:
    """What `diagnose run` saw of the process (timeout, signal, exit status) when the log says nothing."""
    state = cap.get("state")
    if state in ("running", "interrupted") and not cap.get("timed_out"):
        # A bundle whose capture never finished: its log is cut off, so "no failure found" would be a guess.
        why = cap.get("interrupted_by") or (
            "capture.json still says 'running': diagnose was killed before the command ended (or it is still running)"
            if state == "running" else "the run was interrupted (Ctrl-C or a signal to diagnose) before the command ended")
        d.notes.append(why)
        if d.family == "none":
            d.family, d.origin, d.signature = "unknown", None, "capture.interrupted"
            d.confidence = 0.3
            d.title = "the run was interrupted before the command finished: the log is incomplete"
            d.fix = "Nothing in the log so far explains a failure, but the command never finished; run it to the end."
            d.next_step = "Re-run the task to completion: `diagnose run --out NEW_DIR -- CMD ...`."
        return d
    if cap.get("timed_out"):
        d.notes.append(f"the command was killed by the harness after {cap.get('wall_s', '?')} s (--timeout)")
        if d.family in ("none", "unknown"):
            d.family, d.origin, d.signature = "timeout-hang", "runtime-assumption", "capture.timeout"
            d.title = "the command did not finish within its timeout and was killed"
            d.confidence = 0.8
            d.fix = ("Find where it waits: a kernel that never terminates (a spin-wait on a flag no block "
                     "sets, a loop bound read from the wrong argument), a deadlock between ranks, or simply "
                     "too much work for the timeout.")
            d.next_step = ("Re-run under `py-spy dump --pid PID` (Python) or attach `cuda-gdb -p PID` while it "
                           "hangs; for collectives set NCCL_DEBUG=INFO and TORCH_NCCL_ASYNC_ERROR_HANDLING=1.")
        return d
    sig, code = cap.get("signal"), cap.get("exit_code")
    if sig:
        d.notes.append(f"the process was killed by {sig}")
    elif code not in (None, 0):
        d.notes.append(f"the command exited with status {code}")
    if d.family == "none" and (sig or code not in (None, 0)):
        d.family, d.confidence = "unknown", 0.4
        d.title = f"the command failed ({sig or f'exit status {code}'}) with no error text a signature explains"
        d.fix = "The log holds no recognisable error; the exit status is the only evidence."
        d.next_step = ("Re-run with the framework's verbose logging (TORCH_SHOW_CPP_STACKTRACES=1, "
                       "CUDA_LAUNCH_BLOCKING=1); a SIGKILL with no message is often the host OOM killer: "
                       "check `dmesg | tail`.")
    return d


def diagnose_text(text: str | bytes, path: str = "<text>", snapshot: dict | None = None) -> Diagnosis:
    from diagnose.fusion import fuse

    data = text.encode() if isinstance(text, str) else text
    matcher = default_matcher()
    d = _decide(matcher.scan_bytes(data), path, matcher, lambda: data)
    return fuse(d, snapshot) if snapshot else d
