"""Root-cause choice: from the matches in one log (and optionally an environment snapshot) to a diagnosis.

`decide(scan, path)` is a pure function of the scan; `diagnose_file` reads a file or a task bundle
and applies `fusion.fuse` when an environment snapshot is available.
"""
from __future__ import annotations

import bisect
import functools
import json
import os
import re
import stat
from pathlib import Path

from diagnose.inputs import unreadable
from diagnose.model import ChainLink, Diagnosis, Line
from diagnose.rootline import _is_raise, cause_before, exception_after, refine, terminator
from signatures.facts import render
from signatures.matcher import ScanResult, default_matcher
from signatures.model import Match
from signatures.evidence import FAILURE_KINDS, excused, says_failure
from signatures.taxonomy import EXPLAINS_ALL, NON_FAILURE, POISONS_CONTEXT
from signatures.normalise import line_level, strip_prefix

# A benign line ("... assuming every input is mutated") excuses failures logged just before it.
BENIGN_REACH = 200
FAILURE_HINTS = FAILURE_KINDS
# which failure line of an unexplained log is most likely its root, best first
# error-level lines this close before the root are its summary (NCCL's watchdog prints one first)
SUMMARY_REACH = 5
MAX_FACT_LINES = 10   # lines of the same failure read for generic facts, besides the root
HINT_ORDER = {"exception": 0, "assert": 1, "fatal": 2, "error": 3, "status": 4, "report": 5, "limit": 5, "level": 6,
              "exit": 7, "convention": 8, "retry": 9, "lexicon": 10, "traceback": 11, "frame": 12}
CONFIDENCE_TABLE = Path(__file__).parent / "confidence.toml"
_confidence_table: dict | None = None


def confidence_of(kind: str, key: str = "value") -> float:
    """The measured confidence of a kind of evidence (diagnose/confidence.toml, fitted by
    `python -m bench.calibration --write`): the observed accuracy of that kind of answer on fresh
    rounds of real logs. Kinds: root, root-rival, wrapper, symptom, support, wrapped, fallback,
    model, unknown, none-progress, none-handled, none-silent (`confidence_of("none", "silent")` still works)."""
    global _confidence_table
    if _confidence_table is None:
        import tomllib

        _confidence_table = tomllib.loads(CONFIDENCE_TABLE.read_text(encoding="utf-8"))["kind"]
    if key != "value":
        kind = f"{kind}-{key}"
    return float(_confidence_table[kind]["value"])


RIVAL_WINDOW = 5    # a root of another family this close in priority makes the answer `root-rival`

UNKNOWN_NEXT = (
    "Read the root line and the traceback above it. If it is a CUDA error, re-run with "
    "CUDA_LAUNCH_BLOCKING=1 so the failing kernel is the one reported; then run "
    "`diagnose clusters` over similar logs to see whether a signature should be written for it."
)


def fill(templates, facts: dict, texts: dict | None = None) -> str:
    """The first template whose {fact} names are all known, with the facts rendered for a reader (a size
    as the log wrote it when `texts` has it)."""
    texts = texts or {}
    for template in templates:
        names = re.findall(r"\{(\w+)\}", template)
        if all(n in facts for n in names):
            return re.sub(r"\{(\w+)\}", lambda m: render(m[1], facts[m[1]], texts.get(m[1])), template)
    return re.sub(r"\{(\w+)\}", "?", templates[-1]) if templates else ""


def _is_repr(text: str) -> bool:
    """A local variable's value as pytest shows it under a frame (`name = <repr>`, `x = tensor([...])`)."""
    head, eq, value = text.partition(" = ")
    return (bool(eq) and head.strip().isidentifier()
            and (value[:1] != "" and value[:1] in "<[({'\"" or value.startswith(("tensor(", "Array(", "array("))))


def _rank(m: Match):
    # highest priority first; among equals the earliest line is the first in the causal chain
    return (-m.signature.priority, m.line)


