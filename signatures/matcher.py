"""Matching in linear time, in three steps per chunk of log:

1. the gate: one hyperscan scan for every pattern's required literals (signatures/literals.py), or
   the whole pattern where its literals are weak; it says which patterns may match (re2.Set where
   hyperscan has no wheel);
2. the second phase: for those patterns only, a hyperscan scan that finds every line they match
   (one joint database for a big chunk; databases cached on disk);
3. re2 on each of those lines, to confirm and pull out the named groups.

No Python `re` ever runs over log text with a signature pattern, so no input and no signature can
make matching backtrack. Big logs are read in 8 MB chunks that end at a newline, so memory stays
bounded whatever the file size; small logs are scanned together in 64 KiB groups (scan_many).
"""
from __future__ import annotations

import bisect
import collections
import gzip
import io
import os
import stat
import zlib
from dataclasses import dataclass, field

from signatures import cache, re2direct, reading
from signatures.facts import normalise as normalise_fact
from signatures.literals import BOUNDARY, required_literals, weak_literals
from signatures.literals import text as literal_text
from signatures.evidence import hint_patterns
from signatures.model import Match, Signature
from signatures.normalise import line_level, normalise_chunk

CHUNK = 8 << 20          # bytes read at a time
MAX_LINE = 16 << 20      # a "line" longer than this is cut (a 100 MB line with no newline)
MAX_PER_PATTERN = 20     # evidence kept per pattern per chunk
MAX_TEXT = 2000          # characters of a line kept for display
MAX_FACT = 4000          # bytes of a named group kept (a fact is a size, a name, a shape: never this long)
FILE_KEEP = 100          # matches of one signature pattern kept from the start of a big log, and from its end
SMALL_FILE = 1 << 20     # files smaller than this are scanned together (scan_many)
TOGETHER_MIN = 1 << 20   # a chunk this big locates its gated patterns with the joint database
GROUP_BYTES = 64 << 10  # ... in groups this big: bigger groups wake more patterns' second phase
BINARY = "binary file (NUL bytes in the first 8 KiB): not a text log"
TAIL_HINTS = 40          # generic error lines kept from the end of the log
OK_HINTS = 5             # lines of normal progress kept (evidence for `none`)
# hint kinds kept on the side, the first OK_HINTS of each: they never crowd failure hints out of the
# head and tail (a flood of "request cancelled" lines at the end must not hide the failure before it)
SIDE_KINDS = ("ok", "consequence")

# Generic evidence (signatures/evidence.toml): lines that say a log failed, or ran on normally,
# without saying why; reported as hints for the engine's unknown / none decision.
HINTS: list[tuple[str, str]] = hint_patterns()


@dataclass
class ScanResult:
    matches: list[Match] = field(default_factory=list)
    hints: list[tuple[str, int, str]] = field(default_factory=list)   # (kind, line, text)
    lines: int | None = None   # counted only for streams that cannot be re-read (gz, stdin)
    bytes: int = 0
    error: str | None = None
    data: bytes | None = field(default=None, repr=False, compare=False)   # the file's bytes, kept by scan_many(keep=True)


def hs_literal(literal: str) -> bytes:
    """A literal as a hyperscan expression: metacharacters escaped, non-ASCII as \\xHH bytes, its
    word-boundary marks as \\b."""
    left, right = literal[:1] == BOUNDARY, literal[-1:] == BOUNDARY
    out = ["\\b"] if left else []
    for b in literal_text(literal).encode("utf-8"):
        ch = chr(b)
        if b >= 0x80 or not ch.isprintable():
            out.append(f"\\x{b:02x}")
        elif ch in "\\^$.|?*+()[]{}/ #":
            out.append("\\" + ch)
        else:
            out.append(ch)
    if right:
        out.append("\\b")
    return "".join(out).encode()


class _HyperscanGate:
    """Every pattern's required literals (or the pattern itself when it has none) in one hyperscan
    block database; each expression reported at most once per chunk."""

    def __init__(self, exprs: list[bytes], flags: list[int], owners: list[int]):
        import hyperscan

        self._hs = hyperscan
        self.owners = owners          # expression -> pattern id
        base = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY

        def build():
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs),
                       flags=[base | f for f in flags])
            return db

        self.db = cache.cached_hyperscan("gate", [repr(flags).encode(), str(base).encode()] + exprs, build)

    def __call__(self, buf: bytes) -> set[int]:
        hits: list[int] = []
        self.db.scan(buf, match_event_handler=lambda i, f, t, fl, ctx: hits.append(i))
        owners = self.owners
        return {owners[i] for i in hits}

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

    def __call__(self, buf: bytes) -> set[int]:
        return set(self.set.Match(buf))


