"""A low-confidence family guess from the wording, for failures no signature explains.

The table is data (signatures/fallback.toml); this module only scores lines against it. Every word of
every family sits in one hyperscan database (case-insensitive): one scan per evidence line says which
words occur, and re2 runs only for those, to report the wording that decided. Lines with non-ASCII
text (where hyperscan's byte-wise `.` and case folding could differ from re2's) and words hyperscan
cannot compile are read with re2 alone. Linear time either way; no Python `re` on log text.
"""
from __future__ import annotations

import bisect
import tomllib
from dataclasses import dataclass
from pathlib import Path

from signatures.taxonomy import FAMILIES, ORIGINS

TABLE = Path(__file__).parent / "fallback.toml"


@dataclass(frozen=True)
class Guess:
    family: str
    origin: str
    fix: str
    score: float
    words: tuple[str, ...]      # the wording that decided it


@dataclass
class _Table:
    rows: list            # (family, origin, fix, [(word id, re2 regex)], needs a GPU context)
    words: list[str]      # word id -> re2 source
    scan: object          # bytes -> set of word ids present; None without hyperscan
    re2_only: frozenset   # word ids hyperscan could not compile: always asked of re2
    tiebreaks: list = None  # (preferred family, families it is preferred over, re2 regex on the root line)
    context: object = None  # re2 regex: a GPU context word (the `needs_context` families require one)
    vetoes: dict = None     # family -> _Veto: a line it takes is no evidence for that family
    gpu_stack: object = None  # re2 regex: a name of the GPU/accelerator stack ([gpu_stack])
    contexts: dict = None     # name -> re2 regex: the named [context] lists (`needs_context = "runtime"`)


def _has_context(table: _Table, need, texts: list[str]) -> bool:
    """Whether `texts` hold the context a row's `needs_context` asks: True: a GPU context word ([context]
    words); a name: a word of that [context] list; False: none asked."""
    if not need:
        return True
    rx = table.context if need is True else (table.contexts or {}).get(need)
    return rx is None or any(rx.search(t) for t in texts)


@dataclass(frozen=True)
class _Veto:
    """A row's `veto_when` (one re2 or a list) and `veto_unless` (re2) or `veto_unless_table` (a table of
    `names`, e.g. [gpu_stack]). A line is vetoed when a `veto_when` wording occurs and what it names does
    not match `unless`: what its `(?P<what>...)` groups captured where any did, else the whole line."""
    when: tuple
    unless: object = None
    own_package: bool = False   # `veto_own_package`: what names a package of the program's own frames is vetoed

    def takes(self, text: str, own: frozenset = frozenset()) -> bool:
        subjects, hit = [], False
        for rx in self.when:
            m = rx.search(text)
            if m:
                hit = True
                what = m.groupdict().get("what")
                if what:
                    subjects.append(what)
        if not hit:
            return False
        if self.own_package and own and any(_top_package(s) in own for s in subjects):
            return True
        return self.unless is None or not any(self.unless.search(s) for s in subjects or [text])


def _top_package(what: str) -> str:
    """The top-level package a captured module names: 'proj' of 'proj.gpu_utils', of "x' from 'proj.models"."""
    last = what.replace("'", " ").replace('"', " ").split()[-1] if what.strip() else what
    return last.split(".")[0].lower()


def own_packages(frames) -> frozenset:
    """The directory and module names of the program's own traceback frames (`File "/home/u/proj/train.py"`:
    home, u, proj, train), not of an installed package's or the interpreter's (site-packages, /usr/lib:
    generic_facts.is_library) nor of a frozen or temporary module. str operations only: no regex on log text."""
    from signatures.generic_facts import is_library

    out = set()
    for line in frames:
        i = line.find('File "')
        if i < 0:
            continue
        j = line.find('"', i + 6)
        path = line[i + 6:j] if j > 0 else ""
        if not path or path.startswith("<") or is_library(path):
            continue
        parts = [q for q in path.replace("\\", "/").split("/") if q and q not in (".", "..")]
        if parts:
            parts[-1] = parts[-1].rsplit(".", 1)[0]
        out.update(q.lower() for q in parts if q.isidentifier())
    return frozenset(out)


_table: _Table | None = None