def _chain(root: Match | None, matches: list[Match], hints=(), cause=None) -> list[ChainLink]:
    """The cascade, root first. Every failure line after the root that the root explains is a
    `symptom` (a CUBLAS error on the poisoned context, a watchdog abort, a Python exception at an
    unrelated line, a generic error line no signature knows, a shutdown or cancelled work), and so is
    the framework's exception reporting a root that is not itself an exception line (wherever it
    stands), so a reviewer sees what to discount."""
    seen, links = set(), []
    # on one line a named failure (hard) speaks for it before a bare code or frame (support)
    ordered = ([root] if root else []) + sorted((m for m in matches if m is not root),
                                                key=lambda m: (m.line, m.signature.tier != "hard"))
    # a root of a family that explains the whole log (the device failed: signatures.taxonomy)
    explains_all = root is not None and root.signature.family in EXPLAINS_ALL
    # lines where an exception was raised: when the root is not one (a kernel's assertion, a
    # sanitizer report, an NCCL WARN line), an exception of its family elsewhere is the framework
    # reporting the root again, wherever the paste put it
    raised = {n for kind, n, _ in hints if kind == "exception"}
    reraised = root is not None and root.line not in raised
    frames = _frame_lines(hints)
    # a `raise X(...)` source line under a frame is where the exception was raised, not a report of it
    raises = {n for kind, n, text in hints if kind in ("status", "exception", "error") and _is_raise(text)}
    reports = {n for kind, n, _ in hints if kind in ("status", "exception")} - raises
    dead = _dead_context_calls(root, hints)
    # lines the root's own signature matches again: the same report repeated (another thread's
    # assertion, the driver retrying the same init), not another layer reporting it
    again = {m.line for m in matches if root is not None and m.signature is root.signature and m is not root
             and _same_report(m.text, root.text)}
    for m in ordered:
        key = (m.line, m.signature.family)
        if key in seen or (m is not root and _passed_through(m, frames)):
            continue             # a traceback frame is where a failure passed, not a line of the cascade
        seen.add(key)
        if m is root:
            role = "root"
        elif m.demoted:
            role = "demoted"
        elif m.signature.role == "benign":
            role = "benign"
        elif reraised and m.signature.family == root.signature.family and m.line in raised:
            # the framework's exception for the root (RuntimeError: ... device-side assert), also when
            # the root's own signature knows the exception's wording (ResourceExhaustedError: OOM ...)
            role = "symptom"
        elif m.line in again and m.line not in dead and m.signature.family == root.signature.family:
            role = "detail"          # the root's own report again (another thread, another attempt)
        elif explains_all:
            role = "symptom"         # the device failed: every other failure line, before or after, follows from it
        elif (root is not None and m.signature.family == root.signature.family and m.line < root.line and m.line in reports
              and m.signature.priority < root.signature.priority and m.signature is not root.signature):
            role = "symptom"         # the runtime's error report of the failure, printed before its own message
        elif m.line in dead and m.signature.family == root.signature.family:
            role = "symptom"         # another call on the poisoned context failing with the root's error
        elif (root is not None and m.signature.family == root.signature.family
              and (m.signature.role not in ("symptom", "wrapper") or _is_frame(m, frames))
              and (m.line < root.line or m.signature is root.signature)):
            if m.line > root.line and not _is_frame(m, frames) and (
                    _propagates(m.text, root.text)
                    or (root.signature.family in POISONS_CONTEXT and m.line not in again
                        and _same_template(m.text, root.text))):
                # the failure handed on (another component aborting on it: TensorFlow's StartAbort), or
                # another call failing on the context the root poisoned (the sanitizer's next API call)
                role = "symptom"
            else:
                role = "detail"      # another line of the root's own family adds detail (a frame: where it passed)
        elif root is not None and m.signature.family == root.signature.family:
            role = "symptom"         # the same failure reported again by another layer, after the root
        elif root is not None and (m.line >= root.line or m.signature.role in ("symptom", "wrapper")):
            role = "symptom"         # a consequence (by its role, or by coming after the root)
        elif m.signature.role == "root" and root is not None and m.signature.tier == "support" != root.signature.tier:
            role = "symptom"         # a bare code or frame beside a named failure reports it, it does not compete
        elif m.signature.role == "root":
            role = "competing"       # a root of another family that lost on priority
        else:
            role = m.signature.role
        links.append(ChainLink(m.line, m.signature.family, m.signature.id, role, m.text))
    if root is not None:
        taken = {link.line for link in links}
        # a line whose only failure evidence is its logger's level is a line of a longer message the
        # logger prefixed line by line (vLLM's `ERROR ... [multiproc_executor.py:N]` on every traceback
        # line, TensorFlow's E-level continuation lines): not a report of its own
        said = {}
        for kind, n, _ in hints:
            if kind in FAILURE_HINTS and kind not in ("frame", "traceback", "lexicon", "convention"):
                said.setdefault(n, set()).add(kind)
        level_only = {n for n, kinds in said.items() if kinds == {"level"}}
        texts = {n: text for _, n, text in hints}
        level_only = {n for n in level_only if not says_failure(texts[n])}
        for kind, n, text in hints:
            # error lines after the root, the error-level summary a watchdog prints just before it, and
            # around a root that explains the whole log (the device failed) the exception the framework
            # raised before the kernel's log line reached the paste; after the root, at any log level,
            # what the failure left behind (a shutdown, cancelled work, the other ranks killed) and a
            # failure its framework logs below error level by convention (TensorFlow's `W ...
            # OP_REQUIRES failed at conv_ops.cc: UNIMPLEMENTED`, NCCL WARN): the failing op reporting it
            near = (n > root.line or (explains_all and kind == "exception")
                    or (root.line - SUMMARY_REACH <= n < root.line and kind in ("level", "error", "fatal")
                        and not text.rstrip().endswith(":")))   # "... giving me the following error:" leads to the root
            after = n > root.line and (kind in ("consequence", "convention", "status") or terminator(text) is not None)
            header = kind == "error" and text.rstrip().endswith(":")    # "Last error:" heads the next line
            if (near and n not in taken and (after or (kind in FAILURE_HINTS and kind not in ("frame", "traceback", "lexicon", "convention")
                                                      and n not in level_only and n not in raises and not header
                                                      and line_level(text) is None))):
                taken.add(n)
                links.append(ChainLink(n, root.signature.family, f"evidence.{kind}", "symptom", text))
        # a traceback that starts after the root is the framework re-raising it (or a launcher dying
        # of it); when none of its own lines is in the chain (the paste cut it before its exception
        # line), its header stands for it, so the reviewer sees that the stack below is the root's
        _reraised_tracebacks(root.line, root.signature.family, hints, links, taken)
        # what the failure left behind on a line a signature of the root's family also knows (a
        # finalizer's report of the dead context: "error in running finalizer: CuError(code=700)")
        left = {n for kind, n, _ in hints if kind == "consequence" and n > root.line}
        links = [ChainLink(link.line, link.family, link.signature, "symptom", link.text)
                 if link.role == "detail" and link.line in left else link for link in links]
        links = links[:1] + sorted(links[1:], key=lambda link: link.line)
        if cause is not None:
            # the cause before a terminator root is the root line; the terminator one of its symptoms
            line, text, sid = cause
            rest = [link for link in links[1:] if link.line != line]
            # (a `raise X(...)` source line moved to the exception it raised is where it was raised: a detail)
            links = ([ChainLink(line, root.signature.family, sid, "root", text),
                      ChainLink(root.line, root.signature.family, root.signature.id,
                                "detail" if _is_raise(root.text) else "symptom", root.text)]
                     + rest)
            links = links[:1] + sorted(links[1:], key=lambda link: link.line)
        # another root signature on the root line itself (a bare code, a rival family's wording of the
        # same message) describes the root, it reports nothing else; a wrapper or symptom signature
        # there is another layer reporting it ("watchdog thread terminated with exception: CUDA error")
        kept = {m.line: m for m in matches if m.line == links[0].line and m.signature.role in ("symptom", "wrapper")}
        links = links[:1] + [ChainLink(link.line, link.family, link.signature, "detail", link.text)
                             if link.role == "symptom" and link.line == links[0].line and link.line not in kept
                             and not link.signature.startswith("evidence.") else link for link in links[1:]]
    return links[:50]


_DIGITS = str.maketrans("", "", "0123456789")


# words of a line that hands a failure on (another component aborting, cancelling or re-raising on it)
PROPAGATION_WORDS = ("abort", "cancel", "recorded from", "propagat", "re-raise", "reraise",
                     "shutting down", "terminat", "killing", "because of", "caused by", "due to previous")


def _same_template(text: str, other: str) -> bool:
    """Two reports of one form that name different things (the sanitizer's 'Program hit
    cudaErrorIllegalAddress ... on CUDA API call to cudaDeviceSynchronize.' and '... to cudaGetLastError.'):
    the same first 30 characters and more, the rest different."""
    a, b = strip_prefix(text).strip(), strip_prefix(other).strip()
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return n >= 30 and a != b


def _propagates(text: str, root_text: str) -> bool:
    """Does this later line of the root's own wording hand the failure on (words the root's line lacks)?"""
    low, root_low = text.lower(), root_text.lower()
    return any(w in low and w not in root_low for w in PROPAGATION_WORDS)


def _same_report(text: str, other: str) -> bool:
    """Two lines that say the same thing but for their numbers (a thread or block index, a rank, a
    timestamp, an address): one report printed again, not another message."""
    a, b = (strip_prefix(t).translate(_DIGITS).strip() for t in (text, other))
    if a == b:
        return True
    # the same message behind something the paste glued to one of them (a progress bar's \r line),
    # but not behind a label that quotes it ("what():  ...": the uncaught exception reporting it again)
    short, long_ = sorted((a, b), key=len)
    return (len(short) >= SAME_REPORT_MIN and long_.endswith(short)
            and not long_[:len(long_) - len(short)].rstrip().endswith(":"))


SAME_REPORT_MIN = 40    # characters of a message glued behind other text that still make it the same report


DEAD_CALL_KINDS = ("exception", "error", "fatal")


def _dead_context_calls(root: Match | None, hints) -> set[int]:
    """Lines after a root that poisons the CUDA context (signatures.taxonomy.POISONS_CONTEXT: an
    illegal address, a device-side assert, a launch failure, an Xid) where another call reports the
    same sticky error: a line after the root that names the runtime's error (a `status` hint) in a
    failure report of its own (an exception, an error line: cudaFree in a destructor, TensorRT's
    deallocate, cudaDeviceSynchronize, TensorFlow polling an event), whose message is not the root's,
    or is the root's again but raised by a new traceback (a destructor's `Exception ignored in`).
    The same line printed twice in a row is the root's message repeated (a detail), a status name
    with no failure form of its own continues the root's message ("Search for `cudaErrorIllegalAddress'
    in ..."), and the kernel driver's records (an Xid per fault) are events, not calls."""
    if root is None or root.signature.family not in POISONS_CONTEXT:
        return set()
    own = strip_prefix(root.text).strip()
    kinds: dict[int, set] = {}
    fresh_at: set[int] = set()
    fresh = False
    for kind, n, text in hints:
        if n <= root.line:
            continue
        if kind in ("traceback", "frame"):
            fresh = True
            continue
        if kind in DEAD_CALL_KINDS or kind == "status":
            if n not in kinds and fresh:
                fresh_at.add(n)
                fresh = False
            kinds.setdefault(n, set()).add(kind)
    texts = {n: text for _, n, text in hints}
    return {n for n, ks in kinds.items()
            if "status" in ks and ks & set(DEAD_CALL_KINDS)
            and (n in fresh_at or strip_prefix(texts[n]).strip() != own)}


