"""Messy log text made matchable, line numbers kept: ANSI codes, carriage returns, log prefixes.

Normalisation never adds or removes a newline, so line N of the normalised text is line N of the file.
"""
from __future__ import annotations

import re

_ANSI = re.compile(rb"\x1b(?:\[[0-9;:?<=>]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def normalise_chunk(buf: bytes) -> bytes:
    """Strip ANSI escapes; cheap when there are none (memchr).

    Carriage returns stay: the matcher treats the segments of a line between \r (progress bars
    redrawing it, CRLF ends) as separate texts of the same line, so nothing is lost and no line moves.
    """
    if b"\x1b" in buf:
        buf = _ANSI.sub(b"", buf)
    return buf


# Prefixes that loggers, launchers and ranks put in front of a message.
_PREFIX = re.compile(
    r"""^(?:\s*(?:
        \[rank\d+\]:?                                   # torchrun  [rank0]:
      | \[\d+(?:,\d+)*\]<std(?:out|err)>:?              # torchrun --tee  [0]<stderr>:
      | \((?:\w+\s+)?pid=\d+(?:,\s*ip=[\d.]+)?\)        # ray  (RayWorkerWrapper pid=123)
      | \d{4}-\d\d-\d\d[T\s][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?  # ISO timestamp
      | \[\d{4}-\d\d-\d\d[T\s][\d:.,]+[^\]]*\]          # [2024-01-01 10:00:00,123]
      | \[?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\]?(?:\s+\d\d-\d\d\s[\d:.]+)?(?:\s+[\w.-]+:\d+\])?:?  # vllm / logging
      | [IWEF]\d{4}\s+[\d:.]+\s+\d+\s+[^\]\s]+:\d+\]    # glog / absl  W1210 08:01:33.059000 349 file.py:987]
      | [IWEF]\s[\w./-]+:\d+\]                          # TF / XLA, after its timestamp:  W tensorflow/x.cc:12]
      | \[[IWEF]\s?[\w.:\s-]*\]                         # torch C++  [W socket.cpp:663]
      | \[\d+/\d+\]                                     # dynamo frame  [0/0]
      | [\w.-]+\s*\|                                    # docker compose  service  |
    ))+\s*""",
    re.X,
)

_LEVEL = re.compile(
    r"""^\s*(?:\[rank\d+\]:?\s*|\((?:\w+\s+)?pid=\d+[^)]*\)\s*|\d{4}-\d\d-\d\d[T\s][\d:.,]+\S*\s*|\[\d{4}-[^\]]*\]\s*)*
        (?:(?P<glog>[IW])\d{4}\s|(?<=:\s)(?P<tf>[IW])\s\S+:\d+\]|\[(?P<cpp>[IW])[\s\d]|\[?(?P<word>WARNING|WARN|INFO|DEBUG)\b)""",
    re.X,
)
_WARNING_TEXT = re.compile(r"\b\w*Warning: |\bwarnings\.warn\(")


def last_segment(line: bytes) -> bytes:
    """What a terminal shows of a line redrawn with \r: its last non-empty segment."""
    if b"\r" not in line:
        return line
    segments = [s for s in line.split(b"\r") if s.strip()]
    return segments[-1] if segments else b""


def strip_prefix(line: str) -> str:
    """The message without rank, timestamp and logger prefixes (for display and clustering)."""
    return _PREFIX.sub("", line, count=1)


def line_level(line: str) -> str | None:
    """'warning' or 'info' when the line was logged below error level; None otherwise."""
    m = _LEVEL.match(line)
    if m:
        tag = (m["glog"] or m["tf"] or m["cpp"] or m["word"] or "").upper()
        return "info" if tag in ("I", "INFO", "DEBUG") else "warning"
    if _WARNING_TEXT.search(line):
        return "warning"
    return None


_SAFE = {0x09, 0x0A}


_VISIBLE = {o: (f"\\x{o:02x}" if o != 0x1B else "\\e")
            for o in list(range(0x20)) + list(range(0x7F, 0xA0)) if o not in _SAFE}


def visible(text: str) -> str:
    """Control characters (ESC, BEL, CR, C1, DEL) made visible, so log text can never drive a terminal."""
    return text.translate(_VISIBLE)