def _load() -> _Table:
    global _table
    if _table is None:
        import re2

        data = tomllib.loads(TABLE.read_text(encoding="utf-8"))
        rows, words, vetoes = [], [], {}
        stack = data.get("gpu_stack", {}).get("names", [])
        gpu_stack = _alternation(re2, stack) if stack else None
        for row in data["family"]:
            if "veto_when" in row:
                vetoes[row["name"]] = _veto(re2, row, data)
            if row["name"] not in FAMILIES or row["origin"] not in ORIGINS:
                raise ValueError(f"{TABLE}: family {row['name']!r} / origin {row['origin']!r} not in the taxonomy")
            ids = []
            for w in row["words"]:
                ids.append((len(words), re2.compile("(?i)" + w)))
                words.append(w)
            need = row.get("needs_context", False)
            if isinstance(need, str) and need not in data.get("context", {}):
                raise ValueError(f"{TABLE}: family {row['name']!r}: needs_context names no [context] list {need!r}")
            rows.append((row["name"], row["origin"], row["fix"], ids, need if isinstance(need, str) else bool(need)))
        scan, re2_only = _word_scanner(words)
        tiebreaks = []
        for tb in data.get("tiebreak", []):
            bad = [f for f in [tb["prefer"], *tb["over"]] if f not in FAMILIES]
            if bad:
                raise ValueError(f"{TABLE}: tiebreak names {bad} not in the taxonomy")
            tiebreaks.append((tb["prefer"], frozenset(tb["over"]), re2.compile("(?i)" + tb["when"])))
        context_words = data.get("context", {}).get("words", [])
        context = re2.compile("(?i)" + "|".join(f"(?:{w})" for w in context_words)) if context_words else None
        # named context lists ([context] runtime = [...]): a row's `needs_context = "runtime"` asks one of them
        contexts = {k: _alternation(re2, v) for k, v in data.get("context", {}).items() if k != "words" and v}
        _table = _Table(rows, words, scan, re2_only, tiebreaks, context, vetoes, gpu_stack, contexts)
    return _table


def _alternation(re2, patterns: list[str]):
    return re2.compile("(?i)" + "|".join(f"(?:{p})" for p in patterns))


def _veto(re2, row: dict, data: dict) -> _Veto:
    when = row["veto_when"]
    whens = tuple(re2.compile("(?i)" + w) for w in ([when] if isinstance(when, str) else when))
    if "veto_unless" in row and "veto_unless_table" in row:
        raise ValueError(f"{TABLE}: family {row['name']!r}: veto_unless or veto_unless_table, not both")
    unless = None
    if "veto_unless" in row:
        unless = re2.compile("(?i)" + row["veto_unless"])
    elif "veto_unless_table" in row:
        names = data.get(row["veto_unless_table"], {}).get("names")
        if not names:
            raise ValueError(f"{TABLE}: family {row['name']!r}: veto_unless_table names no table with `names`")
        unless = _alternation(re2, names)
    return _Veto(whens, unless, bool(row.get("veto_own_package", False)))


def _word_scanner(words: list[str]):
    """(scan function over bytes -> word ids present, ids left to re2), or (None, all ids) without hyperscan."""
    try:
        import hyperscan
    except ImportError:
        return None, frozenset(range(len(words)))
    from signatures import cache

    flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
    def compiles(ids: list[int]) -> bool:
        try:
            hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(
                expressions=[words[i].encode() for i in ids], ids=ids, elements=len(ids), flags=[flags] * len(ids))
            return True
        except hyperscan.error:
            return False

    everything = list(range(len(words)))
    # which words compile, found once per table (cached: the test compile cost every process 0.2 s)
    ok = cache.cached_json("fallback-word-ids", [repr(flags).encode()] + [w.encode() for w in words],
                           lambda: everything if compiles(everything) else [i for i in everything if compiles([i])])
    bad = [i for i in everything if i not in set(ok)]
    exprs = [words[i].encode() for i in ok]

    def build():
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=exprs, ids=ok, elements=len(ok), flags=[flags] * len(ok))
        return db

    db = cache.cached_hyperscan("fallback-words", [repr(flags).encode()] + exprs, build)

    def scan(data: bytes) -> set[int]:
        hits: set[int] = set()
        db.scan(data, match_event_handler=lambda i, f, t, fl, ctx: hits.add(i))
        return hits

    return scan, frozenset(bad)


def advice_root(line: str) -> bool:
    """Whether `line` is raised as performance advice or a deprecation ([advice] raised_as: a warning
    class made an error): such a root predicts no family, and no guess is made from it."""
    import tomllib

    global _advice
    if _advice is None:
        _advice = tuple(tomllib.loads(TABLE.read_text(encoding="utf-8")).get("advice", {}).get("raised_as", ()))
    for token in line.split()[:4]:
        core = token.rstrip(":,;'\")").rsplit(".", 1)[-1]
        if core.endswith(_advice) and core.isalnum():
            return True
    return False