def _unexplained_chain(root: Line, sid: str, hints) -> list[ChainLink]:
    """The cascade of a failure no signature explains: its root line, and after it only the lines
    that are consequences whatever the failure was (a terminator: an abort, an exit status, an error
    count, a GPU reset; what the failure left behind: a shutdown, cancelled work)."""
    links = [ChainLink(root.line, "unknown", sid, "root", root.text)]
    taken = {root.line}
    quoted = _message(root.text)
    for kind, n, text in hints:
        if n > root.line and n not in taken and (kind == "consequence" or terminator(text) is not None):
            taken.add(n)
            links.append(ChainLink(n, "unknown", f"evidence.{kind}", "symptom", text))
        elif (n > root.line and n not in taken and kind in ("exception", "error", "fatal", "level")
              and len(quoted) >= SAME_REPORT_MIN and quoted in text):
            # another layer reporting the root's own message ("ERROR engine.run_mp_engine: <it>")
            taken.add(n)
            links.append(ChainLink(n, "unknown", f"evidence.{kind}",
                                   "detail" if _message(text) == quoted else "symptom", text))
    _reraised_tracebacks(root.line, "unknown", hints, links, taken)
    return links[:1] + sorted(links[1:], key=lambda link: link.line)[:49]


def _message(text: str) -> str:
    """A failure line's message without its logger prefix and its exception class (what another layer
    quotes when it reports the same failure)."""
    message = strip_prefix(text).strip()
    colon = message.find(": ", 0, 200)
    head = message[:colon]
    if colon > 0 and not head[0].isdigit() and head.replace(".", "").replace("_", "").isalnum():
        return message[colon + 2:]
    return message


def _reraised_tracebacks(root_line: int, family: str, hints, links: list, taken: set) -> None:
    """A traceback that starts after the root is the framework re-raising it (or a launcher dying of
    it); when none of its own lines is in the chain (the paste cut it before its exception line), its
    header stands for it, so the reviewer sees that the stack below is the root's."""
    # (a C++ backtrace, "Exception raised from f at file:N", is the root exception's own stack: not one)
    texts = {n: text for kind, n, text in hints if kind == "traceback" and "Traceback" in text}
    heads = sorted(n for n in texts if n > root_line and n not in taken)
    for i, n in enumerate(heads):
        end = heads[i + 1] if i + 1 < len(heads) else float("inf")
        if not any(n < link.line < end for link in links):
            taken.add(n)
            links.append(ChainLink(n, family, "evidence.traceback", "symptom", texts[n]))


def _frame_lines(hints) -> set[int]:
    return {n for kind, n, _ in hints if kind == "frame"}


def _is_frame(m: Match, frames: set[int]) -> bool:
    """A match on a traceback frame line (Python's, rich's box, IPython's form)."""
    return m.line in frames or bool(_FRAME.search(m.text) or _RICH_FRAME.search(m.text))


def _passed_through(m: Match, frames: set[int]) -> bool:
    """Support evidence on a traceback frame line (Python's, rich's box, IPython's form), or on the
    source line a frame prints under it (the call an assertion framework was entered from)."""
    return m.signature.tier == "support" and (_is_frame(m, frames) or m.line - 1 in frames)


STICKY_NOTE = "not handled"


def decide(scan: ScanResult, path: str) -> Diagnosis:
    d = Diagnosis(path=path, lines=scan.lines, bytes=scan.bytes, error=scan.error)
    # context evidence (the source line of a check) is never a failure, a rival or a chain line: it
    # only explains an unexplained failure beside it (_warned)
    context = [m for m in scan.matches if m.signature.tier == "context"]
    matches = [m for m in scan.matches if m.signature.tier != "context"] if context else scan.matches
    active = [m for m in matches if not m.demoted]
    benign = [m for m in active if m.signature.role == "benign"]
    failures = [m for m in active if m.signature.role != "benign"]
    if benign:
        benign_lines, own_lines = _benign_lines(benign)
        # a sticky CUDA error (an illegal address, a device-side assert, a device fault) poisons the
        # process's context: no handler in that process gets past it (an autotuner "ignoring this
        # choice", a fallback path), so only a benign match on its own line excuses it
        sticky = [f for f in failures if f.signature.family in POISONS_CONTEXT and f.signature.tier == "hard"
                  and f.signature.role == "root" and f.line not in own_lines]
        failures = [f for f in failures if not _excused(f.line, benign_lines, own_lines) or f in sticky]
        if any(_excused(f.line, benign_lines) for f in sticky):
            d.notes.append(f"{STICKY_NOTE}: the log says the failure was handled, but {sticky[0].signature.family} "
                           "is a sticky CUDA error: every later call in that process fails with it")

    if not failures:
        return _warned(_no_signature(d, scan, matches, benign), scan, matches, context)

    roots = [m for m in failures if m.signature.role == "root" and m.signature.tier == "hard"]
    wrappers = [m for m in failures if m.signature.role == "wrapper"]
    support = [m for m in failures if m.signature.tier == "support"]
    if roots or wrappers:
        root = min(roots or wrappers, key=_rank)
        if _is_repr(root.text):
            # pytest's long traceback shows each frame's locals ("self = <[AcceleratorError('CUDA
            # error: ...')] ...>"): a value that holds the exception, not its report; its `E   ` line is
            reports = [m for m in roots or wrappers if m.signature.family == root.signature.family and not _is_repr(m.text)]
            root = min(reports, key=_rank) if reports else root
    elif support:
        # a failure that is no GPU failure (not-gpu.*: a network error, a taken port) is support evidence:
        # beside a GPU failure of any role (a symptom's named message), it is another traceback of the log
        named_gpu = [m for m in failures if m.signature.tier == "hard" and m.signature.family not in NON_FAILURE]
        # the deepest frame of a traceback is its last: support evidence is read bottom-up
        root = max(support, key=lambda m: (m.line, m.signature.priority))
        if root.signature.family in NON_FAILURE:
            if named_gpu:
                root = min(named_gpu, key=_rank)      # as if the not-GPU failure were not there
            else:                                     # a failure message, not a frame: its first report
                root = min((m for m in support if m.signature.family in NON_FAILURE), key=lambda m: m.line)
        else:
            # a named message of the same family (a symptom signature) says more than the bare code or frame
            named = [m for m in failures if m.signature.tier == "hard" and m.signature.family == root.signature.family]
            if named:
                root = min(named, key=_rank)
    else:
        root = min(failures, key=_rank)
    unframed = _unframed(root, scan, path)
    if unframed is not None:
        return unframed
    sig = root.signature
    # a traceback frame that did not decide is where the failure passed: not a fact or evidence line
    frames = _frame_lines(scan.hints)
    failures = [m for m in failures if m is root or not _passed_through(m, frames)]

    facts: dict = {}
    for m in sorted(failures, key=lambda m: (m.signature.family != sig.family, m is not root, m.line)):
        if m.signature.family == sig.family:
            for k, v in m.facts.items():
                facts.setdefault(k, v)

    same = [m.text for m in failures if m.signature.family == sig.family and m is not root][:MAX_FACT_LINES]
    facts.update(_generic_facts([root.text] + same, facts, scan.hints, root.line))

    d.family, d.origin, d.signature, d.title = sig.family, sig.origin, sig.id, sig.title
    # a terminator (an error count, an abort, an exit status) stands for the cause printed before it
    cause = (cause_before(root.line, root.text, scan.hints, failures, sig.family)
             or exception_after(root.line, root.text, scan.hints))
    # a deciding frame is where the failure passed: the exception that ends its traceback is the root line
    framed = None if cause else _frame_exception(root, scan.hints, frames)
    cause = cause or framed
    d.root = Line(cause[0], cause[1]) if cause else Line(root.line, root.text)
    d.chain = _chain(root, matches, scan.hints, cause)
    if framed:
        d.chain = [ChainLink(c.line, c.family, c.signature, "detail", c.text) if c.line == root.line and c.role == "symptom"
                   else c for c in d.chain]
    d.facts = facts
    d.fact_text = _fact_texts(facts, [root.text] + same)
    d.fix = fill(sig.fix, facts, d.fact_text)
    d.next_step = fill((sig.next_step,), facts, d.fact_text)
    d.explanation = sig.explanation
    d.references = list(sig.references)
    d.frameworks = list(sig.frameworks)
    d.confidence = _confidence(root, roots, wrappers, failures)
    d.evidence = _evidence(root, failures, scan)
    return d


