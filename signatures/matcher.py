"""One pass per log, in linear time: a hyperscan (or re2.Set) gate over the whole text, then re2 on
the few lines it hit to pull out the named groups.

No Python `re` ever runs over log text with a signature pattern, so no input and no signature can
make matching backtrack. Logs are read in chunks that end at a newline, so memory stays bounded
whatever the file size.
"""
from __future__ import annotations

import collections
import gzip
import hashlib
import io
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from signatures.facts import normalise as normalise_fact
from signatures.model import Match, Signature
from signatures.normalise import line_level, normalise_chunk

CHUNK = 8 << 20          # bytes read at a time
MAX_LINE = 16 << 20      # a "line" longer than this is cut (a 100 MB line with no newline)
MAX_PER_PATTERN = 20     # evidence kept per pattern per chunk
MAX_TEXT = 2000          # characters of a line kept for display
TAIL_HINTS = 40          # generic error lines kept from the end of the log

# Generic failure evidence, for logs no signature explains (family `unknown`) and for `none`.
HINTS = {
    "traceback": r"Traceback \(most recent call last\)",
    "exception": r"(?:^|[\s:\]>])(?:[A-Za-z_][\w]*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception|Exit|Interrupt)(?:\[\w+\])?: ",
    "error": r"(?:^|[\s\]])(?:[Ee]rror|ERROR|FAILED|Failed)(?:\s*\[[\w-]+\])?\s*[:!]",
    "fatal": r"(?i)(?:\bfatal (?:python )?error\b|Segmentation fault|core dumped|\bAborted\b|terminate called after|\bSIG(?:SEGV|ABRT|BUS|KILL|ILL)\b)",
    "exit": r"(?i)(?:exit(?:ed)?(?: with)? (?:code|status)[ :=]*-?[1-9]\d*|returned non-zero exit status|exitcode\s*:\s*-?[1-9]|\bKilled\b)",
}


@dataclass
class ScanResult:
    matches: list[Match] = field(default_factory=list)
    hints: list[tuple[str, int, str]] = field(default_factory=list)   # (kind, line, text)
    lines: int = 0
    bytes: int = 0
    error: str | None = None


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "diagnose"


class _HyperscanGate:
    """All patterns in one hyperscan block database; each reported at most once per chunk."""

    def __init__(self, patterns: list[bytes]):
        import hyperscan

        self._hs = hyperscan
        key = hashlib.sha256(b"\0".join(patterns) + hyperscan.__version__.encode()).hexdigest()[:24]
        cached = _cache_dir() / f"hs-{key}.db"
        self.db = None
        try:
            self.db = hyperscan.loadb(cached.read_bytes(), hyperscan.HS_MODE_BLOCK)
        except Exception:
            self.db = None
        if self.db is None:
            flags = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
            self.db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            self.db.compile(expressions=patterns, ids=list(range(len(patterns))), elements=len(patterns),
                            flags=[flags] * len(patterns))
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                tmp = cached.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(hyperscan.dumpb(self.db))
                os.replace(tmp, cached)
            except OSError:
                pass
        try:
            self.db.scratch = hyperscan.Scratch(self.db)
        except Exception:
            pass

    def __call__(self, buf: bytes) -> list[int]:
        hits: list[int] = []
        self.db.scan(buf, match_event_handler=lambda i, f, t, fl, ctx: hits.append(i))
        return hits

    def __getstate__(self):
        return {"blob": self._hs.dumpb(self.db)}

    def __setstate__(self, state):
        import hyperscan

        self._hs = hyperscan
        self.db = hyperscan.loadb(state["blob"], hyperscan.HS_MODE_BLOCK)
        self.db.scratch = hyperscan.Scratch(self.db)


class _Re2Gate:
    """Fallback where hyperscan has no wheel: an re2.Set (raise max_mem, or a full DFA says 'no match')."""

    def __init__(self, patterns: list[bytes]):
        import re2

        opts = re2.Options()
        opts.max_mem = 1 << 30
        self.set = re2.Set.SearchSet(opts)
        for p in patterns:
            self.set.Add(b"(?m)" + p)
        self.set.Compile()

    def __call__(self, buf: bytes) -> list[int]:
        return list(self.set.Match(buf))


def _make_gate(patterns: list[bytes]):
    if os.environ.get("DIAGNOSE_GATE") != "re2":
        try:
            return _HyperscanGate(patterns)
        except ImportError:
            pass
    return _Re2Gate(patterns)


