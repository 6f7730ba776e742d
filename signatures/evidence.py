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
         "lexicon", "convention", "consequence", "ok")
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


def hint_patterns() -> list[tuple[str, str]]:
    """(kind, pattern) pairs, in table order, for the matcher."""
    return [(e.kind, e.pattern) for e in load()]