FRAME_TO_EXCEPTION = 40   # lines from a deciding frame to the exception line that ends its traceback
UNFRAMED_NOTE = "a traceback frame did not decide"


def _unframed(root: Match, scan: ScanResult, path: str) -> Diagnosis | None:
    """The diagnosis without the traceback's frames, when the root chosen is a frame (support evidence
    or a wrapper on a `File "..."` line) and the exception that ends its traceback is one no frame can
    claim (diagnose/rootline.toml [[unclaimed]]: an import failure, a binding called with the wrong
    arguments): the call never reached the code the frame names, so the exception decides (its own
    signature, or the unexplained-failure path); None otherwise."""
    from diagnose.rootline import unclaimed

    frames = _frame_lines(scan.hints)
    if not _is_frame(root, frames):
        return None
    ending = next(((n, text) for kind, n, text in scan.hints
                   if kind == "exception" and root.line < n <= root.line + FRAME_TO_EXCEPTION), None)
    why = unclaimed(ending[1]) if ending else None
    if why is None:
        return None
    lo = ending[0] - FRAME_TO_EXCEPTION
    keep = [m for m in scan.matches if not (lo <= m.line < ending[0] and _is_frame(m, frames))]
    d = decide(ScanResult(matches=keep, hints=scan.hints, lines=scan.lines, bytes=scan.bytes, error=scan.error), path)
    d.notes.append(f"{UNFRAMED_NOTE}: the exception that ends its traceback (line {ending[0]}, {why}) "
                   f"says the call never reached the code the frame at line {root.line} names")
    return d


def _frame_exception(root: Match, hints, frames: set[int]):
    """(line, text, id) of the exception that ends the traceback of a deciding frame, or None. A
    traceback frame (support evidence) decides the family but is where the failure passed; the
    exception line below it, when the log kept one, is the failure itself; so is a wrapper signature
    that names a frame (a compiler's lowering module the traceback passed through)."""
    if (root.signature.tier == "support" or root.signature.role == "wrapper") and _is_frame(root, frames):
        for kind, n, text in hints:
            # (TVM's FFI errors open with "ValueError: Traceback (most recent call last):", a header
            # of the C++ stack below, not the message)
            if (kind == "exception" and root.line < n <= root.line + FRAME_TO_EXCEPTION
                    and "(most recent call last)" not in text):
                return n, text, "evidence.exception"
    return None


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_RICH_FRAME = re.compile(r'\.py:\d+,? in \w')   # rich's box ("│ /x.py:2050 in all_reduce"), IPython's ("File /x.py:126, in f")
TEMP_DIRS = ("/tmp/", "\\Temp\\", "<frozen", "<string>", "torchinductor_")


def _generic_facts(lines: list[str], known: dict, hints, root_line: int) -> dict:
    """Facts the signature did not capture, from the failure's own lines (signatures/facts.toml), and
    the source location from the traceback frames the scan kept above the root: the program's own
    innermost frame (`source`), and the innermost frame when that is in a package (`raised_at`)."""
    from signatures.generic_facts import extract, frames_from_hints

    found = extract(lines, known)
    frames = [h[2] for h in hints if h[0] == "frame" and h[1] <= root_line]
    for k, v in frames_from_hints(frames).items():
        if k not in known:
            found[k] = v
    return found


def _fact_texts(facts: dict, lines: list[str]) -> dict:
    from signatures.generic_facts import fact_texts

    return fact_texts(facts, lines)


def _whole_log_facts(d: Diagnosis, lines: list[str] | None) -> None:
    """Facts from the text around the root, which decide() (reading only the lines signatures and
    hints kept) cannot see: the lines that continue the root's message, the stack frames of a small
    log read whole (Python above the root, Julia below), the whole-log facts (a build command's arch,
    both driver versions of a mismatch, the GPU's name); then how the log spelled each size."""
    from signatures.generic_facts import (context, extract, extract_log, extract_new, fact_texts, is_library,
                                          launch_site, lead, source_location)

    root = d.root
    if lines is None or root is None:
        return
    # the line the root continues (a header ending in ':'), then the lines that continue the root
    after = lead(lines, root.line) + context(lines, root.line)
    new = extract(after, d.facts)
    for k, v in new.items():
        d.facts.setdefault(k, v)
    source = d.facts.get("source")
    if not isinstance(source, str) or is_library(source):
        # the scan's frames gave no frame of the program itself (or none): the whole stack, Julia's too
        where = source_location(lines, root.line)
        if where:
            d.facts.pop("raised_at", None)
            d.facts.update(where)
    for k, v in launch_site(lines, root.line).items():
        d.facts.setdefault(k, v)        # the program's kernel launch the failure passed through
    chain = [c.text for c in d.chain if c.line != root.line][:MAX_FACT_LINES]
    for k, v in extract_new(chain, d.facts).items():
        d.facts.setdefault(k, v)        # what the chain's lines add: kinds the root's lines did not say
    for k, v in extract_log(lines, d.facts, root.line, d.family).items():
        d.facts.setdefault(k, v)
    if new:                        # sizes decide() had not seen: as the root's continuation spells them
        d.fact_text = {**fact_texts({k: d.facts[k] for k in new if k in d.facts}, after), **d.fact_text}


def _readings(d: Diagnosis) -> Diagnosis:
    """Other readers' view of the chosen root (outside `decide`, which stays a pure function of the scan):
    assert_close text in a log gets the same tolerance reading as `diagnose numerics`."""
    if d.family == "numerical-mismatch":
        from diagnose.numerics import annotate_diagnosis

        annotate_diagnosis(d)
    return d


def _confidence(root: Match, roots, wrappers, failures) -> float:
    """The probability that the family is right, by the kind of evidence that decided it (confidence.toml)."""
    return round(max(0.0, min(0.99, confidence_of(_kind(root, roots)))), 2)


def _kind(root: Match, roots) -> str:
    """The kind of evidence a signature answer rests on (bench.rounds.kind_of names the same kinds)."""
    if root.signature.tier == "support":
        return "support"
    if root.signature.role == "root":
        rival = any(m.signature.family != root.signature.family
                    and m.signature.priority >= root.signature.priority - RIVAL_WINDOW for m in roots)
        return "root-rival" if rival else "root"
    return "wrapper" if root.signature.role == "wrapper" else "symptom"


