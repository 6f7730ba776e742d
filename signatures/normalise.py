"""Messy log text made matchable, line numbers kept: ANSI codes, carriage returns, log prefixes.

Normalisation never adds or removes a newline, so line N of the normalised text is line N of the file.
"""
from __future__ import annotations

import re2

from signatures import re2direct

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
_PREFIX = re2.compile(rb"^(?:\s*(?:" + _alternatives(
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
).encode() + rb"))+\s*")

# A line logged below error level: its level tag after any rank/pid/timestamp prefixes. The TF/XLA
# tag must follow ": " (its timestamp's end); re2 has no lookbehind, so the ": " is part of the match.
def _level(named: bool) -> bytes:
    g = (lambda name: f"(?P<{name}>") if named else (lambda name: "(?:")
    return (
        r"^\s*(?:\[rank\d+\]:?\s*|\((?:\w+\s+)?pid=\d+[^)]*\)\s*|\d{4}-\d\d-\d\d[T\s][\d:.,]+\S*\s*|\[\d{4}-[^\]]*\]\s*)*"
        r"(?:" + _alternatives(
            g("glog") + r"[IW])\d{4}\s",
            r":\s" + g("tf") + r"[IW])\s\S+:\d+\]",
            r"\[" + g("cpp") + r"[IW])[\s\d]",
            r"\[?" + g("word") + r"WARNING|WARN|INFO|DEBUG)\b",
        ) + ")").encode()


_LEVEL = re2.compile(_level(named=True))
# a level tag behind an issue's quoting or a list bullet (`WARNING: ...`, > INFO ..., * Warning ...):
# the line was quoted from a log that had logged it below error level
_QUOTED_LEVEL = re2.compile(rb"^[\s`>*#\"']{1,6}(WARNING|WARN|Warning|INFO|DEBUG)\b")
_WARNING_TEXT = re2.compile(rb"\b\w*Warning: |\bwarnings\.warn\(")
# a structured logger's level field below error: logfmt/slog/logrus `level=info`, `level=WARN`, JSON
# `"level":"info"`, logrus' text `INFO[0000]` / `WARN[0000]` (Go services: Ollama, Docker, Kubernetes
# device plugins, DCGM): the line was logged below error level whatever words its message holds
_STRUCTURED_LEVEL = re2.compile(rb'(?i)(?:^|\s)level="?(info|debug|trace|warn|warning|notice)"?\s+\w+=|"level"\s*:\s*"(info|debug|trace|warn|warning)"|^\s*(INFO|WARN|DEBU)\[\d+\]')
# Without captures re2 answers from its DFA (captures cost 5-10x): one anchored match says whether a
# line has a level tag and where the tag ends; the bytes before that end say which tag it was.
_LEVEL_SPAN = re2.compile(_level(named=False))
_TF_TAG = re2.compile(rb":\s([IW])\s\S+:\d+\]$")


def last_segment(line: bytes) -> bytes:
    """What a terminal shows of a line redrawn with \r: its last non-empty segment."""
    if b"\r" not in line:
        return line
    segments = [s for s in line.split(b"\r") if s.strip()]
    return segments[-1] if segments else b""


def strip_prefix(line: str) -> str:
    """The message without rank, timestamp and logger prefixes (for display and clustering)."""
    # bytes: google-re2 maps every str offset back from UTF-8 (4x the cost); the end of a match is a
    # character boundary, so the rest decodes exactly
    raw = line.encode("utf-8", "surrogatepass")
    end = _prefix_end(raw)
    return raw[end:].decode("utf-8", "surrogatepass") if end > 0 else line


def _tag(head: bytes) -> bytes:
    """The level tag that ends `head` (a match of _LEVEL_SPAN), by the shape of each alternative."""
    for word in (b"WARNING", b"WARN", b"INFO", b"DEBUG"):
        if head.endswith(word):
            return word
    if len(head) >= 3 and head[-3:-2] == b"[" and head[-2:-1] in (b"I", b"W"):
        return head[-2:-1]                                    # torch C++  [W socket.cpp:663]
    if len(head) >= 6 and head[-6:-5] in (b"I", b"W") and head[-5:-1].isdigit() and head[-1:].isspace():
        return head[-6:-5]                                    # glog  W1210 08:01:33
    m = _TF_TAG.search(head)                                  # TF/XLA  ...: W tensorflow/x.cc:12]
    if m:
        return m[1]
    m = _LEVEL.match(head)                                    # not reached for the shapes above
    return (m[b"glog"] or m[b"tf"] or m[b"cpp"] or m[b"word"] or b"").upper() if m else b""


def line_level(line: str) -> str | None:
    """'warning' or 'info' when the line was logged below error level; None otherwise."""
    raw = line.encode("utf-8", "surrogatepass")
    end = _level_end(raw)
    if end >= 0:
        return "info" if _tag(raw[:end]) in (b"I", b"INFO", b"DEBUG") else "warning"
    if _warning_end(raw) >= 0:
        return "warning"
    m = _STRUCTURED_LEVEL.search(raw)
    if m:
        word = (m[1] or m[2] or m[3]).lower()
        return "info" if word in (b"info", b"debug", b"trace", b"debu", b"notice") else "warning"
    end = _quoted_end(raw)
    if end >= 0:
        return "info" if raw[:end].endswith((b"INFO", b"DEBUG")) else "warning"
    return None


# per-line calls: the re2 extension directly (signatures/re2direct.py), same answers
_prefix_end = re2direct.end(_PREFIX, anchored=True)
_level_end = re2direct.end(_LEVEL_SPAN, anchored=True)
_warning_end = re2direct.end(_WARNING_TEXT)
_quoted_end = re2direct.end(_QUOTED_LEVEL, anchored=True)


# One terminal escaper for the project; it lives with the other output escapers (findings/render.py).
from findings.render import visible  # noqa: E402,F401
