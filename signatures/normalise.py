"""Messy log text made matchable, line numbers kept: ANSI codes, carriage returns, log prefixes.

Normalisation never adds or removes a newline, so line N of the normalised text is line N of the file.
"""
from __future__ import annotations

import re2

# Every pattern here runs on log lines: re2, never Python `re`, whose backtracking took 16.8 s on one
# 173-byte line of run-together timestamps (tests/test_linear_time.py feeds each such lines).
_ANSI = re2.compile(rb"\x1b(?:\[[0-9;:?<=>]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def normalise_chunk(buf: bytes) -> bytes:
    """Strip ANSI escapes; cheap when there are none (memchr).

    Carriage returns stay: the matcher treats the segments of a line between \r (progress bars
    redrawing it, CRLF ends) as separate texts of the same line, so nothing is lost and no line moves.
    """
    if b"\x1b" in buf:
        buf = _ANSI.sub(b"", buf)
    return buf


def _alternatives(*parts: str) -> str:
    """re2 has no verbose mode: alternatives written one a line, joined here."""
    return "|".join(f"(?:{p})" for p in parts)


# Prefixes that loggers, launchers and ranks put in front of a message.
_PREFIX = re2.compile(r"^(?:\s*(?:" + _alternatives(
    r"\[rank\d+\]:?",                                    # torchrun  [rank0]:
    r"\[\d+(?:,\d+)*\]<std(?:out|err)>:?",               # torchrun --tee  [0]<stderr>:
    r"\((?:\w+\s+)?pid=\d+(?:,\s*ip=[\d.]+)?\)",         # ray  (RayWorkerWrapper pid=123)
    r"\d{4}-\d\d-\d\d[T\s][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?",  # ISO timestamp
    r"\[\d{4}-\d\d-\d\d[T\s][\d:.,]+[^\]]*\]",           # [2024-01-01 10:00:00,123]
    r"\[?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\]?(?:\s+\d\d-\d\d\s[\d:.]+)?(?:\s+[\w.-]+:\d+\])?:?",  # vllm / logging
    r"[IWEF]\d{4}\s+[\d:.]+\s+\d+\s+[^\]\s]+:\d+\]",     # glog / absl  W1210 08:01:33.059000 349 file.py:987]
    r"[IWEF]\s[\w./-]+:\d+\]",                           # TF / XLA, after its timestamp:  W tensorflow/x.cc:12]
    r"\[[IWEF]\s?[\w.:\s-]*\]",                          # torch C++  [W socket.cpp:663]
    r"\[\d+/\d+\]",                                      # dynamo frame  [0/0]
    r"[\w.-]+\s*\|",                                      # docker compose  service  |
) + r"))+\s*")

# A line logged below error level: its level tag after any rank/pid/timestamp prefixes. The TF/XLA
# tag must follow ": " (its timestamp's end); re2 has no lookbehind, so the ": " is part of the match.
_LEVEL = re2.compile((
    r"^\s*(?:\[rank\d+\]:?\s*|\((?:\w+\s+)?pid=\d+[^)]*\)\s*|\d{4}-\d\d-\d\d[T\s][\d:.,]+\S*\s*|\[\d{4}-[^\]]*\]\s*)*"
    r"(?:" + _alternatives(
        r"(?P<glog>[IW])\d{4}\s",
        r":\s(?P<tf>[IW])\s\S+:\d+\]",
        r"\[(?P<cpp>[IW])[\s\d]",
        r"\[?(?P<word>WARNING|WARN|INFO|DEBUG)\b",
    ) + ")"))
_WARNING_TEXT = re2.compile(r"\b\w*Warning: |\bwarnings\.warn\(")


def last_segment(line: bytes) -> bytes:
    """What a terminal shows of a line redrawn with \r: its last non-empty segment."""
    if b"\r" not in line:
        return line
    segments = [s for s in line.split(b"\r") if s.strip()]
    return segments[-1] if segments else b""


def strip_prefix(line: str) -> str:
    """The message without rank, timestamp and logger prefixes (for display and clustering)."""
    m = _PREFIX.match(line)
    return line[m.end():] if m else line


def line_level(line: str) -> str | None:
    """'warning' or 'info' when the line was logged below error level; None otherwise."""
    m = _LEVEL.match(line)
    if m:
        tag = (m["glog"] or m["tf"] or m["cpp"] or m["word"] or "").upper()
        return "info" if tag in ("I", "INFO", "DEBUG") else "warning"
    if _WARNING_TEXT.search(line):
        return "warning"
    return None


# One terminal escaper for the project; it lives with the other output escapers (findings/render.py).
from findings.render import visible  # noqa: E402,F401