def _evidence(root: Match | None, failures: list[Match], scan: ScanResult) -> list[Line]:
    lines = {m.line: m.text for m in failures}
    if root:
        lines[root.line] = root.text
    for kind, n, text in scan.hints:
        if kind in ("traceback", "exception", "fatal") and line_level(text) is None:
            lines.setdefault(n, text)
    return [Line(n, t) for n, t in sorted(lines.items())][:200]


def _fallback_guess(d: Diagnosis, hints: list, root, frames: list[str] = ()) -> None:
    """An unexplained failure gets the family its wording points at, as a low-confidence guess.

    The root line counts double; the last few error lines count once. The log stays marked as
    unexplained (signature `fallback.<family>`), so `diagnose clusters` still lists it. `frames`
    (the traceback's frame lines) are read only for the GPU context some families need."""
    from signatures.fallback import guess

    lines = guess_lines(root, hints)
    # the root line as logged, its logger's prefix kept, is context too: the source file a glog/absl
    # prefix names ('F .../stream_executor/cuda/cuda_dnn.cc:1011] Invalid DNN data type: 7') says the
    # GPU side raised it, though the message alone names no GPU word
    context = [strip_prefix(t) for t in frames[-40:]] + [root[2]]
    g = guess([(t, 2.0 if k == 0 else 1.0) for k, t in enumerate(lines)], context)
    if g is None:
        if root[0] not in MODEL_SKIPS:
            _model_guess(d, lines, [strip_prefix(t) for t in frames[-40:]])
        return
    d.family, d.origin, d.signature = g.family, g.origin, f"fallback.{g.family}"
    d.confidence = confidence_of("fallback")
    d.title = f"probably {g.family}: guessed from the wording ({', '.join(g.words[:3])}); no signature matched"
    d.fix = g.fix
    d.explanation = ("No signature explains this failure. The family is a guess from words in the error "
                     "lines, not a recognised message: confirm it by reading the root line.")


# roots the word model does not read: a bare failure word ("CUDA error" in prose) or an exit or kill
# statement ("about to be killed") is evidence that
# something failed, not of what; a traceback header or frame names no failure at all; a line only the
# learned failure-line detector reads as a failure (`lineflag`: _flagged) gets the word table's family or
# none, not a second learned guess on top of the first (on the perf corpus the word model named a failing
# pytest case 'compile-error')
MODEL_SKIPS = ("lexicon", "exit", "traceback", "frame", "lineflag")


# the error lines a guess reads beside the root are those within this many lines of it: a log with
# several unrelated failures (a Hub download that timed out, then a KeyError 2,000 lines later) is not
# guessed from the other one. On the shared perf corpus's ordinary non-GPU failures, reading the last
# 8 error lines of the whole log gave a GPU family to 695 logs with no GPU event, 393 at 30 lines (the
# rest: a missing flash_attn as the root itself); no labelled answer changes at 10, 30 or 60 (misses.py).
GUESS_REACH = 30


def guess_lines(root, hints) -> list[str]:
    """The lines a guess reads, root first: the root line, then the last few error lines near it (not frames)."""
    near = [h for h in hints if abs(h[1] - root[1]) <= GUESS_REACH]
    return [strip_prefix(root[2])] + [strip_prefix(t) for _, n, t in near[-8:] if n != root[1]]


def _model_guess(d: Diagnosis, lines: list[str], frames: list[str]) -> None:
    """No word of the table: the learned word model's family (signatures/wordmodel.py), lower still."""
    from signatures.fallback import family_row
    from signatures.wordmodel import guess

    g = guess(lines, frames)
    if g is None:
        return
    origin, fix = family_row(g.family)
    d.family, d.origin, d.signature = g.family, origin, f"fallback.model.{g.family}"
    d.confidence = confidence_of("model")
    d.title = (f"probably {g.family}: guessed by the word model ({', '.join(g.words)}); "
               "no signature or listed wording matched")
    d.fix = fix
    d.explanation = ("No signature explains this failure and none of the listed wordings occurs. The family "
                     "is a learned guess: these words occur mostly in logs of that family among the labelled "
                     "ones. Treat it as a direction to check against the root line, not a diagnosis.")


@functools.lru_cache(maxsize=64)
def _context_when(pattern: str):
    import re2
    return re2.compile(pattern)


def _root_takes(pattern: str, text: str) -> bool:
    """Whether a context signature's `context_when` (re2) takes this unexplained failure's root line."""
    return _context_when(pattern).search(text) is not None


WARNED_REACH = 20    # lines between a failure no signature explains and a known failure logged as a warning
WARNED_NOTE = "explained beside the failure"


def _warned(d: Diagnosis, scan: ScanResult, matches: list[Match], context: list[Match] = ()) -> Diagnosis:
    """A failure no signature explains, beside evidence that names its family without being a failure
    itself: a known failure logged at warning level within WARNED_REACH lines (a prerequisite check
    "async_io requires libaio ... not found", then "Unable to pre-compile async_io"), or `context`
    evidence within its signature's `context_reach` (the source line `assert torch.allclose(...)` just above a
    bare AssertionError; a prerequisite check "X requires libY ... not found" printed as plain text).
    On its own neither is a failure (the taxonomy's rule on warnings); beside one it predicts the
    family, as support evidence (support confidence), never above a hard root, a frame or a code
    (those decided already)."""
    if d.root is None or not (d.family == "unknown" or (d.signature or "").startswith("fallback.")):
        return d
    at = d.root.line
    near = [m for m in matches if m.demoted and m.signature.role == "root" and m.signature.tier == "hard"
            and abs(m.line - at) <= WARNED_REACH]
    near += [m for m in context if 0 < abs(at - m.line) <= m.signature.context_reach
             and (not m.signature.context_when or _root_takes(m.signature.context_when, d.root.text))]
    if not near:
        return d
    from dataclasses import replace

    best = min(near, key=lambda m: (m.signature.tier != "context", -m.signature.priority, abs(m.line - at), m.line))
    promoted = replace(best, demoted=False, signature=replace(best.signature, tier="support"))
    rescan = ScanResult(matches=[promoted if m is best else m for m in matches] + ([promoted] if best in context else []),
                        hints=scan.hints, lines=scan.lines, bytes=scan.bytes, error=scan.error)
    d2 = decide(rescan, d.path)
    if d2.signature != best.signature.id:
        return d
    # the failure it explains is its symptom, wherever the paste put it
    if all(link.line != at for link in d2.chain):
        d2.chain.append(ChainLink(at, d2.family, "evidence.unexplained", "symptom", d.root.text))
        d2.chain = d2.chain[:1] + sorted(d2.chain[1:], key=lambda link: link.line)
    # a check's source line (as a traceback prints it) explains; the failure is what it raised
    code = best in context and best.text.lstrip(" \t'\"`>").startswith("assert")
    # evidence that names the family only beside a failure of its kind (`context_when`: a launch frame
    # beside an invalid-value error) says which call raised it; the failure is the root
    raised = best in context and bool(best.signature.context_when)
    how = ("the source line of the check that failed" if code else "a line of the call that raised it" if raised
           else "evidence that is not a failure on its own" if best in context else "a known failure logged at warning level")
    if code or raised:
        d2.root = Line(at, d.root.text)
    if raised:        # the failure's own facts (its code, the file:line it names) are read from its line
        d2.facts = {**d.facts, **d2.facts}
        d2.fact_text = {**(d.fact_text or {}), **(d2.fact_text or {})}
    d2.notes.append(f"{WARNED_NOTE}: {how} (line {best.line}) explains the failure at line {at}")
    return d2


