"""A log file opened at once: newline offsets indexed with numpy, lines read on demand.

The whole file is never decoded: `open_log` maps it (a gzip or UTF-16 log is decoded into memory once), finds
every newline in fixed-size chunks and keeps the line starts in one int64 array. `line(i)` slices
the bytes of one line; search runs over the bytes.
"""
from __future__ import annotations

import mmap
import os
import re

import numpy as np

from signatures import reading

CHUNK = 32 << 20
SEGMENT = 4000            # a longer line is shown as several rows of this many bytes (a 200 MB one-line
                          # log is 50,000 rows, and the failure 209 MB in is on one of them)
MAX_LINE_SHOWN = SEGMENT


class LogSource:
    def __init__(self, path: str):
        self.path = path
        self._file = None
        self.data: bytes | mmap.mmap = b""
        with open(path, "rb") as fh:
            head = fh.read(4)
        if reading.needs_decoding(head):    # gzip (by its magic, as the matcher decides) or UTF-16
            with reading.open_log(path) as fh:
                self.data = fh.read()
        else:
            self._file = open(path, "rb")
            size = os.fstat(self._file.fileno()).st_size
            if size:
                self.data = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        self.binary = b"\x00" in bytes(self.data[:65536])
        self.line_starts, self.line_ends = _index(self.data)
        self.starts, self.ends, self.row_line = _rows(self.line_starts, self.line_ends)

    def __len__(self) -> int:
        """Display rows: one per line, more for a line longer than SEGMENT bytes."""
        return len(self.starts)

    @property
    def lines(self) -> int:
        return len(self.line_starts)

    @property
    def longest(self) -> int:
        return int((self.ends - self.starts).max()) if len(self.starts) else 0

    def line(self, i: int) -> str:
        """Display row i (0-based) as text, without its line ending. A binary file's bytes are shown one
        character each (non-printable ones as ·), so they cannot break the layout."""
        s, e = int(self.starts[i]), int(self.ends[i])
        raw = bytes(self.data[s:e])
        if self.binary:
            return "".join(chr(b) if 32 <= b < 127 else "·" for b in raw)
        text = raw.decode("utf-8", "replace")
        if text.endswith("\r"):
            text = text[:-1]
        return text

    def is_continuation(self, i: int) -> bool:
        return i > 0 and self.row_line[i] == self.row_line[i - 1]

    def row_of_line(self, line: int, text: str = "") -> int:
        """The first display row of 0-based `line`; with `text`, the row of that line where it appears."""
        line = max(0, min(line, self.lines - 1))
        row = int(np.searchsorted(self.row_line, line, side="left"))
        if text and row + 1 < len(self) and self.row_line[row + 1] == line:
            needle = text.strip()[:60].encode("utf-8", "replace")
            at = self.data.find(needle, int(self.line_starts[line]), int(self.line_ends[line])) if needle else -1
            if at >= 0:
                return self.line_of(at)
        return row

    def line_of(self, offset: int) -> int:
        """The display row holding byte `offset`."""
        return int(np.searchsorted(self.starts, offset, side="right")) - 1

    def search(self, query: str, from_line: int, backward: bool = False) -> int | None:
        """The 0-based line of the next (or previous) case-insensitive match of `query`, wrapping around."""
        if not query or not len(self):
            return None
        pattern = re.compile(re.escape(query.encode("utf-8")), re.I)
        if not backward:
            pos = int(self.ends[from_line]) if from_line < len(self) else 0
            m = pattern.search(self.data, pos) or pattern.search(self.data, 0, pos)
            return self.line_of(m.start()) if m else None
        end = int(self.starts[from_line]) if 0 <= from_line < len(self) else len(self.data)
        last = None
        for m in pattern.finditer(self.data, 0, end):
            last = m
        if last is None:
            for m in pattern.finditer(self.data, end):
                last = m
        return self.line_of(last.start()) if last else None

    def close(self) -> None:
        if isinstance(self.data, mmap.mmap):
            self.data.close()
        if self._file:
            self._file.close()


def _rows(starts: np.ndarray, ends: np.ndarray):
    """Display rows: each line, cut into SEGMENT-byte rows where it is longer; and each row's line."""
    lengths = ends - starts
    long = np.flatnonzero(lengths > SEGMENT)
    if not len(long):
        return starts, ends, np.arange(len(starts), dtype=np.int64)
    rs, re_, rl, prev = [], [], [], 0
    for i in long:
        rs.append(starts[prev:i]); re_.append(ends[prev:i]); rl.append(np.arange(prev, i, dtype=np.int64))
        seg = np.arange(int(starts[i]), int(ends[i]), SEGMENT, dtype=np.int64)
        rs.append(seg); re_.append(np.minimum(seg + SEGMENT, int(ends[i]))); rl.append(np.full(len(seg), i, np.int64))
        prev = i + 1
    rs.append(starts[prev:]); re_.append(ends[prev:]); rl.append(np.arange(prev, len(starts), dtype=np.int64))
    return np.concatenate(rs), np.concatenate(re_), np.concatenate(rl)


def _index(data) -> tuple[np.ndarray, np.ndarray]:
    size = len(data)
    if not size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    view = np.frombuffer(data, dtype=np.uint8)
    parts = []
    for base in range(0, size, CHUNK):
        hits = np.flatnonzero(view[base:base + CHUNK] == 10)
        parts.append(hits + base if base else hits)
    newlines = np.concatenate(parts).astype(np.int64)
    del view
    ends = newlines
    if not len(newlines) or newlines[-1] != size - 1:
        ends = np.append(newlines, size)        # a last line with no newline
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = newlines[:len(ends) - 1] + 1
    return starts, ends
