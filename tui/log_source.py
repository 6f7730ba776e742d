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
MAX_LINE_SHOWN = 4000     # bytes of one line shown; the rest is summarised


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
        self.starts, self.ends = _index(self.data)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def longest(self) -> int:
        return int((self.ends - self.starts).max()) if len(self.starts) else 0

    def line(self, i: int) -> str:
        """Line i (0-based) as text, at most MAX_LINE_SHOWN bytes of it, without its line ending."""
        s, e = int(self.starts[i]), int(self.ends[i])
        cut = e - s > MAX_LINE_SHOWN
        raw = self.data[s:s + MAX_LINE_SHOWN] if cut else self.data[s:e]
        text = raw.decode("utf-8", "replace")
        if text.endswith("\r"):
            text = text[:-1]
        if cut:
            text += f" … [{e - s - MAX_LINE_SHOWN:,} more bytes]"
        return text

    def line_of(self, offset: int) -> int:
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