class Matcher:
    def __init__(self, signatures: list[Signature]):
        import re2

        self.signatures = signatures
        self.owners: list[tuple[str, Signature | None]] = []   # per pattern id: (hint kind, signature)
        raw: list[bytes] = []
        for sig in signatures:
            for p in sig.patterns:
                raw.append(p.encode())
                self.owners.append(("", sig))
        for kind, p in HINTS.items():
            raw.append(p.encode())
            self.owners.append((kind, None))
        self.regexes = [re2.compile(p) for p in raw]
        self.gate = _make_gate(raw)

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def open(path) -> io.BufferedIOBase:
        if str(path) == "-":
            return os.fdopen(os.dup(0), "rb")
        f = open(path, "rb", buffering=0)    # raw reads: no second copy through a buffer
        if f.read(2) == b"\x1f\x8b":
            f.seek(0)
            return gzip.GzipFile(fileobj=f)  # type: ignore[return-value]
        f.seek(0)
        return f

    @staticmethod
    def chunks(f):
        """Yield byte chunks that end at a newline (or are cut at MAX_LINE)."""
        carry = b""
        while True:
            block = f.read(CHUNK)
            if not block:
                if carry:
                    yield carry
                return
            buf = carry + block if carry else block
            if len(block) < CHUNK and buf.endswith(b"\n"):   # the usual small log: one read, no copy
                yield buf
                carry = b""
                continue
            cut = buf.rfind(b"\n")
            if cut < 0:
                if len(buf) >= MAX_LINE:
                    yield buf + b"\n"   # a runaway line: matched in pieces, counted as one line per piece
                    carry = b""
                else:
                    carry = buf
                continue
            yield buf[: cut + 1]
            carry = buf[cut + 1:]

    # -- matching -----------------------------------------------------------------------------
    def scan_file(self, path) -> ScanResult:
        result = ScanResult()
        try:
            with self.open(path) as f:
                self.scan_stream(f, result)
        except (EOFError, gzip.BadGzipFile, OSError, zlib.error) as e:
            what = "truncated or corrupt gzip" if isinstance(e, (EOFError, gzip.BadGzipFile, zlib.error)) \
                else type(e).__name__
            result.error = f"{what}: {e}; classified the first {result.lines} lines" if result.lines else f"{what}: {e}"
        return result

    def scan_bytes(self, data: bytes) -> ScanResult:
        result = ScanResult()
        self.scan_stream(io.BytesIO(data), result)
        return result

    def scan_stream(self, f, result: ScanResult) -> None:
        tail: collections.deque = collections.deque(maxlen=TAIL_HINTS)
        head: list = []
        first = True
        for chunk in self.chunks(f):
            if first:
                first = False
                if b"\0" in chunk[:8192]:
                    result.error = "binary file (NUL bytes in the first 8 KiB): not a text log"
                    return
            result.bytes += len(chunk)
            buf = normalise_chunk(chunk)
            for pid in set(self.gate(buf)):
                kind, sig = self.owners[pid]
                for line_no, text, m in self._lines(pid, buf, result.lines):
                    if sig is None:
                        (head if len(head) < TAIL_HINTS else tail).append((kind, line_no, text))
                        continue
                    facts = {}
                    for name, value in m.groupdict().items():
                        if value is not None:
                            name = name.decode() if isinstance(name, bytes) else name
                            facts[name] = normalise_fact(name, value.decode("utf-8", "replace"))
                    demoted = not sig.in_warnings and line_level(text) is not None
                    result.matches.append(Match(sig, line_no, text, facts, demoted))
            result.lines += buf.count(b"\n")
        seen = set()
        for h in head + list(tail):
            if h[1:] not in seen:
                seen.add(h[1:])
                result.hints.append(h)
        result.hints.sort(key=lambda h: h[1])

    def _lines(self, pid: int, buf: bytes, line_base: int):
        """Each line of `buf` on which pattern `pid` matches: (1-based line number, text, re2 match)."""
        regex = self.regexes[pid]
        hint = self.owners[pid][1] is None
        limit = 2000 if hint else MAX_PER_PATTERN
        found, pos = 0, 0
        walker = _LineWalker(buf, line_base)
        while found < limit:
            hit = walker.next_match(regex, pos)
            if hit is None:
                return
            found += 1
            pos = hit[3]
            yield hit[:3]
        if hint:   # keep the tail: the last traceback is the one that matters
            pos = max(pos, buf.rfind(b"\n", 0, max(0, len(buf) - (256 << 10))) + 1)
            while (hit := walker.next_match(regex, pos)) is not None:
                pos = hit[3]
                yield hit[:3]


class _LineWalker:
    """Finds matching lines in a buffer, counting newlines incrementally (each byte counted once)."""

    def __init__(self, buf: bytes, line_base: int):
        self.buf, self.counted_to, self.line_no = buf, 0, line_base

    def next_match(self, regex, pos: int):
        buf = self.buf
        while True:
            m = regex.search(buf, pos)
            if m is None:
                return None
            start = buf.rfind(b"\n", 0, m.start()) + 1
            end = buf.find(b"\n", start)
            end = len(buf) if end < 0 else end
            if m.start() == end and end < len(buf):   # the match began on a newline: take the next line
                start, end = end + 1, buf.find(b"\n", end + 1)
                end = len(buf) if end < 0 else end
            line, pos = buf[start:end], end + 1
            lm = None
            # A \r inside a line is a progress bar redrawing it (or a CRLF end): match each segment.
            for seg in (line.split(b"\r") if b"\r" in line else (line,)):
                lm = regex.search(seg)
                if lm is not None:
                    line = seg
                    break
            if lm is None:
                continue
            if start >= self.counted_to:
                self.line_no += buf.count(b"\n", self.counted_to, start)
            else:
                self.line_no -= buf.count(b"\n", start, self.counted_to)
            self.counted_to = start
            text = line[: MAX_TEXT * 2].decode("utf-8", "replace")[:MAX_TEXT].rstrip()
            return self.line_no + 1, text, lm, pos


_default: Matcher | None = None


def default_matcher(extra_dirs=()) -> Matcher:
    """The matcher over the shipped signatures (plus extra signature dirs), built once per process."""
    global _default
    if _default is None or extra_dirs:
        from signatures.loader import load_all

        m = Matcher(load_all(extra_dirs))
        if extra_dirs:
            return m
        _default = m
    return _default