def _make_gate(patterns: list[bytes], literal_only: frozenset[int] = frozenset()):
    """(gate, per-pattern main-literal expressions, or None where hyperscan is missing).

    The gate holds each pattern's best literal set only: adding the other required sets (short,
    often common) made every scan three times slower, more than the second phase they would save.
    """
    if os.environ.get("DIAGNOSE_GATE") != "re2":
        try:
            import hyperscan
        except ImportError:
            hyperscan = None
        if hyperscan is not None:
            def whole_compiles(p: bytes) -> bool:
                try:
                    hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(
                        expressions=[p], ids=[0], elements=1, flags=[hyperscan.HS_FLAG_SINGLEMATCH])
                    return True
                except hyperscan.error:
                    return False

            def literal_groups():
                groups: list[list[tuple[bytes, int]]] = []
                for pid, p in enumerate(patterns):
                    found = required_literals(p.decode())
                    # A weak literal (a common word, or short) would wake the second phase for most
                    # chunks; such a pattern goes into the gate whole, where hyperscan verifies it.
                    if found and pid not in literal_only and weak_literals(found[0]) and p.isascii() \
                            and whole_compiles(p):
                        found = None
                    if found:
                        flag = hyperscan.HS_FLAG_CASELESS if found[1] else 0
                        groups.append([(hs_literal(t), flag) for t in sorted(found[0])])
                    else:
                        groups.append([(p, 0)])
                return groups

            per_pattern = [[(e.encode("latin-1"), f) for e, f in group] for group in cache.cached_json(
                "literals", [repr(sorted(literal_only)).encode()] + patterns,
                lambda: [[(e.decode("latin-1"), f) for e, f in group] for group in literal_groups()])]
            exprs = [e for group in per_pattern for e, _ in group]
            flags = [f for group in per_pattern for _, f in group]
            owners = [pid for pid, group in enumerate(per_pattern) for _ in group]
            return _HyperscanGate(exprs, flags, owners), per_pattern
    return _Re2Gate(patterns), None


class _LazyRegexes:
    """re2 objects compiled on first use: most patterns never hit in a given run."""

    def __init__(self, raw: list[bytes], compile_):
        self._raw, self._compile, self._done = raw, compile_, {}

    def __getitem__(self, pid: int):
        r = self._done.get(pid)
        if r is None:
            r = self._done[pid] = self._compile(self._raw[pid])
        return r


def _anchor_positions(p: bytes) -> list[int]:
    """Offsets of the `^` and `$` outside a character class (line anchors, in multiline mode)."""
    out, in_class, escaped = [], False, False
    for i, ch in enumerate(p.decode("ascii", "replace")):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch in "^$":
            out.append(i)
    return out


def _anchored(p: bytes) -> bool:
    """A `^` or `$` outside a character class (a line anchor, in multiline mode)."""
    return bool(_anchor_positions(p))


def _flags_prefix(text: str) -> int:
    """The length of a leading inline-flags group such as `(?i)`, or 0."""
    end = text.find(")")
    return end + 1 if text.startswith("(?") and end > 2 and text[2:end].isalpha() else 0


def _matches_empty(p: bytes) -> bool:
    """Whether the pattern can match the empty string at the start of a line (probed with re2)."""
    import re2

    try:
        rx = re2.compile(b"(?m)" + p)
    except Exception:
        return True
    for probe in (b"", b"\n", b"a", b"A", b"0", b"_", b" ", b"-", b"[", b"\t"):
        m = rx.search(probe)
        if m is not None and m.start() == m.end() == 0:
            return True
    return False


def loosen(p: bytes) -> bytes:
    """An anchored pattern as an unanchored one that matches on every line the original matches
    (a superset: re2 confirms each candidate line with the original pattern).

    A leading `^` (the pattern's first token, or the first alternative of a group that opens it:
    `(?:^|\\s)`) becomes `\\n`, a trailing `$` (the last token, or the last alternative of a group
    that closes it: `(?:\\s|$)`) becomes `\\n`: the buffer it is scanned in starts and ends with a
    newline, so they match where the anchors did, and the match still ends on the same line. A leading
    `^\\s*` becomes `\\s` (a newline or a blank before the rest): `\\n\\s*File` beside `\\n\\s*device=`
    in one database lost a frame, as the anchored forms did. Any other anchor is dropped (removing
    an assertion only widens the match), and so are all of them in a pattern that can match empty."""
    text = p.decode("ascii")
    start = _flags_prefix(text)
    out = []
    if _matches_empty(p):      # an empty match at a line start would end on the \n before it: drop them all
        for i in reversed(_anchor_positions(p)):
            text = text[:i] + text[i + 1:]
        return text.encode("ascii")
    for i in _anchor_positions(p):
        ch = text[i]
        if ch == "^":
            head = text[start:i]
            at_start = head == "" or head in ("(", "(?:") or (head.startswith("(?P<") and head.endswith(">")
                                                                and "(" not in head[1:])
            if at_start and head == "" and text[i + 1:i + 4] == "\\s*":
                out.append((i, "\\s", 4))      # ^\s*X: X after a newline or a blank (see below)
            else:
                out.append((i, "\\n" if at_start and (head == "" or text[i + 1:i + 2] == "|") else "", 1))
        else:
            tail = text[i + 1:]
            at_end = tail == "" or (tail == ")" and text[i - 1:i] == "|")
            out.append((i, "\\n" if at_end else "", 1))
    for i, repl, n in reversed(out):
        text = text[:i] + repl + text[i + n:]
    return text.encode("ascii")


_LINE_SAFE_ESCAPES = frozenset("dwSbBt")    # escapes that never match a newline


