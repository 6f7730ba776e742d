"""Opening a log: plain bytes, gzip (known by its magic bytes, not its name), UTF-16 with a BOM.

- gzip is decompressed in bounded steps (a 1 KB bomb cannot become one 1 GB read); concatenated
  members are read on; a truncated file gives every byte it could decode, then says `truncated`.
- UTF-16 (a BOM) is re-encoded as UTF-8, newline for newline, so it is matched like any log
  instead of being called binary for its NUL bytes.
- Opening never waits: O_NONBLOCK (a FIFO without a writer), then fstat says what was opened; a
  FIFO is read like stdin, a device or socket is refused.
"""
from __future__ import annotations

import codecs
import errno
import os
import stat
import zlib

GZIP_MAGIC = b"\x1f\x8b"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
STEP = 1 << 20              # compressed bytes read, and decompressed bytes produced, per step


def is_gzip(head: bytes) -> bool:
    return head[:2] == GZIP_MAGIC


def is_utf16(head: bytes) -> bool:
    return head[:2] in UTF16_BOMS and head[:4] != b"\xff\xfe\x00\x00"      # not UTF-32


def needs_decoding(head: bytes) -> bool:
    """True when the bytes on disk are not the log's text as is (gzip, UTF-16)."""
    return is_gzip(head) or is_utf16(head)


class GzipStream:
    """Decompressed bytes of a gzip stream; `truncated` is set when it ended inside a member."""

    def __init__(self, raw):
        self._raw = raw
        self._d = zlib.decompressobj(31)
        self._in = b""              # compressed input not yet given to the decompressor
        self._out = b""
        self._started = False       # the current member has consumed input
        self._eof = False
        self.truncated = False

    def _fill(self, want: int) -> None:
        while len(self._out) < want and not self._eof:
            if not self._in:
                self._in = self._raw.read(STEP)
                if not self._in:
                    self._eof = True
                    self.truncated = self._started and not self._d.eof
                    return
            if self._d.eof:                          # a member ended: another may follow
                if not is_gzip(self._in):
                    self._eof = True                 # trailing padding or garbage, as gzip(1) ignores it
                    return
                self._d, self._started = zlib.decompressobj(31), False
            data, self._in = self._in, b""
            self._started = True
            self._out += self._d.decompress(data, STEP)    # bounded output per step
            self._in = self._d.unconsumed_tail or self._d.unused_data

    def peek(self, n: int) -> bytes:
        self._fill(n)
        return self._out[:n]

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            chunks = []
            while True:
                block = self.read(STEP * 8)
                if not block:
                    return b"".join(chunks)
                chunks.append(block)
        self._fill(n)
        out, self._out = self._out[:n], self._out[n:]
        return out

    def close(self) -> None:
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Utf16Stream:
    """UTF-16 text (BOM first) as UTF-8 bytes; invalid code units become U+FFFD."""

    def __init__(self, raw):
        self._raw = raw
        self._dec = codecs.getincrementaldecoder("utf-16")(errors="replace")

    @property
    def truncated(self) -> bool:
        return getattr(self._raw, "truncated", False)

    def read(self, n: int = -1) -> bytes:
        while True:
            data = self._raw.read(n)
            text = self._dec.decode(data, final=not data)
            if text or not data:
                return text.encode("utf-8")

    def close(self) -> None:
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_log(path):
    """A binary stream of the log's text: os-level FileIO for a plain regular file (so callers can
    fstat, seek and re-read it), else a stream object with read(n) (gzip, UTF-16, a FIFO)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISFIFO(mode):            # a pipe named as an argument (<(cmd)): read like stdin
            os.set_blocking(fd, True)
            return _decoded(os.fdopen(fd, "rb"), b"")
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "a directory, not a log file")
            raise OSError(errno.EINVAL, "not a regular file (a device or socket): not a log file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    f = os.fdopen(fd, "rb", buffering=0)    # raw reads: no second copy through a buffer
    head = f.read(4)
    f.seek(0)
    return _decoded(f, head) if needs_decoding(head) else f


def _decoded(f, head: bytes):
    if not head and hasattr(f, "peek"):
        head = f.peek(4)[:4]
    if is_gzip(head):
        g = GzipStream(f)
        return Utf16Stream(g) if is_utf16(g.peek(4)) else g
    if is_utf16(head):
        return Utf16Stream(f)
    return f
