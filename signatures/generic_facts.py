"""Generic facts (signatures/facts.toml): kernel names, amounts, file:line, shapes, dtypes, archs,
codes, libraries, devices, grid and block, read from a failure's own lines whatever its signature.

Three readings, all re2 (linear in what they read):

- `extract(lines)`: the `line` rules over the root and the lines of the same failure (the lines a
  signature of the root's family matched, and the lines that continue the root's message);
- `extract_log(lines)`: the `log` rules (a build command's -arch, the driver versions of a mismatch,
  the GPU's name) over every line of a small failing log, only for facts no failure line gave;
- `source_location(lines, root)`: the failing source line, from the traceback frames above the root
  (Python) or the stack trace below it (Julia): the innermost frame of the program itself, not a
  temporary file or an installed package, when one exists (`source`), and the innermost frame when
  that is elsewhere (`raised_at`).

`context(lines, root)` picks the lines that continue the root's message. `fact_texts` keeps how the
log wrote each size, so reports say "2.26 GiB" or "131072 bytes" as the log does (the byte count
stays in the facts for machines).
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from signatures.facts import fact_kind, normalise, parse_bytes

TABLE = Path(__file__).parent / "facts.toml"
MAX_TWINS = 3          # shape, shape_2, shape_3
NO_TWINS = {"rank", "op", "timeout_ms", "status"}   # the first says it: other ranks repeat the same failure
SCOPES = ("line", "log")
CONTEXT_AFTER = 12     # lines after the root read as its continuation (blank lines and stack frames skipped)
CONTEXT_KEEP = 8       # at most this many of them
LOG_MAX_LINES = 20000  # a whole-log reading stops here (small logs only reach it)
LOG_BEFORE, LOG_AFTER = 120, 30   # the window of a whole-log reading around the root


@dataclass(frozen=True)
class FactRule:
    pattern: str
    docs: str
    match: tuple            # ({"line", "facts"}, ...)
    no_match: tuple
    scope: str = "line"
    families: tuple = ()    # a `log` rule runs only for diagnoses of these families
    twins: bool = False     # a `log` rule: every value it finds (driver_version, driver_version_2), not the first


_rules: dict | None = None
_table: list | None = None
_sets: dict | None = None
_log_by_family: dict = {}


def load(path: Path = TABLE) -> list[FactRule]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, row in enumerate(data.get("fact", [])):
        where = f"{path}: fact #{i + 1}"
        if not isinstance(row.get("pattern"), str) or not row.get("docs"):
            raise ValueError(f"{where}: needs a 'pattern' string and 'docs'")
        if not row.get("match") or not row.get("no_match"):
            raise ValueError(f"{where}: needs 'match' examples (line and facts) and 'no_match' lines")
        scope = row.get("scope", "line")
        if scope not in SCOPES:
            raise ValueError(f"{where}: scope must be one of {', '.join(SCOPES)}, not {scope!r}")
        families = tuple(row.get("families", ()))
        if scope == "log" and not families:
            raise ValueError(f"{where}: a whole-log rule names the families it is read for ('families')")
        out.append(FactRule(row["pattern"], row["docs"], tuple(row["match"]), tuple(row["no_match"]), scope, families,
                            bool(row.get("twins", False))))
    return out


def _loaded() -> list[FactRule]:
    global _table
    if _table is None:
        _table = load()
    return _table


def _compiled(scope: str = "line"):
    """The scope's rules, and one re2 Set of them that says which rules can match a text (one pass
    instead of one search per rule)."""
    global _rules, _sets
    if _rules is None:
        import re2

        rules = {s: [] for s in SCOPES}
        sets = {}
        one_line = re2.Options()
        one_line.never_nl = True         # rules read lines joined by "\n"; no match spans two of them
        for r in _loaded():
            rules[r.scope].append(re2.compile("(?m)" + r.pattern, one_line))
        for scope_, rxs in rules.items():
            opts = re2.Options()
            opts.max_mem = 64 << 20         # a Set out of memory says "no match" silently (notes.md)
            rset = re2.Set.SearchSet(opts)
            for r in _loaded():
                if r.scope == scope_:
                    rset.Add("(?m)" + r.pattern)
            rset.Compile()
            sets[scope_] = rset
        _rules, _sets = rules, sets
    return _rules[scope]


def _candidates(scope: str, text: str) -> list:
    _compiled(scope)
    hit = _sets[scope].Match(text)
    return [_rules[scope][i] for i in sorted(hit)] if hit else []


def _log_rules(family: str | None):
    """The whole-log rules read for a family (all of them when family is None), and their Set."""
    if family not in _log_by_family:
        import re2

        _compiled("log")
        chosen = [(r, rx) for r, rx in zip([r for r in _loaded() if r.scope == "log"], _rules["log"])
                  if family is None or family in r.families or "*" in r.families]
        rset = None
        if chosen:
            opts = re2.Options()
            opts.max_mem = 64 << 20
            rset = re2.Set.SearchSet(opts)
            for r, _ in chosen:
                rset.Add("(?m)" + r.pattern)
            rset.Compile()
        _log_by_family[family] = ([(rx, r.twins) for r, rx in chosen], rset, _gate([r.pattern for r, _ in chosen]))
    return _log_by_family[family]


def _gate(patterns: list[str]):
    """text -> its lines that hold one of the literals of which every match of some pattern holds
    one (a regex of them, one pass), or None when a pattern has none: a window holding none of them
    is not read, and of one that does only those lines are (one literal pass costs far less than the
    Set's pass over a window of 150 lines; a rule matches within one line, never across two)."""
    from signatures.literals import BOUNDARY, required_literals

    out, icase = set(), False
    for p in patterns:
        req = required_literals(p)
        if req is None:
            return None
        lits, ic = req
        icase = icase or ic
        out |= {lit.strip(BOUNDARY) for lit in lits}
    if not out:
        return None
    import re2

    from signatures.re2direct import lines_holding

    return lines_holding(re2.compile(("(?i)" if icase else "") + "|".join(re2.escape(lit) for lit in sorted(out))))


def _value(name: str, text: str):
    value = _typed(name, text)
    return list(value) if isinstance(value, list) else value      # the cache's lists stay its own


@functools.lru_cache(maxsize=4096)
def _typed(name: str, text: str):
    if fact_kind(name) == "cc":
        text = text.replace(", ", ".")
    value = normalise(name, text)
    if name == "kernel" and isinstance(value, str) and "<" in value and value.endswith(">"):
        value = value[: value.index("<")] + "<...>"     # template arguments: the name is what tells kernels apart
    return value


# what a C++ pretty name puts where a kernel's name stands: not a name (a lambda's "operator()", the
# "what():" std::terminate prints)
NOT_NAMES = {"operator", "void", "const", "static", "inline", "template", "auto", "what"}


def _add(found: dict, known: dict, values: list, name: str, value) -> None:
    if repr(value) in values:
        return
    if name.split("_")[0] in ("kernel", "function") and value in NOT_NAMES:
        return
    twins = 1 if name in NO_TWINS else MAX_TWINS
    free = [k for k in [name] + [f"{name}_{i}" for i in range(2, twins + 1)] if k not in known and k not in found]
    if free:
        found[free[0]] = value
        values.append(repr(value))


def _read_text(text: str, rules, known: dict | None) -> dict:
    """Whole-log rules ((regex, twins) pairs) over one text: only names `known` lacks; the first value
    of each name, or every one (numbered twins) for a rule with `twins`."""
    known = dict(known or {})
    values = [repr(v) for v in known.values()]
    found: dict = {}
    for rx, twins in rules:
        for _, groups in _finder(rx)(text):
            for name, raw, _ in groups:
                if name not in known and (twins or name not in found):
                    _add(found, known, values, name, _value(name, raw))
    return found


def _read(lines, scope: str, known: dict | None, only_new_names: bool = False) -> dict:
    """The lines joined by "\n" (no rule matches across one): one Set pass says which rules can match,
    only those are run, and their matches are taken in the order they stand in the text (the root's
    first), rules in file order at the same place. One piece of text is one fact: a span a group of
    one name took (block: [0,0,0]) is not read again as another (a shape)."""
    known = dict(known or {})
    values = [repr(v) for v in known.values()]
    found: dict = {}
    joined = "\n".join(lines)
    hits = []
    for i, rx in enumerate(_candidates(scope, joined) if joined else ()):
        for start, groups in _finder(rx)(joined):
            hits.append((start, i, groups))
    hits.sort(key=lambda h: (h[0], h[1]))
    taken: list = []            # (start, end, kind of name) of every group read so far
    for _, _, groups in hits:
        for name, raw, (start, end) in groups:
            base = name.split("_")[0]
            if _clashes(taken, start, end, base):
                continue
            taken.append((start, end, base))
            if not (only_new_names and name in known):
                _add(found, known, values, name, _value(name, raw))
    for name, value in list(known.items()) + list(found.items()):
        base = name.split("_")[0]
        if base not in ("kernel", "symbol") or not isinstance(value, str):
            continue
        readable = demangle(value)
        if readable and f"{base}_name" not in known and f"{base}_name" not in found:
            found[f"{base}_name"] = readable
    return found


_FINDERS: dict = {}


def _finder(rx):
    """text -> [(start, [(name, value, span) of each set group])] of a compiled rule's matches
    (signatures.re2direct: the wrapper builds a match object and its group mapping anew per match)."""
    find = _FINDERS.get(id(rx))
    if find is None:
        from signatures.re2direct import finditer_groups

        find = _FINDERS[id(rx)] = finditer_groups(rx)
    return find


def _clashes(taken: list, start: int, end: int, base: str) -> bool:
    """Did a group of another kind of name read mostly the same text ('0,0,0' in '[0,0,0]')? One inside
    a much longer other does not clash (the sm_90 inside a file path is still an arch)."""
    for s0, e0, b0 in taken:
        if s0 < end and start < e0 and b0 != base:
            overlap = min(end, e0) - max(start, s0)
            if 2 * overlap >= end - start and 2 * overlap >= e0 - s0:
                return True
    return False


def extract(lines: list[str], known: dict | None = None) -> dict:
    """Facts found in `lines` that are not already in `known` (by name or by value)."""
    return _read(lines, "line", known)


def extract_new(lines: list[str], known: dict | None = None) -> dict:
    """Facts of names `known` lacks altogether: what the chain's lines (the root's symptoms, another
    layer's report) add beside the root's own facts, never a twin of one of them."""
    return _read(lines, "line", known, only_new_names=True)


def extract_log(lines: list[str], known: dict | None = None, root_line: int | None = None,
                family: str | None = None) -> dict:
    """The whole-log facts (scope = "log") of a failing log of `family`, for names no failure line
    gave: read in the LOG_BEFORE lines before the root and LOG_AFTER after it (all of `lines` without
    a root), one Set pass over that window first, so a log none of them can match costs one scan."""
    rules, rset, gate = _log_rules(family)
    if not rules:
        return {}
    if root_line is not None:
        lines = lines[max(0, root_line - LOG_BEFORE): root_line + LOG_AFTER]
    text = "\n".join(lines[:LOG_MAX_LINES])
    if gate is not None:
        # only the lines holding a literal some rule needs: a match lies in one line and holds one
        text = gate(text)
        if not text:
            return {}
    hit = rset.Match(text) if text else None
    if not hit:
        return {}
    found = _read_text(text, [rules[i] for i in sorted(hit)], known)
    return found                    # no twins: the first line that says it wins


# -- the root's continuation -------------------------------------------------------------------

_NEW_MESSAGE = ("Traceback (most recent call last)", "During handling of the above exception",
                "The above exception was the direct cause", "Stacktrace:", "stack traceback:")
_FRAME_LINE = ('File "', "@ ", "[C]:", "in function ")


def context(lines: list[str], root_line: int) -> list[str]:
    """The lines after the root (1-based `root_line` in `lines`) that continue its message: a wrapped
    tail, the address and kernel under a sanitizer report, the file:line a C++ runtime prints after
    its error. Stops at a new traceback; Python stack frames are skipped (source_location reads them)."""
    from signatures.normalise import strip_prefix

    out = []
    for text in lines[root_line: root_line + CONTEXT_AFTER]:
        t = strip_prefix(text).strip().lstrip("=#> ").strip()
        if not t:
            continue
        if t.startswith(_NEW_MESSAGE):
            break
        if t.startswith(_FRAME_LINE) or ": in function " in t:
            continue
        out.append(t)
        if len(out) >= CONTEXT_KEEP:
            break
    if out and 0 < root_line <= len(lines):
        # the root joined with its first continuation: "CompilationError: at 1:0:" / "def _kernel(..."
        out.append(lines[root_line - 1].rstrip() + " " + out[0])
    return out


def lead(lines: list[str], root_line: int) -> list[str]:
    """The line just above the root when the root continues it: that line ends with ':' (a header
    naming the file or the call: "[CUDA ERROR] at file train_gpt2.cu:1410:" / "too many resources
    requested for launch"), or the root starts with '->' or a location (deviceQuery's "cudaGetDeviceCount
    returned 35" / "-> CUDA driver version is insufficient"; "CUDA error: LowPass() execution failed" /
    " in file <cudaSiftH.cu>, line 416 : invalid configuration argument"). A traceback line or a frame
    is no lead."""
    from signatures.normalise import strip_prefix

    if not 1 < root_line <= len(lines):
        return []
    prev = strip_prefix(lines[root_line - 2]).strip().strip("=#>*`'\" ")
    root = strip_prefix(lines[root_line - 1]).strip().lstrip("=#>*`'\" ")
    if not prev or prev.startswith(_NEW_MESSAGE) or prev.startswith(_FRAME_LINE) or ": in function " in prev:
        return []
    continues = root.startswith(("->", "...", "\u2026", "in file", "at line", "in line"))
    return [prev] if prev.endswith(":") or continues else []


# -- where it failed -------------------------------------------------------------------------

TEMP_DIRS = ("/tmp/", "\\Temp\\", "<frozen", "<string>", "<stdin>", "torchinductor_", "/var/folders/")
LIBRARY_DIRS = ("site-packages/", "dist-packages/", "/lib/python3", "/lib/python2", "\\Lib\\", "/usr/lib/",
                "/.julia/packages/", "/.julia/juliaup/", "/share/julia/", "/conda-bld/")
_PY_FRAME = None
_JL_FRAME = None


def _frame_rx():
    global _PY_FRAME, _JL_FRAME
    if _PY_FRAME is None:
        import re2

        # Python's frames; rich's boxed ("│ /x/linear.py:134 in forward │") and IPython's ("File /x.py:126, in f")
        _PY_FRAME = (re2.compile(r'File "([^"]+)", line (\d+)(?:, in ([\w<>.]+))?'),
                     re2.compile(r'^\s*\x{2502}\s*([^\s\x{2502}"]+\.py):(\d+)\b(?: in ([\w<>.]+))?|'
                                 r'^\s*File ([^\s"]+\.py):(\d+), in ([\w<>.]+)'))
        # Julia:  "   @ NNop ~/.julia/packages/NNop/cRsoL/src/attention.jl:186 [inlined]"
        _JL_FRAME = re2.compile(r'^\s*@ (?:(\w+) )?(\S+\.jl):(\d+)')
    return _PY_FRAME, _JL_FRAME


def is_library(path: str) -> bool:
    """An installed package's or the interpreter's file (site-packages, /usr/lib, ~/.julia/packages)."""
    p = path.replace("\\", "/")
    return any(d in p for d in LIBRARY_DIRS)


def _pick(frames) -> dict:
    """frames (an iterable of (file, line)) innermost first: the innermost of the program's own (not
    temporary, not a package) is `source`; the innermost non-temporary one is `raised_at` when it is
    somewhere else. Reads no further than the program's own innermost frame."""
    first = None
    for f in frames:
        if any(t in f[0] for t in TEMP_DIRS):
            continue
        if first is None:
            first = f
        if not any(d in f[0].replace("\\", "/") for d in LIBRARY_DIRS):
            out = {"source": f"{f[0]}:{f[1]}", **_function_of(f)}
            if f is not first:
                out["raised_at"] = f"{first[0]}:{first[1]}"
            return out
    return {"source": f"{first[0]}:{first[1]}", **_function_of(first)} if first else {}


def _function_of(frame) -> dict:
    """`source_function`: the function of the chosen frame (Python's "in forward"), when it names one."""
    name = frame[2] if len(frame) > 2 else None
    return {"source_function": name} if name and not name.startswith("<") else {}


def source_location(lines: list[str], root_line: int) -> dict:
    """`source` (and `raised_at`) from the stack above the root (Python: innermost last) or, when the
    root has none, the Julia stack trace below it (innermost first, Base and Core skipped)."""
    _, jl = _frame_rx()

    def python_frames():          # innermost first: upwards from the root
        for text in reversed(lines[max(0, root_line - 400): root_line]):
            if "File " in text or "\u2502" in text:
                m = _py_frame(text)
                if m:
                    yield _file_and_line(m)

    def julia_frames():           # innermost first: downwards from the root
        for text in lines[root_line: root_line + 60]:
            if "@ " in text:
                m = jl.search(text)
                if m and m[1] not in ("Base", "Core") and not m[2].startswith("./"):
                    yield (m[2], m[3], None)

    return _pick(python_frames()) or _pick(julia_frames())


def frames_from_hints(frame_texts: list[str]) -> dict:
    """The same choice over the traceback frames a big log's scan kept (innermost last)."""
    return _pick(_file_and_line(m) for t in reversed(frame_texts) for m in [_py_frame(t)] if m)


_PY_GROUPS = None


def _py_frame(text: str):
    """The groups of a Python traceback frame line, in Python's own form or rich's box / IPython's
    (the literal test first: most lines are none of them), or None."""
    global _PY_GROUPS
    if _PY_GROUPS is None:
        from signatures.re2direct import first_groups

        _PY_GROUPS = tuple(first_groups(rx) for rx in _frame_rx()[0])
    if 'File "' in text:
        return _PY_GROUPS[0](text)
    if "File " in text or "\u2502" in text:
        return _PY_GROUPS[1](text)
    return None


def _file_and_line(g) -> tuple:
    """(file, line, function or None) of a frame's groups, whichever of the frame forms matched."""
    return g if len(g) == 3 else (g[0:3] if g[0] is not None else g[3:6])


_LAUNCH = None


def launch_site(lines: list[str], root_line: int) -> dict:
    """The innermost traceback frame above the root whose code line launches a kernel in the
    Triton/Numba form `kernel[grid](args)` (`fn[(n, 1)](...)`, `k[grid](...)`; a list indexed and
    called, `layers[i](x)`, is no launch): `kernel` and `launch_site` (file:line)."""
    global _LAUNCH
    if _LAUNCH is None:
        import re2

        _LAUNCH = re2.compile(r'^\s*(?:[\w.\[\], ]+=\s*)?(?:[\w]+\.)*(?P<kernel>[A-Za-z_]\w*)'
                              r'\[(?:[^\]\n]*[,(][^\]\n]*|\w*grid\w*)\]\s*\(')
    start = max(0, root_line - 400)
    code_lines = "\n".join(lines[start + 1:min(root_line, len(lines))])
    if "](" not in code_lines and "] (" not in code_lines:      # no line launches anything (most logs)
        return {}
    for i in range(min(root_line, len(lines)) - 2, start - 1, -1):
        code = lines[i + 1]
        if "](" not in code and "] (" not in code:       # no launch on the code line: no frame to read
            continue
        m = _py_frame(lines[i])
        launch = _LAUNCH.search(code) if m else None
        if launch:
            file, line, _ = _file_and_line(m)
            return {"kernel": launch["kernel"], "launch_site": f"{file}:{line}"}
    return {}


# -- mangled names -----------------------------------------------------------------------------

_CTOR = {"C1", "C2", "C3", "D0", "D1", "D2"}
_SUBST = {"St": "std", "Sa": "std::allocator", "Ss": "std::string"}


def demangle(symbol: str) -> str | None:
    """The qualified name of an Itanium-mangled symbol, without its parameters: '_Z10add_kernelPfS_i'
    -> 'add_kernel'; '_ZN3c105ErrorC1ENS_14SourceLocationE' -> 'c10::Error::Error'. None when the text
    is not a mangled name this reading understands (then the symbol is shown as the log wrote it)."""
    s = symbol.strip()
    if not s.startswith("_Z") or len(s) > 4096:
        return None
    i, parts = 2, []
    nested = s[i:i + 1] == "N"
    if nested:
        i += 1
        while i < len(s) and s[i] in "KVrLO":       # cv / ref qualifiers of a member function
            i += 1
    while i < len(s):
        if s[i].isdigit():
            j = i
            while j < len(s) and s[j].isdigit():
                j += 1
            n = int(s[i:j])
            if n <= 0 or j + n > len(s):
                return None
            parts.append(s[j:j + n])
            i = j + n
        elif s[i:i + 2] in _SUBST and not parts:
            parts.append(_SUBST[s[i:i + 2]])
            i += 2
        elif s[i:i + 2] in _CTOR and parts:
            parts.append(("~" if s[i] == "D" else "") + parts[-1])
            i += 2
        elif s[i] == "I" and parts:                  # template arguments: skip to the matching E
            depth, i = 1, i + 1
            while i < len(s) and depth:
                depth += {"I": 1, "E": -1}.get(s[i], 0)
                i += 1
            parts[-1] += "<...>"
        else:
            break
        if not nested:
            break
    if not parts:
        return None
    name = "::".join(parts)
    return name if name != s else None


# -- how the log wrote each size ---------------------------------------------------------------

_SIZE_TOKEN = None


def fact_texts(facts: dict, lines: list[str]) -> dict:
    """{name: text} for each size fact whose byte count a size in `lines` spells (the first such
    spelling): '2.26 GiB', '131072 bytes', '21.90G', '0xc000', a bare '98304'. Sizes the log never
    wrote are left out (reports then show binary units)."""
    global _SIZE_TOKEN
    wanted = {k: v for k, v in facts.items() if fact_kind(k) == "bytes" and isinstance(v, int) and not isinstance(v, bool)}
    if not wanted:
        return {}
    if _SIZE_TOKEN is None:
        import re2

        # a number with a unit, or a hex count; bare decimal counts are looked up by their digits below
        _SIZE_TOKEN = re2.compile(r"(?i)\b(?:0x[0-9a-f]+|\d[\d,]*(?:\.\d+)?(?: ?(?:[kmgt]i?b|bytes?|[kmgt])\b))")
    spelled: dict[int, str] = {}
    values = set(wanted.values())
    for text in lines:
        for m in _SIZE_TOKEN.finditer(text):
            n = parse_bytes(m[0])
            if n in values and n not in spelled:
                spelled[n] = m[0]
        for v in values - spelled.keys():
            digits = str(v)
            at = text.find(digits)
            while at >= 0:
                end = at + len(digits)
                if (at == 0 or not (text[at - 1].isalnum() or text[at - 1] in ".,")) and \
                        (end == len(text) or not (text[end].isalnum() or text[end] in ".,")):
                    spelled[v] = digits
                    break
                at = text.find(digits, end)
        if len(spelled) == len(values):
            break
    return {k: spelled[v] for k, v in wanted.items() if v in spelled}