def _tail_tokens(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of the tokens of a regex, flat: atom, class, open, close, alt, quant, other."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            j = i + 2
            if text[i + 1:i + 2] == "x":
                j = text.index("}", i) + 1 if text[i + 2:i + 3] == "{" else i + 4
            out.append(("atom", i, j))
        elif c == "[":
            j = i + 1 + (text[i + 1:i + 2] == "^")
            j += text[j:j + 1] == "]"
            while text[j] != "]":
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(("class", i, j))
        elif c == "(":
            j = i + 1
            if text[j:j + 1] == "?":
                k = j + 1
                if text[k:k + 2] == "P<":
                    j = text.index(">", k) + 1
                else:
                    while text[k] not in ":)":
                        k += 1
                    j = k + 1
                    if text[k] == ")":            # inline flags, (?i): no group
                        out.append(("other", i, j))
                        i = j
                        continue
            out.append(("open", i, j))
        elif c == ")":
            j = i + 1
            out.append(("close", i, j))
        elif c == "|":
            j = i + 1
            out.append(("alt", i, j))
        elif c in "*+?" or (c == "{" and text[i + 1:i + 2].isdigit()):
            j = i + 1 if c != "{" else text.index("}", i) + 1
            j += text[j:j + 1] in ("?", "+")
            out.append(("quant", i, j))
        else:
            j = i + 1
            out.append(("atom" if c not in "^$" else "other", i, j))
        i = j
    return out


def _never_newline(token: str, kind: str, dotall: bool) -> bool:
    """Whether an atom or a character class can never match a newline."""
    if kind == "atom":
        if token == ".":
            return not dotall
        if token.startswith("\\"):
            return token[1] in _LINE_SAFE_ESCAPES or (len(token) == 2 and not token[1].isalnum())
        return token not in "\n\r\v\f"
    body = token[1:-1]
    if body.startswith("^"):
        return False
    i = 0
    while i < len(body):
        if body[i] == "\\":
            if not (body[i + 1] in "dwS" or not body[i + 1].isalnum()) or body[i + 2:i + 3] == "-":
                return False
            i += 2
        elif body[i + 1:i + 2] == "-" and i + 2 < len(body):
            if body[i + 2] == "\\" or ord(body[i]) <= 0x0A <= ord(body[i + 2]):
                return False
            i += 3
        else:
            if body[i] in "\n\r\v\f":
                return False
            i += 1
    return True


def _inline_flags(text: str, at: int) -> str:
    """The flag letters of the `(?` group at `at` ((?i), (?is:...)); '' for (?P<name>, (?:."""
    k = at + 2
    while k < len(text) and text[k].isalpha():
        k += 1
    return text[at + 2:k] if text[k:k + 1] in (":", ")") else ""


def trim_tail(p: bytes) -> bytes:
    """A pattern whose last token is a repeat of an atom or class that never matches a newline, with
    that repeat cut to its least count (again while the new last token is one): `x: (?P<m>.{1,300})`
    -> `x: (?P<m>.)`, `rank (?P<r>\\d+)` -> `rank (?P<r>\\d)`. A line holds a match of one iff it
    holds a match of the other, and the match ends on the same line (the cut part stays on it), so
    the lines a database finds are the same; but hyperscan reports every end of a match, one per
    extra character of the repeat, and runs a bounded repeat's state machine over every byte: the
    trimmed form scans faster. Anything it cannot read, or a form that could match empty, stays."""
    if p.rstrip(b")")[-1:] not in (b"*", b"+", b"?", b"}"):
        return p                 # no repeat at the end (most patterns): nothing to read
    try:
        text = p.decode("ascii")
        dotall = any("s" in _inline_flags(text, m) for m in range(len(text)) if text.startswith("(?", m))
        changed = emptied = False
        while True:
            toks = _tail_tokens(text)
            k = len(toks) - 1
            while k >= 0 and toks[k][0] == "close":
                k -= 1
            if k < 1 or toks[k][0] != "quant" or toks[k - 1][0] not in ("atom", "class"):
                break
            kind, a0, a1 = toks[k - 1]
            atom, quant = text[a0:a1], text[toks[k][1]:toks[k][2]]
            if not _never_newline(atom, kind, dotall):
                break
            least = 0 if quant[0] in "*?" else 1 if quant[0] == "+" else int(quant[1:].split(",")[0].rstrip("}") or 0)
            cut = text[:a0] + (atom * least if least <= 3 else f"{atom}{{{least}}}") + text[toks[k][2]:]
            if cut == text:          # an exact count already (x{5}): nothing to cut
                break
            text, changed, emptied = cut, True, emptied or least == 0
        if not changed:
            return p
        out = text.encode("ascii")
        return p if emptied and _matches_empty(out) else out
    except (ValueError, IndexError, UnicodeDecodeError):
        return p


def _joint_db(raw: list[bytes]):
    """(one hyperscan database of every ASCII pattern it compiles, the exact ids in it, the loosened ids).

    Left out: non-ASCII patterns (bytes mode would split a non-ASCII class into bytes: they are gated
    and scanned alone). Patterns with a line anchor are in it loosened (see loosen()): hyperscan 0.9.1
    drops matches when anchored patterns share a database, `^\\s*File "..."` beside `^\\s*device='...'`
    lost a traceback frame it finds alone, and a second database compiled with start-of-match tracking
    (which did not lose it) cost 1.8 times the other 870 patterns together (tests/test_matcher_scale.py
    holds the joint and the single scans equal after confirmation)."""
    import hyperscan as hs

    flags = hs.HS_FLAG_MULTILINE | hs.HS_FLAG_ALLOWEMPTY

    def expressions():
        out = []
        for pid, p in enumerate(raw):
            if p.isascii():
                e = loosen(p) if _anchored(p) else p
                out.append((pid, trim_tail(e).decode("ascii"), e != p))    # trimmed: the same lines, faster
        return out

    rows = cache.cached_json("joint-exprs", raw, expressions)
    exprs = {pid: e.encode("ascii") for pid, e, _ in rows}
    loosened = frozenset(pid for pid, _, loose in rows if loose)

    def compiles(e: bytes) -> bool:
        try:
            hs.Database(mode=hs.HS_MODE_BLOCK).compile(expressions=[e], ids=[0], elements=1, flags=[flags])
            return True
        except hs.error:
            return False

    db, ids = _joint_of(exprs, flags, "joint", compiles)
    loosened = loosened & ids
    return db, ids - loosened, loosened


def _joint_of(exprs: dict[int, bytes], flags: int, kind: str, compiles):
    """(database, ids) of the expressions (pattern id -> expression): compiled together at once (the
    usual case: one compile, cached), or, when one of them is refused, of those that compile alone."""
    import hyperscan as hs

    def build(ids):
        def run():
            db = hs.Database(mode=hs.HS_MODE_BLOCK)
            db.compile(expressions=[exprs[i] for i in ids], ids=list(ids), elements=len(ids), flags=[flags] * len(ids))
            return db
        return run

    def key(ids):
        return [repr(flags).encode()] + [exprs[i] + b"\0%d" % i for i in ids]

    candidates = sorted(exprs)
    if not candidates:
        return None, frozenset()
    try:
        return cache.cached_hyperscan(kind, key(candidates), build(candidates)), frozenset(candidates)
    except hs.error:
        ids = cache.cached_json(kind + "-ids", key(candidates),
                                lambda: [i for i in candidates if compiles(exprs[i])])
        if not ids:
            return None, frozenset()
        return cache.cached_hyperscan(kind, key(ids), build(ids)), frozenset(ids)


class Matcher:
    def __init__(self, signatures: list[Signature]):
        import re2

        self.signatures = signatures
        self.by_id: dict[str, Signature] = {}      # the first signature of each id
        for sig in signatures:
            self.by_id.setdefault(sig.id, sig)
        self.owners: list[tuple[str, Signature | None]] = []   # per pattern id: (hint kind, signature)
        raw: list[bytes] = []
        for sig in signatures:
            for p in sig.patterns:
                raw.append(p.encode())
                self.owners.append(("", sig))
        for kind, p in HINTS:
            raw.append(p.encode())
            self.owners.append((kind, None))
        self.raw = raw
        self.regexes = _LazyRegexes(raw, re2.compile)   # compiled when a pattern first hits
        self._search = _LazyRegexes(raw, lambda p: re2direct.groups(re2.compile(p)))   # the confirmations
        # generic hints ("Error: ", "Traceback") are gated by their literals even when weak: they are
        # expected in any failing log, and whole they would slow every scan by a fifth
        hint_ids = frozenset(i for i, (kind, sig) in enumerate(self.owners) if sig is None)
        self.gate, self.gate_exprs = _make_gate(raw, hint_ids)
        self._singles: dict = {}
        self._hs = getattr(self.gate, "_hs", None)
        self._joint = self._rest_gate = None
        self.in_joint: frozenset[int] = frozenset()      # exact in the joint database
        self.loosened: frozenset[int] = frozenset()      # in it loosened: its lines are candidates only
        if self._hs is not None:
            self._joint, self.in_joint, self.loosened = _joint_db(raw)
            rest = [pid for pid in range(len(raw)) if pid not in self.in_joint and pid not in self.loosened]
            group = [(e, f, pid) for pid in rest for e, f in self.gate_exprs[pid]]
            self._rest_gate = _HyperscanGate([e for e, _, _ in group], [f for _, f, _ in group],
                                             [pid for _, _, pid in group]) if group else (lambda buf: set())

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def open(path) -> io.BufferedIOBase:
        if str(path) == "-":
            return os.fdopen(os.dup(0), "rb")
        return reading.open_log(path)    # plain, gzip, UTF-16; never blocks, refuses devices

    @staticmethod
    def chunks(f):
        """Yield byte chunks that end at a newline (or are cut at MAX_LINE)."""
        if isinstance(f, io.FileIO):   # the usual small log: one read of its known size, no copies
            try:
                size = os.fstat(f.fileno()).st_size
            except OSError:
                size = -1
            if 0 <= size < CHUNK:
                data = f.read(size + 1)
                if len(data) <= size and (not data or data.endswith(b"\n")):
                    if data:
                        yield data
                    return
                f.seek(0)
            if size >= 0:
                yield from Matcher._file_chunks(f)
                return
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

    @staticmethod
    def _file_chunks(f):
        """A seekable file's chunks: cut each block at its last newline and seek back to just after
        it, so a chunk is copied once (no carry-over concatenation). A block with no newline at all
        (a runaway line) is yielded as a piece of that line."""
        pos = f.tell()
        while True:
            block = f.read(CHUNK)
            if not block:
                return
            cut = block.rfind(b"\n")
            if len(block) < CHUNK or cut < 0 or cut == len(block) - 1:
                yield block
                pos += len(block)
                continue
            pos += cut + 1
            f.seek(pos)
            yield block[: cut + 1]

    # -- matching -----------------------------------------------------------------------------
    def scan_file(self, path) -> ScanResult:
        result = ScanResult()
        try:
            with self.open(path) as f:
                regular = str(path) != "-" and isinstance(f, io.FileIO)
                self.scan_stream(f, result, path if regular else None)
                if getattr(f, "truncated", False) and result.error is None:
                    result.error = (f"truncated gzip: the file ends inside compressed data; classified the "
                                    f"{result.bytes} bytes it held")
        except (EOFError, gzip.BadGzipFile, OSError, zlib.error) as e:
            what = "truncated or corrupt gzip" if isinstance(e, (EOFError, gzip.BadGzipFile, zlib.error)) \
                else type(e).__name__
            result.error = (f"{what}: {e}; classified the first {result.bytes} bytes" if result.bytes
                            else f"{what}: {e}")
        return result

    def scan_bytes(self, data: bytes, wanted=None, failures_only: bool = False) -> ScanResult:
        """scan_file for bytes; with `wanted` (pattern id -> bool), only the patterns it accepts; with
        `failures_only`, only failure signatures' patterns are gated (`wanted` may accept no other)."""
        result = ScanResult()
        self.scan_stream(io.BytesIO(data), result, wanted=wanted,
                         gate=self._failure_gate() if failures_only else None)
        return result

    def _failure_gate(self):
        """The gate of the failure signatures' patterns alone (no generic hint, no benign signature):
        what a rescue of wrapped lines may look for. Their literals, not the hints' common words
        ("Error", "File"), are scanned: the same patterns come out of it as out of the whole gate."""
        gate = getattr(self, "_failures", None)
        if gate is None:
            if self.gate_exprs is None:          # no hyperscan: the re2 gate of everything
                gate = self.gate
            else:
                group = [(e, f, pid) for pid, (_, sig) in enumerate(self.owners)
                         if sig is not None and sig.role != "benign" for e, f in self.gate_exprs[pid]]
                gate = _HyperscanGate([e for e, _, _ in group], [f for _, f, _ in group],
                                      [pid for _, _, pid in group]) if group else (lambda buf: set())
            self._failures = gate
        return gate

    def scan_stream(self, f, result: ScanResult, reread_path=None, wanted=None, gate=None) -> None:
        """Gate each chunk, then locate and read the hit lines.

        Line numbers need the newline count of every earlier chunk. Counting costs as much as the
        scan itself, so for a regular file it is deferred: only when a hit lies past the first chunk
        is the file read again up to that chunk. Streams that cannot be re-read are counted as they go.
        """
        # Memory stays bounded whatever the size and the line lengths: an entry holds capped text and
        # capped groups, never the line; generic hints keep the first and last TAIL_HINTS and the
        # first OK_HINTS `ok` lines (all that _collect uses); a signature pattern keeps its first and
        # last FILE_KEEP matches.
        hint_head: list = []
        hint_tail: collections.deque = collections.deque(maxlen=TAIL_HINTS)
        ok_head: list = []
        sig_head: dict[int, list] = collections.defaultdict(list)
        sig_tail: dict[int, collections.deque] = {}
        order = 0           # arrival order, so the kept matches come back in the order they were found
        counts: list[int] = []
        for idx, chunk in enumerate(self.chunks(f)):
            if idx == 0 and b"\0" in chunk[:8192]:
                result.error = BINARY
                return
            result.bytes += len(chunk)
            buf = normalise_chunk(chunk)
            found: list[tuple[int, int, int]] = []
            pids = (gate or self.gate)(buf)
            if wanted is not None:
                pids = {p for p in pids if wanted(p)}
            if len(pids) > 1 and len(buf) >= TOGETHER_MIN:    # a big chunk: the joint database, filtered
                found = self._hit_lines_together(pids, buf)
            else:
                found = self._hit_lines_each(pids, buf)
            for entry in self._confirm(buf, found, 0, idx):
                pid = entry[3]
                kind, sig = self.owners[pid]
                if sig is None:
                    if kind in SIDE_KINDS:
                        if sum(self.owners[e[3]][0] == kind for e in ok_head) < OK_HINTS:
                            ok_head.append(entry)
                    else:
                        (hint_head if len(hint_head) < TAIL_HINTS else hint_tail).append(entry)
                    continue
                order += 1
                head = sig_head[pid]
                if len(head) < FILE_KEEP:
                    head.append((order, entry))
                else:
                    tail = sig_tail.get(pid)
                    if tail is None:
                        tail = sig_tail[pid] = collections.deque(maxlen=FILE_KEEP)
                    tail.append((order, entry))
            if reread_path is None:
                counts.append(buf.count(b"\n"))
        kept = sorted((e for h in sig_head.values() for e in h), key=lambda e: e[0])
        if sig_tail:
            kept = sorted(kept + [e for t in sig_tail.values() for e in t], key=lambda e: e[0])
        pending = ok_head + hint_head + list(hint_tail) + [e for _, e in kept]
        need = max((p[0] for p in pending), default=0)
        if need > len(counts):
            counts = self._recount(reread_path, need)
        base = [0]
        for c in counts:
            base.append(base[-1] + c)
        if reread_path is None:
            result.lines = base[-1]
        self._collect(pending, base, result)

    def _confirm(self, buf: bytes, found: list[tuple[int, int, int]], origin: int, idx: int) -> list:
        """re2 on each hit line (a segment of it, when \r redraws the line): (chunk, line, text, pid, groups).

        `found` holds (line start, line end, pattern id); line numbers count from offset `origin`.
        Generic hints are confirmed lazily: only the first and the last TAIL_HINTS that hold, and the
        first OK_HINTS `ok` lines (a hint between them can never be kept by _collect), so a long
        traceback costs no re2 per frame.
        """
        found.sort()
        owners = self.owners
        hint_at: list[int] = []            # the failure hints' places in `found`, in order
        side_at: dict[str, list[int]] = {kind: [] for kind in SIDE_KINDS}    # and each side kind's
        for k, hit in enumerate(found):    # one pass
            kind, sig = owners[hit[2]]
            if sig is None:
                (side_at[kind] if kind in side_at else hint_at).append(k)
        hint_ok: dict[int, tuple | None] = {}

        def confirm_until(order, enough: int) -> None:
            good = 0
            for k in order:
                if good >= enough:
                    break
                if k not in hint_ok:
                    ls, le, pid = found[k]
                    hint_ok[k] = self._read_line(buf[ls:le], pid)
                good += hint_ok[k] is not None

        # _collect keeps the first and last TAIL_HINTS failure hints and the first OK_HINTS `ok` lines
        if len(hint_at) > 2 * TAIL_HINTS:
            confirm_until(hint_at, TAIL_HINTS)
            confirm_until(reversed(hint_at), TAIL_HINTS)
        else:
            confirm_until(hint_at, len(hint_at))
        for at in side_at.values():
            confirm_until(at, OK_HINTS)
        pending = []
        n, pos = 0, origin
        kept: dict[int, int] = {}          # a signature's lines kept so far (hints are capped above)
        read = self._read_line
        for k, (ls, le, pid) in enumerate(found):
            if owners[pid][1] is None:
                got = hint_ok.get(k)
                if got is None:
                    continue
            else:
                c = kept.get(pid, 0)
                if c >= MAX_PER_PATTERN:
                    continue
                got = read(buf[ls:le], pid)
                if got is None:
                    continue
                kept[pid] = c + 1
            n += buf.count(b"\n", pos, ls)
            pos = ls
            pending.append((idx, n + 1, got[0], pid, got[1]))
        return pending

    def _read_line(self, line: bytes, pid: int) -> tuple[str, dict | None] | None:
        """(capped text, capped groups) when pattern `pid` holds on the line (on one of its \r
        segments: a progress bar redrawing it, or a CRLF end); None when it does not."""
        search = self._search[pid]
        found = None
        for seg in (line.split(b"\r") if b"\r" in line else (line,)):
            found = search(seg)
            if found is not None:
                line = seg
                break
        if found is None:
            return None
        text = line[: MAX_TEXT * 2].decode("utf-8", "replace")[:MAX_TEXT].rstrip()
        # the groups, capped (slices of the line, not the line: it would be kept alive)
        groups = None if self.owners[pid][1] is None else {k: v[:MAX_FACT] for k, v in found.items()}
        return text, groups

    # -- many small files at once -------------------------------------------------------------
    def scan_many(self, paths: list[str], keep: bool = False) -> list[ScanResult]:
        """scan_file for each path, with the small regular files scanned together in groups; with
        `keep`, a small file's bytes as read stay in its result's `data` (the caller reads them
        again otherwise: the rescue of wrapped lines, the advice layer's whole text).

        Thousands of small logs cost more in per-call overhead than in bytes: concatenated (each
        ending in a newline) they are gated and located in a few scans, and every hit is handed
        back to its file by offset. Big, compressed and special files take the streaming path.
        """
        results: list[ScanResult | None] = [None] * len(paths)
        small: list[tuple[int, bytes]] = []
        for i, p in enumerate(paths):
            data = self._read_small(p)
            if data is None:
                results[i] = self.scan_file(p)
                continue
            r = results[i] = ScanResult()
            if keep:
                r.data = data
            if b"\0" in data[:8192]:
                r.error = BINARY
            elif data:
                r.bytes = len(data)
                small.append((i, normalise_chunk(data)))
        group: list[tuple[int, bytes]] = []
        size = 0
        for item in small:
            group.append(item)
            size += len(item[1])
            if size >= GROUP_BYTES:
                self._scan_group(group, results)
                group, size = [], 0
        if group:
            self._scan_group(group, results)
        return results  # type: ignore[return-value]

    @staticmethod
    def _read_small(path) -> bytes | None:
        if str(path) == "-":
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)     # a FIFO must not block the open
        except OSError:
            return None
        try:               # one fstat and one read: thousands of small logs make these calls count
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size >= SMALL_FILE:
                return None
            data = os.read(fd, st.st_size + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        return None if reading.needs_decoding(data[:4]) else data

    def _scan_group(self, group: list[tuple[int, bytes]], results: list) -> None:
        # the group starts and ends with a newline: the loosened patterns' \n stand for ^ and $
        parts, starts, pos = [b"\n"], [], 1
        for _, data in group:
            starts.append(pos)
            parts.append(data)
            pos += len(data)
            if not data.endswith(b"\n"):
                parts.append(b"\n")
                pos += 1
        buf = b"".join(parts)
        found = self._group_hits(buf)
        per_file: dict[int, list] = {}
        for hit in found:
            if hit[0] >= 1:              # not the empty line before the first file
                per_file.setdefault(bisect.bisect_right(starts, hit[0]) - 1, []).append(hit)
        for k, hits in per_file.items():
            self._collect(self._confirm(buf, hits, starts[k], 0), [0], results[group[k][0]])

    def _group_hits(self, buf: bytes) -> list[tuple[int, int, int]]:
        """(line start, line end, pattern id) of the candidate lines of a group of small logs (`buf`
        starts and ends with a newline); a loosened pattern's lines are confirmed later, like all."""
        found: list[tuple[int, int, int]] = []
        if self._joint is not None:     # every line of every pattern in one scan; the rest gated
            found = self._joint_lines(buf, None, None)
            pids = self._rest_gate(buf)
        else:
            pids = self.gate(buf)
        for pid in pids:
            found += [(ls, le, pid) for ls, le in self._locate(pid, buf, 0, 1 << 30)]
        return found

    def _collect(self, pending, base, result: ScanResult) -> None:
        head: list = []
        tail: collections.deque = collections.deque(maxlen=TAIL_HINTS)
        ok: list = []                               # a few lines of normal progress are enough
        levels: dict[str, str | None] = {}          # several signatures often hit the same line
        for idx, n, text, pid, groups in pending:
            line_no = base[idx] + n
            kind, sig = self.owners[pid]
            if sig is None:
                if kind in SIDE_KINDS:
                    if sum(h[0] == kind for h in ok) < OK_HINTS:
                        ok.append((kind, line_no, text))
                    continue
                (head if len(head) < TAIL_HINTS else tail).append((kind, line_no, text))
                continue
            facts = {}
            for name, value in groups.items():
                name = name.decode() if isinstance(name, bytes) else name
                facts[name] = normalise_fact(name, value.decode("utf-8", "replace"))
            if not sig.in_warnings and text not in levels:
                levels[text] = line_level(text)
            demoted = not sig.in_warnings and levels[text] is not None
            result.matches.append(Match(sig, line_no, text, facts, demoted))
        result.matches.sort(key=lambda m: m.line)
        # (line, kind, text): two hints of one kind on one line (the \r segments of a progress bar)
        # came out in set order, which changes with the hash seed: the same log gave two outputs
        result.hints = sorted(set(head) | set(tail) | set(ok), key=lambda h: (h[1], h[0], h[2]))

    def _recount(self, path, need: int) -> list[int]:
        counts = []
        with open(path, "rb", buffering=0) as f:
            for chunk in self.chunks(f):
                if len(counts) >= need:
                    break
                counts.append(chunk.count(b"\n"))
        return counts

    def _hit_lines(self, pid: int, buf: bytes) -> list[tuple[int, int]]:
        """(start, end) offsets of the lines of `buf` where pattern `pid` matches.

        At most MAX_PER_PATTERN lines for a signature; for a generic hint, the first lines and
        those in the last 256 KiB (the last traceback is the one that matters).
        """
        hint = self.owners[pid][1] is None
        # candidates: lines holding a required literal; re2 confirms them (so ask for more than we keep)
        cap = (TAIL_HINTS if hint else MAX_PER_PATTERN) * 10
        lines = self._locate(pid, buf, 0, cap)
        if hint and len(lines) >= cap:
            tail_start = buf.rfind(b"\n", 0, max(0, len(buf) - (256 << 10))) + 1
            if tail_start > lines[-1][0]:
                lines += self._locate(pid, buf, tail_start, 10**6)
        return lines

    def _hit_lines_each(self, pids: set[int], buf: bytes) -> list[tuple[int, int, int]]:
        """_hit_lines of each pattern, except that the patterns of one cluster (see _clusters) gated
        together are located in one scan of their cluster's database: the `*.code.cuda` patterns
        (two sets of 9) share their literals, so a buffer that wakes one wakes them all (the rescue
        of wrapped lines scanned its joined pairs 9 times for a set)."""
        found: list[tuple[int, int, int]] = []
        cluster = self._clusters() if len(pids) > 1 else {}
        done: set[int] = set()
        for pid in pids:
            if pid in done:
                continue
            members = cluster.get(pid)
            if members is not None:
                present = [p for p in members if p in pids]
                if len(present) > 1 and (db := self._cluster_db(members)) is not None:
                    found += self._joint_lines(buf, frozenset(present),
                                               {p: MAX_PER_PATTERN * 10 for p in present}, db=db)
                    done.update(present)
                    continue
            found += [(ls, le, pid) for ls, le in self._hit_lines(pid, buf)]
        return found

    def _clusters(self) -> dict[int, tuple[int, ...]]:
        """pattern id -> its cluster: the signature patterns (ASCII, no line anchor) whose gate
        literals are the same, when there are two or more. The gate wakes them together, and their
        lines come out of one database exactly as out of each pattern's own (_single: the same
        trimmed expressions, the same flags; anchored ones never share a database, see _joint_db)."""
        c = getattr(self, "_cluster", None)
        if c is None:
            groups: dict[tuple, list[int]] = collections.defaultdict(list)
            if self.gate_exprs is not None:
                for pid, (_, sig) in enumerate(self.owners):
                    p = self.raw[pid]
                    if sig is not None and p.isascii() and not _anchored(p):
                        groups[tuple(self.gate_exprs[pid])].append(pid)
            c = self._cluster = {pid: tuple(m) for m in groups.values() if len(m) > 1 for pid in m}
        return c

    def _cluster_db(self, members: tuple[int, ...]):
        """One database of a cluster's patterns (as _single compiles each), or None if it does not compile."""
        dbs = self.__dict__.setdefault("_cluster_dbs", {})
        if members in dbs:
            return dbs[members]
        hs = self._hs
        flags = hs.HS_FLAG_MULTILINE | hs.HS_FLAG_ALLOWEMPTY
        exprs = [trim_tail(self.raw[pid]) for pid in members]

        def build():
            db = hs.Database(mode=hs.HS_MODE_BLOCK)
            db.compile(expressions=exprs, ids=list(members), elements=len(exprs), flags=[flags] * len(exprs))
            return db

        try:
            db = cache.cached_hyperscan("cluster", [str(flags).encode()] + [e + b"\0%d" % pid for e, pid in zip(exprs, members)], build)
        except hs.error:
            db = None
        dbs[members] = db
        return db

    def _hit_lines_together(self, pids: set[int], buf: bytes) -> list[tuple[int, int, int]]:
        """_hit_lines for several patterns in one scan of a big chunk, with the joint database of all
        patterns (one database whatever the gated set, so a varied big log compiles nothing)."""
        whole = {p for p in pids if p in self.in_joint}
        caps = {p: (TAIL_HINTS if self.owners[p][1] is None else MAX_PER_PATTERN) * 10 for p in pids}
        found = []
        for pid in pids:
            if pid in whole:
                continue
            if self._hs is not None and self.raw[pid].isascii():
                # kept out of the joint database (a line anchor): scanned alone, same keep rule
                lines = self._locate(pid, buf, 0, 1 << 30)
                cap = caps[pid]
                keep = lines[:cap] + (lines[cap:][-TAIL_HINTS * 10:] if self.owners[pid][1] is None else [])
            else:
                keep = self._hit_lines(pid, buf)
            found += [(ls, le, pid) for ls, le in keep]
        if not whole:
            return found
        return found + self._joint_lines(buf, whole, caps)

    def _joint_lines(self, buf: bytes, only, caps, db=None) -> list[tuple[int, int, int]]:
        """(line start, line end, pattern id) of every line where a pattern of the joint database
        matches, one entry per pattern and line. With `caps`, a pattern keeps its first caps[pid]
        lines and, for a generic hint, the last TAIL_HINTS * 10 more (the last traceback matters)."""
        last_end: dict[int, int] = {}
        head: dict[int, list] = collections.defaultdict(list)
        tails: dict[int, collections.deque] = {}
        hint = self.owners

        def on_match(pid, _from, to, _flags, _ctx):
            if only is not None and pid not in only:
                return False
            end = to - 1 if to > 0 else 0
            if end <= last_end.get(pid, -1):
                return False
            ls = buf.rfind(b"\n", 0, end) + 1
            le = buf.find(b"\n", end)
            le = len(buf) if le < 0 else le
            last_end[pid] = le
            lines = head[pid]
            if caps is None or len(lines) < caps[pid]:
                lines.append((ls, le))
            elif hint[pid][1] is None:
                t = tails.get(pid)
                if t is None:
                    t = tails[pid] = collections.deque(maxlen=TAIL_HINTS * 10)
                t.append((ls, le))
            return False

        (db or self._joint).scan(buf, match_event_handler=on_match)
        found = [(ls, le, pid) for pid, lines in head.items() for ls, le in lines]
        for pid, t in tails.items():
            found += [(ls, le, pid) for ls, le in t]
        return found

    def _locate(self, pid: int, buf: bytes, start: int, limit: int) -> list[tuple[int, int]]:
        single = self._single(pid)
        view = buf if start == 0 else buf[start:]
        out: list[tuple[int, int]] = []
        if single is None:                      # re2 fallback: search, then skip to the next line
            regex, pos = self.regexes[pid], 0
            while len(out) < limit and (m := regex.search(view, pos)) is not None:
                end = m.end() - 1 if m.end() > m.start() else m.start()
                ls = view.rfind(b"\n", 0, end) + 1 if view[end:end + 1] != b"\n" else view.rfind(b"\n", 0, end) + 1
                le = view.find(b"\n", end)
                le = len(view) if le < 0 else le
                out.append((start + ls, start + le))
                pos = le + 1
            return out
        last_end = -1

        def on_match(_id, _from, to, _flags, _ctx):
            nonlocal last_end
            end = to - 1 if to > 0 else 0           # the match's last byte
            if end <= last_end:                      # same line as the previous hit
                return False
            ls = view.rfind(b"\n", 0, end) + 1
            le = view.find(b"\n", end)
            le = len(view) if le < 0 else le
            out.append((start + ls, start + le))
            last_end = le
            return len(out) >= limit

        try:
            single.scan(view, match_event_handler=on_match)
        except self._hs.ScanTerminated:
            pass
        return out

    def _single(self, pid: int):
        """A hyperscan database that finds every line where pattern `pid` matches; None without hyperscan.

        The gate only proved that a required literal is in the chunk. Finding the lines with the
        full pattern (all matches, not just the first) keeps Python away from the many lines where a
        common literal ("config", "loss") appears without the failure; a pattern hyperscan cannot
        compile whole falls back to its literals, and re2 confirms each line either way.
        """
        if self.gate_exprs is None:
            return None
        db = self._singles.get(pid)
        if db is None:
            hs = self._hs
            flags = hs.HS_FLAG_MULTILINE | hs.HS_FLAG_ALLOWEMPTY
            raw = trim_tail(self.raw[pid])     # the same lines, found faster

            def whole():
                if not raw.isascii():      # bytes mode would split a non-ASCII class into bytes
                    raise hs.error("non-ASCII pattern")
                db = hs.Database(mode=hs.HS_MODE_BLOCK)
                db.compile(expressions=[raw], ids=[0], elements=1, flags=[flags])
                return db

            def literals():
                group = self.gate_exprs[pid]
                db = hs.Database(mode=hs.HS_MODE_BLOCK)
                db.compile(expressions=[e for e, _ in group], ids=list(range(len(group))),
                           elements=len(group), flags=[flags | f for _, f in group])
                return db

            try:
                db = cache.cached_hyperscan("single", [str(flags).encode(), raw], whole)
            except hs.error:
                db = cache.cached_hyperscan("single-literals", [str(flags).encode()] + [e + b"\0" + str(f).encode() for e, f in self.gate_exprs[pid]],
                                literals)
            self._singles[pid] = db
        return db


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