_advice: tuple | None = None


def guess(lines: list[tuple[str, float]], frames: list[str] = ()) -> Guess | None:
    """The family whose words weigh most in `lines` ((text, weight) pairs); None when no word hits.

    A family marked `needs_context` counts only when a GPU context word occurs in `lines` or in
    `frames` (the traceback's frame lines, read for context only, never scored). Ties go to the
    family the first line (the root) scored on, then to the family listed first in the table (the
    more specific ones come first)."""
    table = _load()
    if lines and advice_root(lines[0][0]):
        return None
    texts = [*(t for t, _ in lines), *frames]
    known_context: dict = {}
    own = own_packages(frames)
    present: list[list[int] | None] = []     # per line: the word ids hyperscan saw, sorted (None: ask re2 of all)
    for text, _ in lines:
        if table.scan is not None and text.isascii():
            present.append(sorted(table.scan(text.encode()) | table.re2_only))
        else:
            present.append(None)
    best: Guess | None = None
    best_key = (0.0, 0.0)
    scored: dict[str, Guess] = {}
    # every line's ids known (no line for re2 alone): a row none of whose words any line holds scores 0
    anywhere = None if any(hits is None for hits in present) else sorted(set().union(*present))
    for name, origin, fix, regexes, needs_context in table.rows:
        if needs_context:
            if needs_context not in known_context:
                known_context[needs_context] = _has_context(table, needs_context, texts)
            if not known_context[needs_context]:
                continue
        start = regexes[0][0] if regexes else 0       # a row's word ids are consecutive
        if anywhere is not None:
            i = bisect.bisect_left(anywhere, start)
            if i == len(anywhere) or anywhere[i] >= start + len(regexes):
                continue
        score, on_root, words = 0.0, 0.0, []
        for k, ((text, weight), hits) in enumerate(zip(lines, present)):
            if hits is None:
                todo = regexes
            else:                                     # only the row's words present, in the row's order
                i, j = bisect.bisect_left(hits, start), bisect.bisect_left(hits, start + len(regexes))
                todo = [regexes[wid - start] for wid in hits[i:j]]
            hit = False
            veto = (table.vetoes or {}).get(name)
            if veto and todo and veto.takes(text, own):
                todo = []                             # e.g. a host allocator's failure is no GPU oom
            for wid, rx in todo:
                m = rx.search(text)
                if m:
                    hit = True
                    words.append(m.group(0).strip().rstrip(":;,.!?)]}>=/-\x27\""))   # its closing context is not the word
            if hit:                                   # a line is evidence once, not once per synonym
                score += weight
                on_root += weight if k == 0 else 0.0
        if score > 0:
            scored[name] = Guess(name, origin, fix, score, tuple(dict.fromkeys(words)))
            # a tie goes to the family the root line itself names, then to the one listed first
            if best is None or (score, on_root) > best_key:
                best, best_key = scored[name], (score, on_root)
    # the taxonomy's tie-breaks ("Where two families seem to fit"), as data: an error a kernel
    # compiler raises is compile-error whatever its words are about (shapes, dtypes, devices)
    if best is not None and lines:
        for prefer, over, when in table.tiebreaks or ():
            if best.family in over and prefer in scored and when.search(lines[0][0]):
                return scored[prefer]
    return best


def family_row(family: str) -> tuple[str, str]:
    """(origin, fix) the table gives a family (a guess made elsewhere, by the word model, borrows them)."""
    for name, origin, fix, _, _ in _load().rows:
        if name == family:
            return origin, fix
    raise KeyError(f"{TABLE}: no row for family {family!r}")


def context_allows(family: str, lines: list[str], frames: list[str] = ()) -> bool:
    """Whether a guess of `family` may stand here: a family marked `needs_context` needs a GPU context
    word in `lines` or `frames` (the rule guess() applies to the table's own words), and a family with a
    veto (`veto_when` / `veto_unless`) may not be guessed from a root line (`lines[0]`) the veto takes."""
    table = _load()
    veto = (table.vetoes or {}).get(family)
    if veto and lines and veto.takes(lines[0], own_packages(frames)):
        return False
    need = next((row[4] for row in table.rows if row[0] == family), False)
    return _has_context(table, need, [*lines, *frames])
