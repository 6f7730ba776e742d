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
