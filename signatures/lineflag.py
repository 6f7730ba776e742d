"""A learned failure-line detector: does one log line read like a failure, in any wording?

The generic evidence (signatures/evidence.toml) keeps a log out of `none` only in the wordings its
entries know; a failure worded otherwise ("Failed to find any forward convolution algorithm.",
"call to cuStreamSynchronize returned error 700: Illegal address during kernel execution") leaves a
silent log `none`, and each was fixed so far by one more entry, which does not carry to the next
wording. This detector is learned instead, by `python -m bench.lineflag --write` (bench/lineflag.py
says from what: labelled root lines and every failure example line as positives; every line of the
`none`-labelled logs, benign examples, progress lines and the ordinary output above a failure as
negatives). It is a logistic regression over the features present in a line (signatures/lineflag.json:
a bias and one weight per feature, each weighing fully up to SCALE_FROM features, less in a longer
line); a line's score is its posterior. The engine (diagnose.engine._flagged) reads it only where a
log would otherwise be a silent `none` (no signature, no failure evidence, no progress line), and
only the lines holding a GATE word (one hyperscan pass): a line scoring at least the threshold keeps
the log out of `none` (`unknown`, the word table's family if it has one). The honest estimate is the
held-out-by-round table `python -m bench.lineflag --cv` (make lineflag) prints.

Features: the line (without its rank/time/logger prefix) split on every non-alphanumeric ASCII
character, lower-cased, plus the parts of a camel-case or letter/digit identifier (as
signatures.wordmodel), and each pair of adjacent runs (`failed_to`); pure numbers and runs shorter than
2 or longer than 40 characters are dropped; a line logged below error level adds `_level_warning` or
`_level_info`. str.translate and split only, no regular expression on log text; the gate is one
hyperscan (else re2) scan: linear time.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

# the word model's tokenisation: a line's alphanumeric runs, and a run's camel-case / letter-digit parts
from signatures.wordmodel import _SEPARATORS, _parts

TABLE = Path(__file__).parent / "lineflag.json"
LINE_MAX = 2000           # characters of one line read
READ_MAX = 1 << 20        # bytes of a silent log read (a silent log is short; a long one is cut, not read whole)
# Chosen on `python -m bench.lineflag --cv` (held out by round; the table carries the one it was written
# with): at 0.95, 19 of the 50 failing logs the tool of each round's day called a silent `none` are
# flagged, 0 of its 136 right silent `none` answers, 2 of the 262 silent `none` logs of today (at 0.9:
# 22, 1 and 5; at 0.97: 13, 0 and 2). A false alarm costs as much as a miss. With `recovered` lines
# left unflagged (a fallback, a skip, an excused context): 19, 0 and 0 (at 0.9: 22, 0 and 1).
THRESHOLD = 0.95
SCALE_FROM = 20           # features of a line (words and pairs) up to which each weighs fully

# A line is scored only if it holds one of these (lower-case; ASCII case ignored): the words a failure
# is stated in. They cover 94% of the training positives (most of the rest are signature wordings: an
# Xid, a SIGSEGV, NCCL's duplicate GPU) and 3% of the lines of the perf corpus's silent logs, so the
# detector reads a silent log at the cost of one hyperscan pass, not a tokenisation of every line.
GATE = ("fail", "error", "unable", "cannot", "can't", "could not", "couldn't", "invalid", "illegal", "not ", "no ",
        "nan", "exceed", "mismatch", "timeout", "timed out", "abort", "fault", "exception", "assert", "denied",
        "refused", "missing", "unsupported", "out of", "incompatible", "bad ", "wrong", "violation", "crash",
        "killed", "terminat", "panic", "fatal", "critical", "unknown", "undefined", "unexpected", "too ",
        "insufficient", "overflow", "lost", "hang", "stuck", "corrupt", "expected", "differ", "\u2717", "n't",
        "inf ", "inf,", "inf]", "inf)", "unrecogni", "must", "only")   # `inf` alone: every INFO line
# A line holding one of these states its own recovery: a handled fallback or skip, not a failure of the run.
RECOVERED = ("falling back", "fall back to", "fallback", "using the default", "skipping", "skipped")


_RUN_CACHE: dict[str, tuple[str, tuple[str, ...]]] = {}   # a run -> (its lower-case form, its parts)
_RUN_CACHE_MAX = 200_000


def _run(w: str) -> tuple[str, tuple[str, ...]]:
    """(the run lower-cased, or '' when it is no word; the parts of a camel-case or letter/digit
    identifier), memoised: a log repeats its words far more often than it has new ones."""
    hit = _RUN_CACHE.get(w)
    if hit is None:
        if len(w) > 40 or w.isdigit():
            hit = ("", ())
        else:
            parts = () if w.isalpha() and (w.islower() or w.isupper() or w.istitle()) else _parts(w)
            hit = (w.lower() if len(w) >= 2 else "",
                   tuple(p.lower() for p in parts if len(p) >= 2 and not p.isdigit()) if len(parts) > 1 else ())
        if len(_RUN_CACHE) >= _RUN_CACHE_MAX:
            _RUN_CACHE.clear()
        _RUN_CACHE[w] = hit
    return hit


def words(line: str) -> set[str]:
    """The features of one line (see the module doc)."""
    from signatures.normalise import line_level, strip_prefix

    line = line[:LINE_MAX]
    level = line_level(line)
    out = {f"_level_{level}"} if level else set()
    runs = []
    for w in strip_prefix(line).translate(_SEPARATORS).split():
        low, parts = _RUN_CACHE.get(w) or _run(w)
        if low:
            runs.append(low)
        if parts:
            out.update(parts)
    out.update(runs)
    # adjacent word pairs (of the lower-cased runs, numbers dropped): "failed to" vs "failed, falling back"
    out.update([a + "_" + b for a, b in zip(runs, runs[1:])])
    return out


def scale(n: int) -> float:
    """Each word's weight in a line of `n` features: 1 up to SCALE_FROM features, then sqrt(SCALE_FROM/n),
    so a long line (a compiler's command line, a dump of paths) does not add up to a failure by its many
    domain words alone."""
    return 1.0 if n <= SCALE_FROM else math.sqrt(SCALE_FROM / n)


class Detector:
    def __init__(self, bias: float, weights: dict[str, float], threshold: float = THRESHOLD):
        self.bias, self.weights, self.threshold = bias, weights, threshold

    @classmethod
    def from_table(cls, data: dict) -> "Detector":
        return cls(data["bias"], data["weights"], data.get("threshold", THRESHOLD))

    def score(self, line: str) -> float:
        """The posterior that this line states a failure."""
        feats = words(line)
        if not feats:
            return 0.0
        get = self.weights.get
        z = self.bias + scale(len(feats)) * sum([get(w, 0.0) for w in feats])
        return 1.0 / (1.0 + math.exp(-z)) if z > -30 else 0.0

    def flag(self, data: bytes) -> tuple[int, str, float] | None:
        """(line number from 1, text, posterior) of the highest-scoring line of the log text `data`
        (its first READ_MAX bytes; ANSI codes already stripped) among the lines that hold a GATE word
        and score at least the threshold, or None. A line redrawn with \\r is read as a terminal shows
        it (its last segment)."""
        from signatures.normalise import last_segment

        data = data[:READ_MAX]
        best = None
        line, at = 1, 0
        for start in gated(data):
            line += data.count(b"\n", at, start)
            at = start
            end = data.find(b"\n", start)
            text = last_segment(data[start:end if end >= 0 else len(data)]).decode("utf-8", "replace")
            if len(text.strip()) < 3:
                continue
            p = self.score(text)
            if p >= self.threshold and (best is None or p > best[2]) and not recovered(text):
                best = (line, text, p)
        return best


def recovered(text: str) -> bool:
    """Does the line state its own recovery (RECOVERED: a fallback taken, a step skipped) or a context
    the generic evidence excuses (signatures/evidence.toml [[excuse]])? Then it is no failure of the run,
    however like one its words read ('bf16 is not supported on this GPU (sm_75), falling back to fp16')."""
    from signatures.evidence import excused

    low = text.lower()
    return any(r in low for r in RECOVERED) or excused(text)


def gated(data: bytes) -> list[int]:
    """The offsets where the lines holding a GATE word start (ASCII case ignored), in order."""
    starts, last = [], -1
    for end in _gate_scanner()(data):
        if end <= last:
            continue
        last = end
        starts.append(data.rfind(b"\n", 0, end) + 1)
    return starts


_scanner = None


def _literal(word: str) -> bytes:
    """A GATE word as an expression: letters, digits and spaces as they are, every other byte \\xHH."""
    return b"".join(bytes([b]) if chr(b).isalnum() and b < 128 or b == 32 else b"\\x%02x" % b
                    for b in word.encode("utf-8"))


def _gate_scanner():
    """bytes -> the end offsets of the lines holding a GATE word, in order, one per line: one hyperscan
    scan (as signatures/wrapped.py finds its error lines), re2 where hyperscan has no wheel."""
    global _scanner
    if _scanner is None:
        from signatures.wrapped import line_scanner

        _scanner = line_scanner("lineflag-gate", b"(?:" + b"|".join(_literal(w) for w in GATE) + b")")
    return _scanner


_detector: Detector | None = None
_loaded = False


def load() -> Detector | None:
    """The shipped detector (None when signatures/lineflag.json is absent)."""
    global _detector, _loaded
    if not _loaded:
        _loaded = True
        if TABLE.exists():
            _detector = Detector.from_table(json.loads(TABLE.read_text(encoding="utf-8")))
    return _detector