BENIGN_AFTER = 5   # reach = "after": the lines a benign line quotes just below it (its source frames)


def _benign_lines(benign: list[Match]) -> tuple[list[int], set[int]]:
    """The lines of benign matches that excuse the failures around them (sorted), and those that
    excuse only their own line (`reach = "line"`: an informational vendor code) or their own line and
    the BENIGN_AFTER lines below it (`reach = "after"`: a note quoting the source frames it is about)."""
    # reach = "before": only the failures above the benign line (a search that found what a warning
    # just before missed), not those after it: its line counts as if it stood BENIGN_SLACK + 1 lines
    # higher, so _excused's slack below a benign line ends just above it
    around = sorted([b.line for b in benign if b.signature.reach == "around"]
                    + [b.line - BENIGN_SLACK - 1 for b in benign if b.signature.reach == "before"])
    own = {b.line for b in benign if b.signature.reach == "line"}
    own |= {b.line + k for b in benign if b.signature.reach == "after" for k in range(BENIGN_AFTER + 1)}
    return around, own


BENIGN_SLACK = 5   # a benign line excuses the failures up to this many lines above it too


def _excused(line: int, benign_lines: list[int], own_lines: set[int] = frozenset()) -> bool:
    """A benign line at most BENIGN_REACH lines after `line`, or BENIGN_SLACK before it (`benign_lines`
    sorted), or a benign match on `line` itself that excuses only its own line."""
    if line in own_lines:
        return True
    i = bisect.bisect_left(benign_lines, line - BENIGN_SLACK)
    return i < len(benign_lines) and benign_lines[i] <= line + BENIGN_REACH


def _counts(kind: str, text: str) -> bool:
    """Does a generic failure line count as evidence of a failure? Not when it was logged at warning or
    info level (a handled failure, a retry; a level tag behind an issue's quoting counts too:
    signatures.normalise.line_level), except a checker's `report` at info level: a NaN loss or a
    failing test is printed by the training loop or harness on its ordinary (info) channel. A `convention`
    line counts at any level (NCCL logs its failures as WARN); a `lexicon` line (a bare failure word)
    only with no level tag and no benign context (signatures/evidence.toml [[excuse]]). A `limit` line (a
    request stated against the device's limit) and a `retry` line count at any level (a retry only when
    the log never gets past it: _retries_unpassed)."""
    if kind in ("convention", "limit", "retry"):
        return True          # a failure its framework logs below error level by convention (NCCL WARN)
    level = line_level(text)
    if kind == "lexicon":
        return level is None and not excused(text)
    if kind == "level" and not strip_prefix(text).strip():
        return False         # an E-level prefix with no message (absl put it on the next line): that line says what
    return level is None or (kind == "report" and level == "info")


RAISED_WARNING = r"^E\s{3,}(?:[A-Za-z_]\w*\.)*[A-Z]\w*Warning: "   # re2 (_context_when): it reads log text


def _retries_unpassed(hints: list) -> list:
    """The hints less the `retry` lines the log gets past: a retried connection is a handled failure
    unless it was retried at least twice and no line after the last retry says a step completed (an
    `ok` hint, such as NCCL's Init COMPLETE)."""
    retries = [h for h in hints if h[0] == "retry"]
    if not retries:
        return hints
    last = retries[-1][1]
    if len(retries) >= 2 and not any(h[0] == "ok" and h[1] > last for h in hints):
        return hints
    return [h for h in hints if h[0] != "retry"]


def _row_head(text: str) -> list[str]:
    return strip_prefix(text).split()[:2]


def _first_of_rows(same) -> bool:
    """Is the first of these hints (one kind, the best an unexplained log has) its root rather than the
    last? A checker's or harness's findings (`report`: a NaN row, a failing case, a tolerance report)
    are printed as they are found, so the first is the earliest failure and the later ones repeat it or
    sum it up; bare failure words (`lexicon`) only when they are rows of one form (the same two leading
    words: DeepEP's 'dispatch NVL receiver timeout, channel: N' per channel), not a heading and its
    message (MATLAB's 'Error using arrayfun' above the reason). An exception's last line stays the root."""
    if len(same) < 2:
        return False
    if same[0][0] == "report":
        return True
    return same[0][0] == "lexicon" and _row_head(same[0][2]) == _row_head(same[-1][2])


def _stack_body(hint, texts: dict[int, str]) -> bool:
    """Is this level line, once its logger prefix is off, part of a traceback's stack (its header, a
    frame, or the indented source line right under a frame)? `texts`: the level lines by number."""
    body = strip_prefix(hint[2]).strip()
    if body.startswith(('File "', "Traceback (most recent call last)")):
        return True
    above = texts.get(hint[1] - 1)
    if above is None or not strip_prefix(above).lstrip().startswith('File "'):
        return False
    head = body.split(":", 1)[0].split("(", 1)[0].strip()      # under a frame: its source line, unless
    return not (head.replace(".", "").replace("_", "").isalnum()  # it is the exception ('TimeoutError(...)')
                and head.endswith(("Error", "Exception", "Exit", "Interrupt", "Failure", "Fault")))


def unexplained_root(hints):
    """(root hint, cause) of an unexplained failure: the last hint of the best kind (HINT_ORDER; the first
    where they are a checker's findings or rows of one form: _first_of_rows), or,
    when it is a terminator with its cause just before it (diagnose/rootline.py), that cause, whose
    facts and words are read instead; `cause` is None or (line, text, id)."""
    best = min(HINT_ORDER[h[0]] for h in hints)
    same = [h for h in hints if HINT_ORDER[h[0]] == best]
    if same[0][0] == "level":
        # a traceback logged line by line behind a logger prefix ('ERROR ... client.py:412]   File ...'):
        # its header, frames and their source lines are level lines too, and a paste cut inside the stack
        # would end on a source line; the message is the last level line that is none of them
        texts = {h[1]: h[2] for h in same}
        said = [h for h in same if not _stack_body(h, texts)]
        same = said or same
    root = same[0] if _first_of_rows(same) else same[-1]
    cause = cause_before(root[1], root[2], hints)
    if cause:
        root = (root[0], cause[0], cause[1])
    elif terminator(root[2]) is not None:
        # a terminator (the shell's report of the signal, an abort) after a failure line of the same
        # kind that is no cause-kind line ('libc++abi: terminating due to uncaught exception ...'): it
        # says only that the process stopped, the failure line before it says why
        said = [h for h in same if terminator(h[2]) is None and h[1] < root[1]]
        # only terminators (make's 'Error 1' of each level, then 'Error 2'): the first is the innermost
        root = said[-1] if said else same[0]
    return root, cause


def guess_view(scan: ScanResult):
    """(lines, frames, root kind) a guess reads in this log's failure lines as if no signature explained it
    (no benign excuses applied), or None without failure lines: bench.wordmodel trains on these."""
    hints = [h for h in _retries_unpassed(scan.hints) if h[0] in FAILURE_HINTS and _counts(h[0], h[2])]
    if not hints:
        return None
    root, _ = unexplained_root(hints)
    return (guess_lines(root, [h for h in hints if h[0] != "frame"]), [strip_prefix(t) for k, _, t in hints if k == "frame"],
            root[0])


