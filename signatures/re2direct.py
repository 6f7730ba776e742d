"""re2 searches called on the google-re2 extension directly, for the per-line calls of a batch.

google-re2's Python wrapper builds a generator and a match object for every search (about half the
cost of a short line's search); these functions call the compiled regexp's Match with the same
arguments the wrapper passes and return only what the caller uses. Where the extension's internals
differ (another google-re2), they fall back to the wrapper. Bytes only: str offsets need the
wrapper's UTF-8 mapping.
"""
from __future__ import annotations


def _internals(regex, anchored: bool):
    try:
        import re2

        raw = regex._regexp
        return raw.Match, (re2._Anchor.ANCHOR_START if anchored else re2._Anchor.UNANCHORED), raw
    except (AttributeError, ImportError):
        return None, None, None


def groups(regex):
    """bytes -> None, or the named groups ({name: bytes}, unset ones left out, the wrapper's order)
    of the first match of `regex`."""
    match, anchor, raw = _internals(regex, False)
    try:
        names = list(raw.NamedCapturingGroups()) if raw is not None else None
    except Exception:
        names = None
    if match is None or names is None:
        def slow(text: bytes):
            m = regex.search(text)
            return None if m is None else {k: v for k, v in m.groupdict().items() if v is not None}
        return slow
    null = (-1, -1)

    def search(text: bytes):
        spans = match(anchor, text, 0, len(text))
        if spans[0] == null:
            return None
        return {name: text[spans[i][0]:spans[i][1]] for name, i in names if spans[i] != null}
    return search


def end(regex, anchored: bool = False):
    """bytes -> the end of the first match of `regex` (`regex.match` when `anchored`, else
    `regex.search`), or -1 when there is none."""
    match, anchor, _ = _internals(regex, anchored)
    if match is None:
        find = regex.match if anchored else regex.search

        def slow(text: bytes) -> int:
            m = find(text)
            return -1 if m is None else m.end()
        return slow

    def fast(text: bytes) -> int:
        return match(anchor, text, 0, len(text))[0][1]
    return fast


def finditer_groups(regex):
    """str -> [(start, [(name, value, (start, end)), ...]), ...]: every match of `regex` (a str
    pattern) as `regex.finditer` gives them, each with its set named groups in the wrapper's
    `groupdict()` order and their spans (character offsets). The wrapper's own loop (the same
    positions, the same step past an empty match, the same byte-to-character mapping), without a
    match object and its group mapping built anew for every match and group."""
    match, anchor, raw = _internals(regex, False)
    try:
        import re2

        c = re2._re2
        to_chars, to_bytes = c.BytesToCharLen, c.CharLenToBytes
        names = [(n.decode() if isinstance(n, bytes) else n, i) for n, i in raw.NamedCapturingGroups()]
    except Exception:
        match = None

    if match is None:
        def slow(text: str) -> list:
            out = []
            index = regex.groupindex
            for m in regex.finditer(text):
                out.append((m.start(), [(name, value, m.span(index[name])) for name, value in m.groupdict().items()
                                        if value is not None]))
            return out
        return slow
    null = (-1, -1)

    def fast(text: str) -> list:
        data = text.encode("utf-8")
        out, pos, end = [], 0, len(data)
        ascii_ = len(data) == len(text)
        chars, last = {0: 0}, 0
        while True:
            spans = match(anchor, data, pos, end)
            if spans[0] == null:
                return out
            after = spans[0][1]           # bytes
            if not ascii_:                # byte offsets -> character offsets, one pass (the wrapper's way)
                offsets = sorted({o for span in spans for o in span if o >= 0})
                chars = {last: chars[last]}
                for off in offsets:
                    chars[off] = chars[last] + to_chars(data, last, off)
                    last = off
                spans = [span if span == null else (chars[span[0]], chars[span[1]]) for span in spans]
            out.append((spans[0][0], [(name, text[spans[i][0]:spans[i][1]], spans[i]) for name, i in names
                                      if spans[i] != null]))
            if pos == end:
                return out
            if pos == after:              # an empty match: one character on
                pos += 1 if ascii_ else to_bytes(data, pos, 1)
            else:
                pos = after
    return fast


def lines_holding(regex):
    """str -> the lines of the text (joined by "\\n", in order) that hold a match of `regex`, a regex
    whose matches never hold a newline (a literal alternation: a gate). Matched on the UTF-8 bytes,
    where a newline is one byte whatever the text, so a line is cut out at the same place."""
    match, anchor, _ = _internals(regex, False)
    null = (-1, -1)

    def holding(text: str) -> str:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:        # a lone surrogate: the wrapper's way, by characters
            data = None
        if match is None or data is None:
            out, pos = [], 0
            while (m := regex.search(text, pos)) is not None:
                start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.start())
                out.append(text[start:] if end < 0 else text[start:end])
                if end < 0:
                    break
                pos = end + 1
            return "\n".join(out)
        out, pos, n = [], 0, len(data)
        while pos <= n:
            at = match(anchor, data, pos, n)[0]
            if at == null:
                break
            start = data.rfind(b"\n", 0, at[0]) + 1
            end = data.find(b"\n", at[0])
            end = n if end < 0 else end
            out.append(data[start:end])
            pos = end + 1
        return b"\n".join(out).decode("utf-8")
    return holding


def first_groups(regex):
    """str -> the groups (str, None where unset) of the first match of `regex` (a str pattern), as
    `regex.search(text).groups()`, or None: on the bytes directly for ASCII text (byte and character
    offsets agree), through the wrapper otherwise."""
    match, anchor, raw = _internals(regex, False)
    null = (-1, -1)

    def slow(text: str):
        m = regex.search(text)
        return None if m is None else m.groups()

    if match is None:
        return slow

    def fast(text: str):
        if not text.isascii():
            return slow(text)
        spans = match(anchor, text.encode("ascii"), 0, len(text))
        if spans[0] == null:
            return None
        return tuple(None if s == null else text[s[0]:s[1]] for s in spans[1:])
    return fast
