"""Generic evidence (signatures/evidence.toml): which lines say a log failed, or ran on normally.

The matcher scans these patterns with the signatures, in the same pass, and reports their lines as
`ScanResult.hints` (kind, line, text). The engine reads them to tell `unknown` from `none`.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).parent / "evidence.toml"
KINDS = ("traceback", "frame", "exception", "error", "status", "report", "level", "assert", "fatal", "exit",
         "lexicon", "convention", "limit", "retry", "consequence", "ok")
# kinds that are evidence of a failure (everything but `ok`, and `consequence`: a shutdown, a
# cancelled request, the other ranks being killed, which follow a failure but do not show one)
FAILURE_KINDS = tuple(k for k in KINDS if k not in ("ok", "consequence"))


@dataclass(frozen=True)
class Evidence:
    kind: str
    pattern: str
    docs: str
    match: tuple[str, ...]
    no_match: tuple[str, ...]
    since: str = ""


def load(path: Path = TABLE) -> list[Evidence]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, row in enumerate(data.get("evidence", [])):
        where = f"{path}: evidence #{i + 1}"
        if row.get("kind") not in KINDS:
            raise ValueError(f"{where}: kind {row.get('kind')!r} is not one of {', '.join(KINDS)}")
        if not isinstance(row.get("pattern"), str) or not row.get("docs"):
            raise ValueError(f"{where}: needs a 'pattern' string and 'docs'")
        if not row.get("match") or not row.get("no_match"):
            raise ValueError(f"{where}: needs 'match' and 'no_match' example lines")
        out.append(Evidence(row["kind"], row["pattern"], row["docs"], tuple(row["match"]), tuple(row["no_match"]),
                            row.get("since", "")))
    return out


@dataclass(frozen=True)
class Excuse:
    pattern: str
    docs: str
    match: tuple[str, ...]
    no_match: tuple[str, ...]


def load_excuses(path: Path = TABLE) -> list[Excuse]:
    """The [[excuse]] entries: benign contexts of a failure word (they excuse `lexicon` lines only)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, row in enumerate(data.get("excuse", [])):
        where = f"{path}: excuse #{i + 1}"
        if not isinstance(row.get("pattern"), str) or not row.get("docs"):
            raise ValueError(f"{where}: needs a 'pattern' string and 'docs'")
        if not row.get("match") or not row.get("no_match"):
            raise ValueError(f"{where}: needs 'match' and 'no_match' example lines")
        out.append(Excuse(row["pattern"], row["docs"], tuple(row["match"]), tuple(row["no_match"])))
    return out


_EXCUSE = None


def excused(text: str) -> bool:
    """Does an [[excuse]] describe this line (a failure word counted at zero, said of the future, naming a
    feature, or under a lower level tag)? One re2 search of the joined excuses, on a hint line only."""
    global _EXCUSE
    if _EXCUSE is None:
        import re2

        _EXCUSE = re2.compile("|".join(f"(?:{e.pattern})" for e in load_excuses()))
    return _EXCUSE.search(text) is not None


_LEXICON = None


def says_failure(text: str) -> bool:
    """Does the message itself (the line less its rank, timestamp and logger prefix) say it failed, in
    the failure lexicon's words, with no [[excuse]]? For a line whose only other evidence is its
    logger's level: vLLM and TensorFlow prefix every line of a traceback or message with ERROR / E,
    so the level alone does not make a line a report. One re2 search, on such a line only."""
    global _LEXICON, _LEVEL_TOKEN
    if _LEXICON is None:
        import re2

        _LEXICON = re2.compile("|".join(f"(?:{e.pattern})" for e in load() if e.kind == "lexicon"))
        _LEVEL_TOKEN = re2.compile(LEVEL_TOKEN)
    from signatures.normalise import strip_prefix

    message = strip_prefix(text)
    token = _LEVEL_TOKEN.search(message)
    if token is not None:
        message = message[token.end():]     # the logger's own level token is no word of the message
    return _LEXICON.search(message) is not None and not excused(message)


# a logger's level token near the start of a line that strip_prefix left ("(VllmWorker rank=2 pid=225)
# ERROR 06-26 23:10:17 [multiproc_executor.py:527] ...")
LEVEL_TOKEN = r"^.{0,80}?(?:^|[\s\[|(<])(?:ERROR|FATAL|CRITICAL|E)(?:[\s\]|)>:]|$)"
_LEVEL_TOKEN = None


# kinds whose entries the matcher scans as one alternation: their words are common ("failed", "ERROR"),
# so each entry on its own would wake a second-phase scan of most chunks; one pattern wakes one
JOINED_KINDS = ("lexicon",)


def _group(pattern: str) -> str:
    """The pattern as a group that keeps its leading inline flags to itself: (?i)x -> (?i:x)."""
    if pattern.startswith("(?i)"):
        return f"(?i:{pattern[4:]})"
    return f"(?:{pattern})"


def hint_patterns(entries: list[Evidence] | None = None) -> list[tuple[str, str]]:
    """(kind, pattern) pairs, in table order, for the matcher; the entries of a JOINED_KINDS kind as one
    alternation, where the first of them stood."""
    entries = load() if entries is None else entries
    out: list[tuple[str, str]] = []
    for kind in JOINED_KINDS:
        joined = [e.pattern for e in entries if e.kind == kind]
        if joined:
            at = next(i for i, e in enumerate(entries) if e.kind == kind)
            entries = [e for e in entries[:at] if e.kind != kind] + [Evidence(kind, "|".join(map(_group, joined)), "", (), ())] \
                + [e for e in entries[at:] if e.kind != kind]
    out += [(e.kind, e.pattern) for e in entries]
    return out
