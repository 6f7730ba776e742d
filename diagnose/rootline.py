"""Root at the cause, not the abort: a terminator chosen as the root gives way to the cause before it.

A build's error count, CMake's "Configuring incomplete", `terminate called ...`, `Aborted (core
dumped)`, an exit status, a GPU reset: each says only that the run stopped. When the line chosen as
the root is one (diagnose/rootline.toml) and a cause-kind line stands shortly before it in the same
run of failure lines, the earliest such line is the root line. A pure function of the scan's lines;
the terminator patterns run in re2 on the one chosen line, the scan's hints give the candidates.

`refine` then reads the small log's own text around the chosen root (after decide, docs/trust.md):
an empty line's message head, the message a terminator announces ([[follower]]), the fault that
explains the root ([[precursor]]), then the earliest copy of the same failure (twins). Patterns run
in re2; the twin comparison is word-by-word on at most TWIN_REACH lines: linear in the log.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from signatures.normalise import line_level, strip_prefix

TABLE = Path(__file__).parent / "rootline.toml"
# hint kinds that can be a cause (signatures/evidence.toml): not a frame, a traceback header, an
# exit or a fatal signal (those are terminators themselves), nor a consequence
CAUSE_KINDS = ("exception", "assert", "error", "status", "level", "report")
REACH = 40   # a cause stands at most this many lines before the terminator
GAP = 12     # and the failure lines between them are at most this far apart (one run, one block)

_compiled: list | None = None
_joined = None


def terminators() -> list[tuple[str, object]]:
    """(id, compiled re2) of every [[terminator]] of rootline.toml, loaded once (with _joined: all
    of them in one alternation, so the many lines that are no terminator cost one search)."""
    global _compiled, _joined
    if _compiled is None:
        import re2

        rows = tomllib.loads(TABLE.read_text(encoding="utf-8"))["terminator"]
        _joined = re2.compile("|".join(f"(?:{r['pattern']})" for r in rows))
        _compiled = [(r["id"], re2.compile(r["pattern"])) for r in rows]
    return _compiled


def terminator(text: str) -> str | None:
    """The id of the terminator this line is, or None."""
    msg = strip_prefix(text)
    each = terminators()
    if not (_joined.search(msg) or (msg != text and _joined.search(text))):
        return None
    for tid, rx in each:
        if rx.search(msg) or rx.search(text):
            return tid
    return None


def cause_before(root_line: int, root_text: str, hints, matches=(), family: str | None = None):
    """(line, text, id) of the cause a terminator root stands for, or None.

    Candidates: error-level hints of a cause kind and matches of the root's family (not benign, not
    demoted) in the REACH lines before it, themselves no terminators. From the root upwards, each
    candidate within GAP lines of the last extends the run (a traceback frame in between ends it:
    the frames say how the terminator was raised); the earliest of the run is the cause."""
    if terminator(root_text) is None:
        return None
    lo = root_line - REACH
    cands: dict[int, tuple[str, str]] = {}
    for kind, n, text in hints:
        if kind in CAUSE_KINDS and lo <= n < root_line and n not in cands and line_level(text) is None:
            cands[n] = (text, f"evidence.{kind}")
    for m in matches:
        if (family is not None and m.signature.family == family and lo <= m.line < root_line
                and not m.demoted and m.signature.role != "benign"):
            cands[m.line] = (m.text, m.signature.id)
    # a traceback between a line and the terminator is how the terminator was raised, not its cause
    frames = {n for kind, n, _ in hints if kind in ("frame", "traceback") and lo <= n < root_line}
    best, last = None, root_line
    for n in sorted(cands, reverse=True):
        if last - n > GAP or any(n < f < last for f in frames) or n in frames or n - 1 in frames:
            break
        if terminator(cands[n][0]) is not None:
            continue
        best, last = n, n
    return (best, *cands[best]) if best is not None else None


AFTER = 12   # the exception line a traceback's source line raised stands at most this far below it
_raise: object | None = None


def _is_raise(text: str) -> bool:
    global _raise
    if _raise is None:
        import re2

        _raise = re2.compile(r"^\s*raise\s+[\w.]+")
    return bool(_raise.search(text))


def exception_after(root_line: int, root_text: str, hints):
    """(line, text, id) of the exception a traceback's source line raised, or None.

    A root on the source line under a frame (`    raise OutOfResources(...)`: the pattern knows the
    class name) is where the exception was raised, not its message: the first exception line below
    it, within AFTER lines, is the root line."""
    frames = {n for kind, n, _ in hints if kind == "frame"}
    raised = {n for kind, n, _ in hints if kind == "exception"}
    if root_line in raised or not (root_line - 1 in frames or _is_raise(root_text)):
        return None              # the root is the exception line itself, or no traceback's source line
    for kind, n, text in sorted(hints, key=lambda h: h[1]):
        if kind == "exception" and root_line < n <= root_line + AFTER:
            return n, text, "evidence.exception"
    return None


_unclaimed: list | None = None


def unclaimed(text: str) -> str | None:
    """The id of the [[unclaimed]] row of rootline.toml this exception line is (one a traceback frame
    cannot claim for its family: an import failure, a binding called with the wrong arguments), or None."""
    global _unclaimed
    if _unclaimed is None:
        import re2

        rows = tomllib.loads(TABLE.read_text(encoding="utf-8")).get("unclaimed", [])
        _unclaimed = [(r["id"], re2.compile(r["pattern"])) for r in rows]
    msg = strip_prefix(text)
    for uid, rx in _unclaimed:
        if rx.search(msg) or rx.search(text):
            return uid
    return None


# -- the root line moved by the log's own text around it (rootline.toml [[follower]], [[precursor]],
# [empty]; and twins) ---------------------------------------------------------------------------

TWIN_REACH = 100     # an earlier copy of the root's failure stands at most this many lines before it
TWIN_MIN = 2         # a copy shares at least this many words that carry no digit
TWIN_EXTRA = 2       # and one copy may carry this many more leading words (an exception's class name)
EMPTY_RUN = 40       # a message logged line by line under one prefix is at most this long

_moves: dict | None = None


def _table() -> dict:
    """rootline.toml's followers, precursors and empty-line pattern, compiled once (re2)."""
    global _moves
    if _moves is None:
        import re2

        data = tomllib.loads(TABLE.read_text(encoding="utf-8"))
        _moves = {
            "follower": [(r["id"], re2.compile(r["root"]), re2.compile(r["target"]), int(r["reach"]),
                          bool(r.get("quoted", False)))
                         for r in data.get("follower", [])],
            "precursor": [(r["id"], re2.compile(r["root"]), re2.compile(r["cause"]), int(r["reach"]),
                           r.get("pick", "earliest") == "nearest")
                          for r in data.get("precursor", [])],
            "empty": re2.compile(data["empty"]["pattern"]),
        }
        # every follower's (precursor's) root in one alternation: the chosen line, which is almost
        # never one, costs one search instead of one per row (the rows run only when it holds)
        for kind in ("follower", "precursor"):
            _moves[kind + "_any"] = re2.compile("|".join(f"(?:{r['root']})" for r in data.get(kind, []))
                                                or r"[^\s\S]")
    return _moves