def _no_signature(d: Diagnosis, scan: ScanResult, matches: list[Match], benign: list[Match]) -> Diagnosis:
    """No signature explains a failure. `none` needs evidence of no failure: any failure line left
    (an exception, an error or E/F-level line, an assertion, a fatal signal, a non-zero exit) that no
    benign signature excuses makes the log `unknown` (with a wording guess), never `none`."""
    # generic error lines around a handled fallback belong to it, like the failures it excuses
    benign_lines, own_lines = _benign_lines(benign)
    hints = [h for h in _retries_unpassed(scan.hints) if h[0] in FAILURE_HINTS and _counts(h[0], h[2])
             and not _excused(h[1], benign_lines, own_lines)]
    d.chain = _chain(None, matches)
    if scan.error and not scan.bytes:
        binary = scan.error.startswith("binary")
        d.family, d.confidence = "unknown", 0.0
        d.title = "not a text log (a binary file): there is nothing to diagnose" if binary else "input could not be read"
        d.fix = "Check the file: " + scan.error
        return d
    if not scan.bytes:
        d.family, d.confidence, d.title = "unknown", 0.0, "the log is empty: there is nothing to diagnose"
        d.fix = ("An empty log is neither a failure nor a success: check that the task's output was captured "
                 "(stdout and stderr, the right file).")
        return d
    if hints:
        root, cause = unexplained_root(hints)
        d.family, d.confidence = "unknown", confidence_of("unknown")
        d.title = "a failure no signature explains"
        sid = cause[2] if cause else f"evidence.{root[0]}"
        d.root = Line(root[1], root[2])
        d.chain = _unexplained_chain(d.root, sid, scan.hints)
        frames = [h for h in hints if h[0] == "frame"]
        shown = [h for h in hints if h[0] != "frame"] + frames[-1:]   # the innermost frame, not the whole stack
        d.evidence = [Line(n, t) for _, n, t in sorted(shown, key=lambda h: h[1])][-40:]
        d.fix = ("No signature explains this failure; the root line is the most likely error "
                 "(last exception, assertion, fatal signal or error line).")
        d.next_step = UNKNOWN_NEXT
        d.facts = _generic_facts([root[2]], {}, scan.hints, root[1])
        d.fact_text = _fact_texts(d.facts, [root[2]])
        if not _context_when(RAISED_WARNING).search(root[2]):
            # a warning class raised as the failure (pytest's filterwarnings = error) words advice, not a
            # cause: no family is guessed from it
            _fallback_guess(d, [h for h in hints if h[0] != "frame"], root, [t for k, _, t in hints if k == "frame"])
        return d
    d.family = "none"
    progress = [h for h in scan.hints if h[0] == "ok"]
    if matches:
        d.confidence = confidence_of("none-handled")
        d.title = "failure text appears only in warnings or handled exceptions"
        d.evidence = [Line(m.line, m.text) for m in matches][:40]
        d.explanation = ("Every line that looks like a failure was logged at warning/info level or "
                         "was caught and handled (a fallback); the run itself did not fail.")
        informational = [m for m in benign if m.signature.reach == "line"]
        if informational and len(informational) == len(matches):
            # only vendor codes their vendor calls informational (an Xid 63 row remap): say so
            sig = informational[0].signature
            d.title, d.explanation, d.fix = sig.title, sig.explanation, fill(sig.fix, informational[0].facts)
            d.references = list(sig.references)
    elif progress:
        d.confidence = confidence_of("none-progress")
        d.title = "no failure found, and the log shows normal progress"
        d.evidence = [Line(n, t) for _, n, t in progress]
    else:
        d.confidence = confidence_of("none-silent")
        d.title = SILENT_TITLE
    return d


SILENT_TITLE = "no failure found (and no sign of progress either: the log may be cut)"


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


class _Context:
    """What the advice layer reads of the scan: the lines it kept and the innermost traceback frame."""
    __slots__ = ("lines", "frames")

    def __init__(self, lines, frames):
        self.lines, self.frames = lines, frames


def _decide(scan: ScanResult, path: str, matcher, reader) -> Diagnosis:
    return _decide_ctx(scan, path, matcher, reader)[0]


def _decide_ctx(scan: ScanResult, path: str, matcher, reader) -> tuple[Diagnosis, _Context]:
    """decide() and the readings, then the log's ecosystems and the signature's fix in their terms."""
    from diagnose import advice

    d = _readings(_flagged(_blank(_decide_scan(scan, path, matcher, reader), scan, reader), scan, reader))
    root_line = d.root.line if d.root else None
    lines = _whole_text(scan, d, reader)
    _refine_root(d, lines)
    _whole_log_facts(d, lines)
    if lines is None:          # a big log: the lines the scan kept (error lines, frames, matches)
        lines = [t for _, _, t in scan.hints] + [m.text for m in scan.matches]
        lines += [e.text for e in d.evidence] + ([d.root.text] if d.root else [])
    frames = [t for kind, n, t in scan.hints if kind == "frame" and (root_line is None or n < root_line)]
    sig = _signature(d.signature, scan, matcher)
    d.ecosystems = advice.detect(lines, sig.frameworks if sig else ())
    if sig is not None and d.family == sig.family:
        _variants(d, sig)
    return d, _Context(lines, frames[-1:])


def _refine_root(d: Diagnosis, lines: list[str] | None) -> None:
    """The root line moved by the log's own text around it (diagnose/rootline.py refine): the family,
    signature and facts stay; the line left becomes a symptom in the chain."""
    if d.root is None or d.family == "none":
        return
    moved = refine(lines, d.root.line, d.root.text)
    if moved is None:
        return
    n, text, rule = moved
    old = d.root
    d.root = Line(n, text)
    link = next((c for c in d.chain if c.line == old.line), None)
    family, was = (link.family, link.signature) if link else (d.family, d.signature or rule)
    rest = [c for c in d.chain if c.line not in (n, old.line)]
    d.chain = ([ChainLink(n, family, rule, "root", text), ChainLink(old.line, family, was, "symptom", old.text)]
               + rest)
    from signatures.generic_facts import extract

    for k, v in extract([text], d.facts).items():
        d.facts.setdefault(k, v)        # the new root line's own facts (decide read the line it left)
    if d.family == "unknown" and not d.signature:
        # an unexplained failure whose root moved (a C++ terminate's 'what():' line under 'terminate
        # called'): the wording guess reads the line that states the failure, not the one it left
        _fallback_guess(d, [], (rule, n, text), [])


WHOLE_TEXT_MAX = 256 << 10     # a failing log up to this size is read whole for the advice layer


def _whole_text(scan: ScanResult, d: Diagnosis, reader) -> list[str] | None:
    """Every line of a small failing log (warnings like "Found GPU0 ... of cuda capability 3.5" and
    the command line name the framework and the device); None for big or clean logs."""
    from signatures.normalise import normalise_chunk

    if d.family == "none" or scan.error or not scan.bytes or scan.bytes > WHOLE_TEXT_MAX:
        return None
    try:
        data = reader()
    except (OSError, EOFError, ValueError):
        return None
    if not data:
        return None
    text = normalise_chunk(data[:WHOLE_TEXT_MAX]).decode("utf-8", "replace")
    # a long line keeps its head and its tail (a sanitizer frame ends with the file:line)
    lines = text.split("\n")
    if max(map(len, lines)) <= 600:      # most logs: no line to cut (one pass in C)
        return lines
    return [line if len(line) <= 600 else line[:400] + " ... " + line[-200:] for line in lines]


def _signature(sig_id, scan: ScanResult, matcher):
    if not sig_id:
        return None
    for m in scan.matches:
        if m.signature.id == sig_id:
            return m.signature
    by_id = getattr(matcher, "by_id", None)
    if by_id is not None:
        return by_id.get(sig_id)
    return next((s for s in getattr(matcher, "signatures", ()) if s.id == sig_id), None)


