"""Hard-wrapped lines: which adjacent lines of a log are worth joining and matching again.

Terminals and issue pastes cut long lines mid-word ("...ProcessGroupNCCL'" / "s watchdog got stuck").
Joining every pair of lines and rescanning costs a buffer 3.6 times the log and Python per line; a
failure message cut in two still has an error-looking word in one of its halves, so only the pairs
that touch such a line are joined. One hyperscan scan (re2 where hyperscan has no wheel) finds those
lines: linear time, no Python `re` on log text.
"""
from __future__ import annotations

# Words of failure messages, matched case-insensitively anywhere in a line. A superset is cheap (a
# few more pairs joined); a word missing here loses a rescue, so the list leans wide. Each half of
# a cut message is tested, so a word cut by the wrap is usually whole in the other half's context.
ERROR_WORDS: tuple[str, ...] = (
    r"err", r"exception", r"fail", r"\bfault", r"segfault", r"fatal", r"abort", r"illegal", r"invalid",
    r"cannot", r"can't", r"unable", r"could not", r"not found", r"no such", r"denied", r"out of",
    r"exceed", r"too (?:many|much|large|small|old)", r"insufficient", r"unsupported", r"not supported",
    r"mismatch", r"incompatible", r"expected", r"assert", r"timed? ?out", r"watchdog", r"\bhang",
    r"\bhung\b", r"stuck", r"deadlock", r"killed", r"terminat", r"panic", r"traceback", r"segmentation",
    r"core dump", r"unspecified", r"\bnan\b", r"kernel image", r"misaligned", r"overflow", r"allocat",
    r"fallen off", r"\boom\b", r"\bxid\b", r"\becc\b", r"\bsig[a-z]{3,4}\b",
)

MIN_FIRST = 20      # a first half shorter than this is not a cut message (as before)

_scanner = None


def _error_lines_scanner():
    """bytes -> sorted offsets of the ends of error-word matches (any order of words)."""
    global _scanner
    if _scanner is not None:
        return _scanner
    try:
        import hyperscan
    except ImportError:
        hyperscan = None
    if hyperscan is not None:
        from signatures.matcher import _cached_db

        flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_MULTILINE
        exprs = [w.encode() for w in ERROR_WORDS]

        def build():
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs),
                       flags=[flags] * len(exprs))
            return db

        db = _cached_db([b"wrapped-error-words", repr(flags).encode()] + exprs, build)

        def scan(buf: bytes) -> list[int]:
            ends: list[int] = []
            last = [-1]

            def on_match(_id, _from, to, _flags, _ctx):
                # one offset per line is enough: skip to the end of this line
                if to > last[0]:
                    ends.append(to)
                    nl = buf.find(b"\n", to)
                    last[0] = len(buf) if nl < 0 else nl
                return False

            db.scan(buf, match_event_handler=on_match)
            return ends
    else:
        import re2

        rx = re2.compile(b"(?i)(?:" + b"|".join(w.encode() for w in ERROR_WORDS) + b")")

        def scan(buf: bytes) -> list[int]:
            ends, pos = [], 0
            while (m := rx.search(buf, pos)) is not None:
                ends.append(m.end())
                nl = buf.find(b"\n", m.end())
                if nl < 0:
                    break
                pos = nl + 1
            return ends
    _scanner = scan
    return scan


def error_lines(buf: bytes) -> list[int]:
    """0-based indexes of the lines of `buf` that hold an error word, in order."""
    out: list[int] = []
    n, pos = 0, 0
    for end in _error_lines_scanner()(buf):
        at = end - 1 if end > 0 else 0
        n += buf.count(b"\n", pos, at)
        pos = at
        if not out or out[-1] != n:
            out.append(n)
    return out


def candidate_pairs(lines: list[bytes], hot: list[int]) -> list[int]:
    """Indexes i of the pairs (line i, line i+1) to join: those where either line is hot."""
    last = len(lines) - 1
    pairs: set[int] = set()
    for i in hot:
        if i - 1 >= 0:
            pairs.add(i - 1)
        if i < last:
            pairs.add(i)
    return sorted(pairs)