def _takes(rx, text: str) -> bool:
    msg = strip_prefix(text)
    return bool(rx.search(msg) or (msg != text and rx.search(text)))


QUOTED_MIN = 12       # characters of a quoted message a follower's target must repeat (`quoted = true`)


def _quoted(text: str) -> str:
    """The message a source line quotes: the text inside its first pair of quotes, cut at a format
    placeholder ({, %) or an escape; '' when there is none or it is shorter than QUOTED_MIN."""
    for q in ('"', "'"):
        i = text.find(q)
        if i < 0:
            continue
        j = text.find(q, i + 1)
        body = text[i + 1: j if j > 0 else len(text)]
        for stop in ("{", "%", "\\"):
            body = body.split(stop, 1)[0]
        body = body.strip()
        if len(body) >= QUOTED_MIN:
            return body
    return ""


def is_empty(text: str) -> bool:
    """The line holds nothing after its prefix (rootline.toml [empty])."""
    return bool(_table()["empty"].search(strip_prefix(text)))


def _head(text: str) -> tuple:
    """The prefix a line was logged under, digits ignored (a timestamp ticks on within one message)."""
    msg = strip_prefix(text)
    head = text[: len(text) - len(msg)] if text.endswith(msg) else ""
    return tuple("#" if any(map(str.isdigit, w)) else w for w in head.split())