def _variants(d: Diagnosis, sig) -> None:
    """A signature's fix/next step written for the log's ecosystem (`fix_for`, `next_step_for`)."""
    from diagnose.advice import lookup_order

    fixes, nexts = dict(sig.fix_for), dict(sig.next_step_for)
    order = lookup_order(d.ecosystems)
    for eco in order:
        if eco in fixes and _fillable(fixes[eco], d.facts):
            d.fix = fill(fixes[eco], d.facts, d.fact_text)
            break
    for eco in order:
        if eco in nexts and _fillable((nexts[eco],), d.facts):
            d.next_step = fill((nexts[eco],), d.facts, d.fact_text)
            break


def _fillable(templates, facts: dict) -> bool:
    """Some template's facts are all known (a variant never prints '?' where the default would not)."""
    return any(all(n in facts for n in re.findall(r"\{(\w+)\}", t)) for t in templates)


def _finish(d: Diagnosis, ctx: _Context, snapshot: dict | None) -> Diagnosis:
    """The snapshot's reading (fusion), then the reasoning rules and the advice in the log's terms."""
    from diagnose.advice import advise
    from diagnose.fusion import fuse

    d = fuse(d, snapshot) if snapshot else d
    return advise(d, snapshot, ctx.frames, ctx.lines)


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
    if not (_unexplained(d) or _support_only(d, scan)) or scan.error or not scan.bytes or scan.bytes > RESCUE_MAX_BYTES:
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
    if d2.family == "none" or _unexplained(d2) or _support_only(d2, rescued):
        return d
    d2.confidence = round(min(d2.confidence, confidence_of("wrapped")), 2)
    d2.notes.append("matched across a hard-wrapped line (the message was cut in two by a terminal or a paste)")
    return d2


BLANK_MAX_BYTES = 64 << 10    # a silent `none` log this small is read again to see whether it holds any text


def _blank(d: Diagnosis, scan: ScanResult, reader) -> Diagnosis:
    """A log of blank lines only is not `none` (no evidence either way): it says what it is."""
    if d.family != "none" or scan.matches or scan.hints or not scan.bytes or scan.bytes > BLANK_MAX_BYTES:
        return d
    try:
        data = reader()
    except (OSError, EOFError, ValueError):
        return d
    if data is None or data.strip():
        return d
    d.family, d.confidence, d.evidence = "unknown", 0.0, []
    n = data.count(b"\n") or 1
    d.title = f"the log holds only blank lines ({n}): there is nothing to diagnose"
    d.fix = ("A log of blank lines is neither a failure nor a success: check that the task's output was "
             "captured (stdout and stderr, the right file).")
    d.explanation = ""
    return d


FLAG_MAX_BYTES = 1 << 20    # a silent `none` log up to this size is read again by the failure-line detector


def _flagged(d: Diagnosis, scan: ScanResult, reader) -> Diagnosis:
    """A silent `none` (no signature, no failure evidence, no progress) whose text holds a line the
    learned failure-line detector (signatures/lineflag.py) reads as a failure is not `none`: the
    failure is worded in a way no evidence entry knows ("Failed to find any forward convolution
    algorithm.", "call to cuStreamSynchronize returned error 700"). It becomes `unknown` with that
    line as its root, and the wording guess (fallback table, then word model) reads it."""
    from signatures.lineflag import load

    if d.family != "none" or d.title != SILENT_TITLE or scan.matches or not scan.bytes or scan.bytes > FLAG_MAX_BYTES:
        return d
    detector = load()
    if detector is None:
        return d
    try:
        data = reader()
    except (OSError, EOFError, ValueError):
        return d
    if not data:
        return d
    from signatures.normalise import normalise_chunk

    hit = detector.flag(normalise_chunk(data[:FLAG_MAX_BYTES]))
    if hit is None:
        return d
    n, text, p = hit
    text = text.rstrip("\r")
    d.family, d.confidence = "unknown", confidence_of("unknown")
    d.title = "a failure no signature explains (a line reads like one to the learned failure-line detector)"
    d.root = Line(n, text)
    d.chain = _unexplained_chain(d.root, "lineflag", scan.hints)
    d.evidence = [d.root]
    d.explanation = ""
    d.fix = ("No signature or evidence entry knows this wording; the learned failure-line detector reads "
             "the root line as a failure. Read it: if it is not one, the log is `none`.")
    d.next_step = UNKNOWN_NEXT
    d.facts = _generic_facts([text], {}, scan.hints, n)
    d.fact_text = _fact_texts(d.facts, [text])
    d.notes.append(f"kept out of `none` by the learned failure-line detector (posterior {p:.3f}, "
                   "signatures/lineflag.py)")
    _fallback_guess(d, [], ("lineflag", n, text), [])
    return d


def _support_only(d: Diagnosis, scan: ScanResult) -> bool:
    """Decided by support evidence alone (a bare status code, a frame): a message cut in two by a
    terminal may still name the failure exactly, so the wrapped-line rescue is worth its read."""
    return any(m.signature.id == d.signature and m.signature.tier == "support" for m in scan.matches)


def _unexplained(d: Diagnosis) -> bool:
    """No signature explained it (`unknown`, or a wording guess); a known failure that is no GPU
    failure (a not-gpu.* signature: host RAM exhausted) is explained, though its family is `unknown`."""
    from signatures.taxonomy import is_not_gpu

    return (d.family == "unknown" and not is_not_gpu(d.family, d.signature)) or (d.signature or "").startswith("fallback.")


def _joined_matches(data: bytes, matcher, seen_ids: set[str]) -> list:
    from signatures.normalise import normalise_chunk
    from signatures.wrapped import joined_pairs

    buf = normalise_chunk(data)
    at, joined = joined_pairs(buf)   # per joined line: the offset of its first line; the two joined
    if not joined:
        return []
    # only signatures that could add something: not generic hints, not benign, not already matched
    owners = matcher.owners

    def wanted(pid: int) -> bool:
        sig = owners[pid][1]
        return sig is not None and sig.role != "benign" and sig.id not in seen_ids

    scan = matcher.scan_bytes(b"\n".join(joined) + b"\n", wanted, failures_only=True)
    out, taken = [], set()
    for m in scan.matches:
        i = at[m.line - 1]
        if m.signature.id in seen_ids or (m.signature.id, i) in taken or m.signature.role == "benign":
            continue
        taken.add((m.signature.id, i))
        m.line = buf.count(b"\n", 0, i) + 1
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
    d, ctx = _decide_ctx(scan, str(path), matcher, _file_reader(log) if str(path) != "-" else (lambda: None))
    if log is not p and (p / "capture.json").exists():
        d = apply_capture(d, load_snapshot(p / "capture.json") or {})
    return _finish(d, ctx, snapshot)


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
    matcher = matcher or default_matcher()
    plain = [p for p in paths if p != "-" and not os.path.isdir(p)]
    scans = dict(zip(plain, matcher.scan_many(plain, keep=True)))
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
        data, scan.data = scan.data, None      # read once: the rescue and the advice layer reuse it
        d, ctx = _decide_ctx(scan, p, matcher, _file_reader(p) if data is None else (lambda data=data: data))
        out.append(_finish(d, ctx, snapshot))
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
    data = text.encode() if isinstance(text, str) else text
    matcher = default_matcher()
    d, ctx = _decide_ctx(matcher.scan_bytes(data), path, matcher, lambda: data)
    return _finish(d, ctx, snapshot)
