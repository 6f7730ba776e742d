"""Hard-wrapped lines: which adjacent lines of a log are worth joining and matching again.

Terminals and issue pastes cut long lines mid-word ("...ProcessGroupNCCL'" / "s watchdog got stuck").
Joining every pair of lines and rescanning costs a buffer 3.6 times the log and Python per line; a
failure message cut in two still has an error-looking word in one of its halves, so only the pairs
that touch such a line are joined. One hyperscan scan (re2 where hyperscan has no wheel) finds those
lines: linear time, no Python `re` on log text.
"""
from __future__ import annotations

from signatures.normalise import _prefix_end, strip_prefix

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
    """bytes -> the end offsets (the newline, or the end of the data) of the lines holding an error
    word, in order, one per line."""
    global _scanner
    if _scanner is None:
        _scanner = line_scanner("wrapped-error-lines", b"(?:" + b"|".join(w.encode() for w in ERROR_WORDS) + b")")
    return _scanner


def line_scanner(name: str, words: bytes):
    """bytes -> the end offsets of the lines holding a match of `words` (a caseless alternation), in
    order, one per line: one hyperscan expression that runs to the line's end (one callback a line
    however many words it holds; its database cached on disk as `name`), or re2 without hyperscan."""
    try:
        import hyperscan
    except ImportError:
        hyperscan = None
    if hyperscan is not None:
        from signatures import cache

        flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_MULTILINE
        expr = words + rb"[^\n]*$"

        def build():
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(expressions=[expr], ids=[0], elements=1, flags=[flags])
            return db

        db = cache.cached_hyperscan(name, [repr(flags).encode(), expr], build)

        def scan(buf: bytes) -> list[int]:
            ends: list[int] = []
            db.scan(buf, match_event_handler=lambda _i, _f, to, _fl, _c: ends.append(to))
            return ends
        return scan
    import re2

    rx = re2.compile(b"(?i)" + words)

    def scan(buf: bytes) -> list[int]:
        ends, pos = [], 0
        while (m := rx.search(buf, pos)) is not None:
            nl = buf.find(b"\n", m.end())
            ends.append(len(buf) if nl < 0 else nl)
            if nl < 0:
                break
            pos = nl + 1
        return ends
    return scan


def error_lines(buf: bytes) -> list[tuple[int, int, int]]:
    """(0-based index, start, end) of the lines of `buf` that hold an error word, in order."""
    out: list[tuple[int, int, int]] = []
    n, pos, last = 0, 0, -1
    for le in _error_lines_scanner()(buf):
        if le <= last:
            continue
        last = le
        ls = buf.rfind(b"\n", 0, le) + 1
        n += buf.count(b"\n", pos, ls)
        pos = ls
        out.append((n, ls, le))
    return out


def candidate_pairs(buf: bytes, hot: list[tuple[int, int, int]]) -> list[tuple[int, bytes, bytes]]:
    """(i, line i, line i+1) for the pairs of adjacent lines where either line is hot, in order;
    no split of the whole log (a 4 MB log is a hundred thousand line objects)."""
    spans: dict[int, tuple[int, int]] = {}
    for i, ls, le in hot:
        spans[i] = (ls, le)
    size = len(buf)
    for i, ls, le in hot:            # neighbours of hot lines
        if i - 1 not in spans and ls > 0:
            ps = buf.rfind(b"\n", 0, ls - 1) + 1
            spans[i - 1] = (ps, ls - 1)
        if i + 1 not in spans and le < size:
            ne = buf.find(b"\n", le + 1)
            spans[i + 1] = (le + 1, size if ne < 0 else ne)
    pairs = set()
    for i, _, _ in hot:
        if i - 1 in spans:
            pairs.add(i - 1)
        if i + 1 in spans:
            pairs.add(i)
    out = []
    for i in sorted(pairs):
        a, b = spans[i], spans[i + 1]
        out.append((i, buf[a[0]:a[1]], buf[b[0]:b[1]]))
    return out


def _hot_spans(buf: bytes) -> dict[int, tuple[int, int, int, int]]:
    """offset of line i -> (start, end of line i, start, end of line i+1), for the pairs of adjacent
    lines where either line holds an error word (unordered)."""
    size, last = len(buf), -1
    rfind, find = buf.rfind, buf.find
    spans: dict[int, tuple[int, int, int, int]] = {}
    for le in _error_lines_scanner()(buf):
        if le <= last:
            continue
        last = le
        ls = rfind(b"\n", 0, le) + 1
        if ls > 0 and (ps := rfind(b"\n", 0, ls - 1) + 1) not in spans:
            spans[ps] = (ps, ls - 1, ls, le)              # the line before and this one
        if le < size and ls not in spans:
            ne = find(b"\n", le + 1)
            spans[ls] = (ls, le, le + 1, size if ne < 0 else ne)      # this line and the next
    return spans


def hot_pairs(buf: bytes) -> list[tuple[int, bytes, bytes]]:
    """(offset of line i, line i, line i+1) for the pairs of adjacent lines where either line holds an
    error word, in order: the pairs candidate_pairs(buf, error_lines(buf)) gives, keyed by where the
    first line starts instead of its index, so no line is counted (`buf.count(b"\n", 0, offset)` is
    its index, for the few pairs that matter)."""
    spans = _hot_spans(buf)
    return [(at, buf[a0:a1], buf[b0:b1]) for at, (a0, a1, b0, b1) in sorted(spans.items())]


def joined_pairs(buf: bytes) -> tuple[list[int], list[bytes]]:
    """(offsets, texts) of what the rescue scans: for each hot pair (hot_pairs, in order) whose first
    line without its \r and trailing blanks is MIN_FIRST long and whose second_half is not empty,
    the two lines joined without and with a space, each with the offset of the first line. One loop
    over the spans, second_half inlined (the rescue joins ~30,000 pairs per 2,000 logs)."""
    spans = _hot_spans(buf)
    ats: list[int] = []
    out: list[bytes] = []
    for at in sorted(spans):
        a0, a1, b0, b1 = spans[at]
        a = buf[a0:a1].rstrip(b"\r").rstrip()
        if len(a) < MIN_FIRST:
            continue
        line = buf[b0:b1].rstrip(b"\r")
        if line.isascii():                  # second_half, inlined
            end = _prefix_end(line)
            b = (line[end:] if end > 0 else line).strip(_ASCII_SPACE)
        else:
            b = strip_prefix(line.decode("utf-8", "replace")).strip().encode()
        if not b:
            continue
        ats += (at, at)
        out += (a + b, a + b" " + b)
    return ats, out


# What str.strip() removes from ASCII text (str.isspace() holds for \x1c-\x1f, bytes.strip() skips them)
_ASCII_SPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def second_half(line: bytes) -> bytes:
    """The second line of a pair as it is joined: without its rank/timestamp/logger prefix and
    surrounding blanks, as `strip_prefix(line.decode("utf-8", "replace")).strip().encode()` gives it;
    an ASCII line (almost all) without the decode and the re-encode."""
    if not line.isascii():
        return strip_prefix(line.decode("utf-8", "replace")).strip().encode()
    end = _prefix_end(line)
    return (line[end:] if end > 0 else line).strip(_ASCII_SPACE)