def _words(text: str) -> tuple:
    """The message's words, a word carrying a digit (a rank, a line number, a layer's index) masked."""
    return tuple("#" if any(map(str.isdigit, w)) else w for w in strip_prefix(text).split())


def _twins(a: tuple, b: tuple) -> bool:
    """Two messages are one failure printed twice: the same words, digits aside, one of them perhaps
    with a few more leading words (`MemoryError: std::bad_alloc: ...` after `std::bad_alloc: ...`)."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    extra = long_[: len(long_) - len(short)]
    if sum(w != "#" for w in short) < TWIN_MIN or len(extra) > TWIN_EXTRA:
        return False
    # the more a copy says is an exception's class (`MemoryError:`), not a heading mark or other words
    return all(w.endswith(":") and w[:1].isalpha() for w in extra) and long_[len(extra):] == short


def _earliest_twin(lines: list[str], n: int) -> int:
    """The earliest line before line n (1-based) that is the same failure printed again (by another
    rank, another layer, another test of the same kind), following copies of copies back."""
    words = _words(lines[n - 1])
    quiet = line_level(lines[n - 1]) is not None
    # twins end alike (the shorter is the longer's tail), so both hold the message's last word that
    # carries no digit: a substring test that skips most lines before they are split into words
    anchor = next((w for w in reversed(words) if w != "#"), None)
    if anchor is None:
        return n
    best = n
    while True:
        found = None
        lo = max(1, best - TWIN_REACH)
        if anchor not in "\n".join(lines[lo - 1: best - 1]):
            return best          # no line of the reach holds the anchor (a word: no newline in it)
        for k in range(lo, best):
            text = lines[k - 1]
            # a copy is printed by the program: not a warning before an error, nor a heading (`# ...`,
            # the title pasted above its log)
            if (len(text) >= 20 and anchor in text and (quiet or line_level(text) is None)
                    and not text.lstrip().startswith("# ") and _twins(_words(text), words)):
                found = k
                break
        if found is None:
            return best
        best = found


def refine(lines: list[str] | None, line: int, text: str):
    """(line, text, id) of the line the root should be, reading the log's own text around the chosen
    one, or None when it stays: an empty line's message head, the message a terminator announces
    (a follower), the fault that explains it (a precursor), then the earliest copy of it (a twin)."""
    if not lines or not 0 < line <= len(lines) or lines[line - 1][:100].rstrip() != text[:100].rstrip():
        return None                  # not this log's text (a big log's kept lines, a joined line)
    t = _table()
    n, rule = line, None
    if is_empty(text):
        head, k = _head(text), n
        while k > 1 and n - k < EMPTY_RUN and _head(lines[k - 2]) == head and head:
            k -= 1
        while k < n and is_empty(lines[k - 1]):
            k += 1
        if k < n:
            n, rule = k, "rootline.empty"
    for fid, root_rx, target_rx, reach, quoted in (t["follower"] if _takes(t["follower_any"], lines[n - 1]) else ()):
        if _takes(root_rx, lines[n - 1]):
            # `quoted`: the target must repeat the message the root line quotes (a source echo's string)
            said = _quoted(lines[n - 1]) if quoted else ""
            if quoted and not said:
                continue
            k = next((k for k in range(n + 1, min(len(lines), n + reach) + 1)
                      if _takes(target_rx, lines[k - 1]) and said in lines[k - 1]), None)
            if k is not None:
                n, rule = k, f"rootline.{fid}"
                break
    for pid, root_rx, cause_rx, reach, nearest in (t["precursor"] if _takes(t["precursor_any"], lines[n - 1]) else ()):
        if _takes(root_rx, lines[n - 1]):
            span = range(max(1, n - reach), n)
            k = next((k for k in (reversed(span) if nearest else span) if _takes(cause_rx, lines[k - 1])), None)
            if k is not None:
                n, rule = k, f"rootline.{pid}"
                break
    k = _earliest_twin(lines, n)
    if k != n:
        n, rule = k, "rootline.twin"
    return (n, lines[n - 1], rule) if rule else None
