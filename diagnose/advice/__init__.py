"""Advice an expert would write: the log's ecosystems, reasoning rules over the facts, and the fix
and next step in the log's own terms.

Three pure steps, each driven by a data file beside this module:

- `detect(lines, root_frameworks)`: the ecosystems in the log (frameworks.toml markers over the
  lines the scan kept), most specific first;
- `reason(d, snapshot)`: the rules of rules.toml whose condition holds on the diagnosis's typed
  facts (and the snapshot) add their conclusion and select the fix, next step and origin;
- `localise(d)`: a clause of the fix or next step that names a command of an ecosystem absent
  from the log is cut, and a next step that lost one gets that ecosystem's own.

`advise(d, snapshot)` runs the last two after `decide()` and `fusion.fuse()` (the engine's
non-pure layer); `decide()` itself stays a function of the scan.
"""
from __future__ import annotations

import copy
import functools
import operator
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from diagnose.advice import expr
from signatures.facts import fact_kind, format_bytes, render

HERE = Path(__file__).parent
FRAMEWORKS_FILE = HERE / "frameworks.toml"
RULES_FILE = HERE / "rules.toml"
LIBRARY_PATH = re.compile(r"site-packages|dist-packages|/lib/python\d|<frozen |<site-packages>|/usr/lib/|/usr/local/lib/")


class AdviceError(ValueError):
    """A problem in an advice data file; the message names the file and the entry."""


# -- ecosystems ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ecosystem:
    name: str
    markers: tuple[str, ...]
    commands: tuple[str, ...]
    aliases: tuple[str, ...]
    implies: tuple[str, ...]
    next_step: dict = field(default_factory=dict, hash=False, compare=False)
    implies_unless: tuple[str, ...] = ()    # patterns that cancel `implies` (a source build of the framework)
    assumed_unless: tuple[str, ...] = ()    # present unless one of these ecosystems is seen without it
    platform: bool = False                  # where the log ran (python, nvidia, tpu), not a language of advice


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str, where: str):
    try:
        import re2

        return re2.compile(pattern)
    except ImportError:           # pragma: no cover (re2 is a runtime dependency)
        return re.compile(pattern)
    except Exception as e:
        raise AdviceError(f"{where}: pattern {pattern!r}: {e}") from None


@functools.lru_cache(maxsize=1)
def ecosystems() -> tuple[Ecosystem, ...]:
    data = _load_toml(FRAMEWORKS_FILE)
    out = []
    for raw in data.get("ecosystem", []):
        name = raw.get("name")
        where = f"{FRAMEWORKS_FILE}: ecosystem {name!r}"
        unknown = set(raw) - {"name", "markers", "commands", "aliases", "implies", "next_step", "implies_unless",
                              "assumed_unless", "platform"}
        if not name or unknown:
            raise AdviceError(f"{where}: needs a name; unknown keys {sorted(unknown)}")
        for p in list(raw.get("markers", [])) + list(raw.get("commands", [])) + list(raw.get("implies_unless", [])):
            _compile(p, where)
        out.append(Ecosystem(name, tuple(raw.get("markers", [])), tuple(raw.get("commands", [])),
                             tuple(raw.get("aliases", [])), tuple(raw.get("implies", [])),
                             dict(raw.get("next_step", {})), tuple(raw.get("implies_unless", [])),
                             tuple(raw.get("assumed_unless", [])), bool(raw.get("platform", False))))
    return tuple(out)


def ecosystem_names() -> tuple[str, ...]:
    return tuple(e.name for e in ecosystems())


@functools.lru_cache(maxsize=1)
def _marker_set():
    """One re2 Set over every ecosystem's markers (one alternation each): one pass per log."""
    import re2

    opts = re2.Options()
    opts.max_mem = 64 << 20       # a Set out of DFA memory reports "no match" silently
    s = re2.Set.SearchSet(opts)
    owners = []
    for e in ecosystems():
        if e.markers:
            s.Add("|".join(f"(?:{m})" for m in e.markers))
            owners.append(e.name)
    s.Compile()
    return s, owners


@functools.lru_cache(maxsize=1)
def _command_res():
    return {e.name: _compile("|".join(f"(?:{c})" for c in e.commands), e.name) for e in ecosystems() if e.commands}


@functools.lru_cache(maxsize=1)
def _alias_of() -> dict[str, frozenset]:
    out: dict[str, set] = {}
    for e in ecosystems():
        for a in e.aliases:
            out.setdefault(a, set()).add(e.name)
    return {a: frozenset(v) for a, v in out.items()}


def implied(root_frameworks) -> set[str]:
    """The ecosystems every known framework of the root signature shares: its wording is theirs
    (["triton", "inductor"] -> triton; ["pytorch", "jax"] -> none). A name that is no ecosystem's
    alias (nccl, cmake) is one of its own, so nothing is implied."""
    sets = [_alias_of().get(f, frozenset()) for f in root_frameworks]
    return set(frozenset.intersection(*sets)) if sets else set()


_HEAD_400 = operator.itemgetter(slice(400))     # t -> t[:400], in C (a short line is itself)


def detect(lines, root_frameworks=()) -> list[str]:
    """The ecosystems seen in these log lines, in priority order (most specific first).

    A root signature whose frameworks all belong to one ecosystem counts as seeing it: its wording
    is that framework's own message (see `implied`)."""
    s, owners = _marker_set()
    lines = list(filter(None, lines))
    # a line is read to its 400th character (most logs have none longer: one join in C)
    text = "\n".join(lines if not lines or max(map(len, lines)) <= 400 else map(_HEAD_400, lines))
    raw = text.encode("utf-8")       # once, as the re2 wrapper would for each str search of it
    seen = {owners[i] for i in (s.Match(raw) or [])} if text else set()
    seen |= implied(root_frameworks)
    by_name = _by_name()
    for name in list(seen):
        e = by_name.get(name)
        if e and e.implies:
            unless = _unless_re(name)
            if unless is None or not _hs_may(e.implies_unless, raw) or unless.search(raw) is None:
                seen |= set(e.implies)
    return [e.name for e in ecosystems() if e.name in seen]


@functools.lru_cache(maxsize=1)
def _by_name() -> dict:
    return {e.name: e for e in ecosystems()}


@functools.lru_cache(maxsize=None)
def _hs_gate(patterns: tuple[str, ...]):
    """(hyperscan database of the patterns, caseless?) or None: re2 searches of the whole log (an
    ecosystem's implies_unless, a rule's seen()/grab()) asked only when hyperscan finds a match.

    Only ASCII patterns without Unicode classes, read as UTF-8 (`.` and a class take a character, as
    in re2); `$` before a last newline is hyperscan's superset, never a miss. Where the two could
    differ the gate stands aside (_hs_may): a vertical tab (re2's \\s lacks it, PCRE's holds it, so
    \\S would differ) or, for a caseless pattern, a non-ASCII text (re2 folds K to the Kelvin sign)."""
    if not patterns or not all(p.isascii() and "\\p" not in p and "\\P" not in p for p in patterns):
        return None
    if len(patterns) > 1 and any("^" in p or "$" in p for p in patterns):
        return None                # anchored patterns sharing a database (docs/performance.md: a pitfall)
    try:
        import hyperscan

        from signatures import cache

        flags = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_UTF8
        exprs = [p.encode() for p in patterns]

        def build():
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=[flags] * len(exprs))
            return db

        # on disk like the matcher's databases: a bounded repeat read as UTF-8 (`.{0,120}`) takes
        # hyperscan 0.15 s to compile, every worker of every run; loading it takes 40 us
        db = cache.cached_hyperscan("advice-gate", [str(flags).encode()] + exprs, build)
    except Exception:              # no wheel, or a pattern hyperscan does not take: re2 alone
        return None
    return db, any(re.search(r"\(\?[a-zA-Z]*i", p) for p in patterns)


def _hs_may(patterns: tuple[str, ...], raw: bytes, plain: tuple[bool, bool] | None = None) -> bool:
    """Can one of the patterns match `raw` (a str's UTF-8)? False only when their hyperscan database
    (_hs_gate) found none; `plain` is (no vertical tab, ASCII) of `raw` when the caller knows it."""
    gate = _hs_gate(patterns)
    if gate is None:
        return True
    db, caseless = gate
    no_vt, ascii_ = plain if plain is not None else (b"\x0b" not in raw, raw.isascii())
    if not no_vt or (caseless and not ascii_):
        return True
    hits: list[int] = []
    db.scan(raw, match_event_handler=lambda i, f, t, fl, ctx: hits.append(i))
    return bool(hits)


@functools.lru_cache(maxsize=None)
def _unless_re(name: str):
    """An ecosystem's implies_unless patterns as one bytes alternation (None when it has none)."""
    e = next(e for e in ecosystems() if e.name == name)
    if not e.implies_unless:
        return None
    for p in e.implies_unless:
        _compile(p, name)                       # each one checked, with its own error
    return _compile("|".join(f"(?:{p})" for p in e.implies_unless).encode(), name)


def present(ecos) -> set[str]:
    """The ecosystems whose commands may be printed: those seen, `generic`, and the assumed ones
    (`assumed_unless`: NVIDIA's tools, unless the log is a ROCm one with no NVIDIA in it)."""
    out = set(ecos) | {"generic"}
    for e in ecosystems():
        if e.assumed_unless and not out & set(e.assumed_unless):
            out.add(e.name)
    return out


def primary(ecos: list[str]) -> str:
    """The ecosystem advice is written for: the most specific one seen, else `generic`. A Python
    program that also shows native markers (nvcc, a .cu file) is still a Python program."""
    return lookup_order(ecos)[0]


# -- localisation: no command of an absent ecosystem ------------------------------------------------

_CLAUSE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])|;\s+")
def _split_items(text: str) -> list[str]:
    """The clause cut at commas (followed by whitespace) outside parentheses: one linear pass (a regex
    lookahead for the closing parenthesis was quadratic on comma-heavy text)."""
    out, depth, start, i, n = [], 0, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0 and i + 1 < n and text[i + 1].isspace():
            out.append(text[start:i])
            i += 1
            while i < n and text[i].isspace():
                i += 1
            start = i
            continue
        i += 1
    out.append(text[start:])
    return out
_OR = re.compile(r"^(?:[Oo]r|[Aa]nd)\s+")


@functools.lru_cache(maxsize=1)
def _command_set():
    """One re2 Set over every ecosystem's command patterns: which ecosystems a text names, in one pass."""
    import re2

    opts = re2.Options()
    opts.max_mem = 64 << 20
    s = re2.Set.SearchSet(opts)
    names = []
    for name, rx in _command_res().items():
        s.Add("|".join(f"(?:{c})" for c in next(e for e in ecosystems() if e.name == name).commands))
        names.append(name)
    s.Compile()
    return s, names


def foreign(text: str, present) -> list[str]:
    """The absent ecosystems whose commands this text names."""
    if not text:
        return []
    s, names = _command_set()
    return [names[i] for i in sorted(s.Match(text) or []) if names[i] not in present]


def cut(text: str, present) -> tuple[str, int]:
    """The text without its clauses that name an absent ecosystem's commands, and how many were cut.

    A foreign parenthetical goes alone; then a foreign option of a list ("reduce the batch, use X,
    or set Y") goes alone when the list's first item (the verb) stays; else the clause goes. A
    `backticked command` is never split."""
    if not text or not foreign(text, present):
        return text, 0
    spans: list[str] = []

    def protect(m):
        spans.append(m[0])
        return f"\x00{len(spans) - 1}\x00"

    def back(t: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m[1])], t)

    def bad(t: str) -> bool:
        return bool(foreign(back(t), present))

    work = re.sub(r"`[^`]*`", protect, text)
    dropped = 0

    def aside(m):                 # a foreign parenthetical goes alone: "(e.g. the matching torch wheel)"
        nonlocal dropped
        if bad(m[0]):
            dropped += 1
            return ""
        return m[0]

    work = re.sub(r"\s*\([^()]*\)", aside, work)
    work = re.sub(r"\s+([,;:]|\.(?!\.))", r"\1", work)
    if not bad(work):
        return back(work), dropped
    kept = []
    for clause in _CLAUSE.split(work):
        if not bad(clause):
            if clause.strip():
                kept.append(clause.strip())
            continue
        items = _split_items(clause.strip())
        good = [i for i in items if not bad(i)]
        dropped += len(items) - len(good)
        if len(items) > 1 and good and good[0] is items[0]:
            if len(good) == 1:
                kept.append(good[0])
            else:
                kept.append(", ".join(g.rstrip(".;, ") for g in good[:-1]) + ", or " + _OR.sub("", good[-1]))
    sentences = []
    for k in kept:
        k = _OR.sub("", k.rstrip(".;, ")) if not sentences else k.rstrip(".;, ")
        first = k.split(" ", 1)[0]
        sentences.append(k[:1].upper() + k[1:] if first.isalpha() and first.islower() else k)
    out = back(". ".join(sentences))
    return (out + "." if out else ""), dropped


def localise(d) -> None:
    """Cut foreign commands from fix and next step; a next step that lost any (or the generic one of
    an unexplained log) gets the ecosystem's own."""
    allowed = present(d.ecosystems)
    main = primary(d.ecosystems)
    d.fix, fix_cut = cut(d.fix, allowed)
    d.next_step, next_cut = cut(d.next_step, allowed)
    # an unexplained log (no signature, or only a wording guess) gets the generic next step; where
    # the log shows a framework, that framework's own next step for the family says more
    unexplained = not d.signature or d.signature.startswith("fallback.")
    if not d.next_step or (next_cut and len(d.next_step) < 60) or (unexplained and main != "generic"):
        own = ecosystem_next_step(main, d.family)
        if own and own not in d.next_step:
            d.next_step = (d.next_step + " " + own).strip() if d.next_step else own
    if fix_cut and not d.fix:
        d.fix = ("The signature's fix is written for another framework than this log's "
                 f"({main}); see the next step.")
    if fix_cut or next_cut:
        d.notes.append(f"advice written for {main}: {fix_cut + next_cut} clause(s) naming another "
                       "framework's commands were left out")


def ecosystem_next_step(name: str, family: str) -> str:
    by_name = {e.name: e for e in ecosystems()}
    e = by_name.get(name) or by_name["generic"]
    text = e.next_step.get(family) or e.next_step.get("default", "")
    return text


# -- reasoning rules --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    id: str
    families: tuple[str, ...]
    docs: str
    when: str
    let: tuple[tuple[str, str], ...]
    conclusion: str
    fix: str
    fix_for: tuple[tuple[str, str], ...]
    next_step: str
    next_step_for: tuple[tuple[str, str], ...]
    origin: str
    examples: tuple[dict, ...]


RULE_KEYS = {"id", "families", "docs", "when", "let", "conclusion", "fix", "fix_for", "next_step",
             "next_step_for", "origin", "example"}


def _load_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise AdviceError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise AdviceError(f"{path}: not valid TOML: {e}") from None


def load_rules(path: Path = RULES_FILE) -> tuple[tuple[Rule, ...], dict]:
    """The rules and the tables they read, validated: every expression parses, every template names
    known values, every rule has a firing and a non-firing example."""
    from signatures.taxonomy import FAMILIES, ORIGINS

    data = _load_toml(Path(path))
    tables = data.get("tables", {})
    rules, seen = [], set()
    eco = set(ecosystem_names())
    for raw in data.get("rule", []):
        rid = raw.get("id")
        where = f"{path}: rule {rid!r}"
        if not isinstance(rid, str) or rid in seen:
            raise AdviceError(f"{where}: needs a unique string id")
        seen.add(rid)
        unknown = set(raw) - RULE_KEYS
        if unknown:
            raise AdviceError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        for key in ("families", "docs", "when", "conclusion", "example"):
            if key not in raw:
                raise AdviceError(f"{where}: missing {key!r}")
        bad = [f for f in raw["families"] if f not in FAMILIES]
        if bad:
            raise AdviceError(f"{where}: unknown families {bad}")
        if raw.get("origin") and raw["origin"] not in ORIGINS:
            raise AdviceError(f"{where}: unknown origin {raw['origin']!r}")
        for key in ("fix_for", "next_step_for"):
            bad = [k for k in raw.get(key, {}) if k not in eco]
            if bad:
                raise AdviceError(f"{where}: {key} names unknown ecosystem(s) {bad} (see {FRAMEWORKS_FILE.name})")
        try:
            expr.parse(raw["when"])
            for name, e in raw.get("let", {}).items():
                expr.parse(e)
        except expr.ExprError as e:
            raise AdviceError(f"{where}: {e}") from None
        examples = raw["example"]
        if not any(ex.get("fires") for ex in examples) or all(ex.get("fires") for ex in examples):
            raise AdviceError(f"{where}: needs at least one example that fires and one that does not")
        rules.append(Rule(
            rid, tuple(raw["families"]), " ".join(raw["docs"].split()), raw["when"],
            tuple(raw.get("let", {}).items()), " ".join(raw["conclusion"].split()),
            " ".join(raw.get("fix", "").split()), tuple((k, " ".join(v.split())) for k, v in raw.get("fix_for", {}).items()),
            " ".join(raw.get("next_step", "").split()),
            tuple((k, " ".join(v.split())) for k, v in raw.get("next_step_for", {}).items()),
            raw.get("origin", ""), tuple(examples)))
    return tuple(rules), tables


@functools.lru_cache(maxsize=1)
def default_rules():
    """rules.toml's rules, then the origin rules (origin.toml), with rules.toml's tables."""
    from diagnose.advice.origin import origin_rules

    rules, tables = load_rules(RULES_FILE)
    return rules + origin_rules(), tables


def _num_cc(value):
    """'8.6' / '9.0a' -> 8.6 / 9.0 for comparisons."""
    m = re.match(r"(\d+)\.(\d)", str(value))
    return float(f"{m[1]}.{m[2]}") if m else None


def _version(text) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", str(text))[:3])


def _funcs(tables: dict, lines: list[str]) -> dict:
    drivers = tables.get("driver_min", {})     # CUDA "12.8" -> minimum Linux driver "570.26"
    wheels = tables.get("torch_wheels", {})    # CUDA "12.8" -> "cu128"

    def newest_cuda(driver):
        """The newest CUDA a driver version supports (from a driver like '535.54' or an API int 12020)."""
        d = str(driver)
        if re.fullmatch(r"\d{4,5}", d):           # cudaDriverGetVersion style: 11040 -> 11.4
            n = int(d)
            return float(f"{n // 1000}.{(n % 1000) // 10}")
        ok = [c for c, need in drivers.items() if _version(need) <= _version(d)]
        if not ok:
            raise expr.Missing("newest_cuda")
        return max((float(c) for c in ok))

    def wheel(cuda):
        ok = [c for c in wheels if float(c) <= float(cuda) + 1e-9]
        if not ok:
            raise expr.Missing("wheel")
        return wheels[max(ok, key=float)]

    joined: list[bytes] = []

    def text() -> bytes:          # the lines joined and encoded once, searched by every seen()/grab()
        if not joined:            # of the rules (re2 searches the UTF-8 bytes of a str either way)
            joined.append("\n".join(lines).encode("utf-8"))
        return joined[0]

    plain: list[tuple[bool, bool]] = []

    def search(pattern):
        rx = _compile(pattern, "rule")
        if isinstance(rx, re.Pattern):
            return rx.search(text().decode("utf-8"))
        raw = text()
        if not plain:
            plain.append((b"\x0b" not in raw, raw.isascii()))
        if not _hs_may((pattern,), raw, plain[0]):       # most rules' patterns are in no log
            return None
        return rx.search(raw)

    def seen(pattern):
        return search(pattern) is not None

    def grab(pattern):
        """The first group of the first match in the log (a fact the signature did not capture)."""
        m = search(pattern)
        if m is None:
            raise expr.Missing("grab")
        g = m.group(1) if m.groups() else m.group(0)
        return g.decode("utf-8") if isinstance(g, bytes) else g

    return {"newest_cuda": newest_cuda, "wheel": wheel, "seen": seen, "grab": grab}


_FRAME = re.compile(r'File "([^"]+)", line \d+')


def names_of(d, snapshot: dict | None, frames: list[str] | None = None, lines=()) -> dict:
    """The values a rule may name: the diagnosis's facts (CCs as numbers), env_* from the snapshot,
    what the scan saw (ecosystems, dtypes, the innermost traceback frame)."""
    names: dict = {}
    dtypes = []
    for k, v in d.facts.items():
        kind = fact_kind(k)
        if kind == "cc":
            v = _num_cc(v)
        elif kind == "dtype" and isinstance(v, str):
            dtypes.append(v)
        names[k] = v
    names["dtypes"] = dtypes
    names["family"], names["origin"], names["signature"] = d.family, d.origin or "", d.signature or ""
    names["ecosystems"] = list(d.ecosystems)
    names["ecosystem"] = primary(d.ecosystems)
    files = [m[1] for t in lines if 'File "' in t for m in [_FRAME.search(t)] if m]   # `in` first: most lines hold no frame
    if files:                     # every traceback frame in the log, and those of the program itself
        names["frame_count"] = len(files)
        names["user_frame_count"] = sum(1 for f in files if not LIBRARY_PATH.search(f))
    frames = [f for f in (frames or []) if f]
    if frames:
        m = re.search(r'File "([^"]+)"', frames[-1])
        names["innermost_frame"] = m[1] if m else frames[-1]
        names["frame_in_library"] = bool(LIBRARY_PATH.search(names["innermost_frame"]))
    snap = snapshot or {}
    gpus = [g for g in snap.get("gpus") or [] if isinstance(g, dict)]
    if gpus:
        g = gpus[0]
        for key, name in (("memory_total_bytes", "env_total_bytes"), ("memory_free_bytes", "env_free_bytes"),
                          ("shared_memory_per_block_optin_bytes", "env_smem_optin_bytes"),
                          ("shared_memory_per_block_bytes", "env_smem_block_bytes"),
                          ("max_threads_per_block", "env_max_threads_per_block"), ("name", "env_gpu_name")):
            if g.get(key) is not None:
                names[name] = g[key]
        if g.get("compute_capability"):
            names["env_cc"] = _num_cc(g["compute_capability"])
    drv = snap.get("driver") or {}
    if drv.get("version"):
        names["env_driver_version"] = drv["version"]
    if drv.get("cuda_version"):
        names["env_driver_cuda"] = float(_num_cc(drv["cuda_version"]) or 0) or None
    torch = (snap.get("frameworks") or {}).get("torch") or {}
    if torch.get("cuda"):
        names["env_torch_cuda"] = _num_cc(torch["cuda"])
    if torch.get("version"):
        names["env_torch_version"] = torch["version"]
    texts = getattr(d, "fact_text", None) or {}
    if texts:                     # how the log wrote its sizes, so a rule says "2.26 GiB" as the log does
        names["_fact_text"] = {k: t for k, t in texts.items() if k in d.facts}
    return {k: v for k, v in names.items() if v is not None}


def show(name: str, value, text: str | None = None) -> str:
    """A value as a template prints it: sizes readable (as the log wrote them when it did), CCs as
    sm_XY, ratios with sense."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    kind = fact_kind(name)
    if kind == "bytes" and isinstance(value, (int, float)):
        return render(name, int(value), text) if text else format_bytes(int(value))
    if kind == "cc" and isinstance(value, float):
        return f"sm_{value:.1f}".replace(".", "")
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        if abs(value) >= 10:
            return f"{value:.0f}"
        return f"{value:.2f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.2g}"
    return render(name, value)


def fill(template: str, names: dict) -> str | None:
    """The template with {name} filled, or None when a name it needs is unknown."""
    missing = [n for n in re.findall(r"\{(\w+)\}", template) if n not in names]
    if missing:
        return None
    texts = names.get("_fact_text") or {}
    return re.sub(r"\{(\w+)\}", lambda m: show(m[1], names[m[1]], texts.get(m[1])), template)


def lookup_order(ecos: list[str]) -> list[str]:
    """Where a variant is looked for: the log's ecosystems, most specific first, or `generic` when
    none is (a Python log with no framework in sight); `native` advice (./app, cuda-gdb) only for a
    log with no Python in it."""
    platforms = {e.name for e in ecosystems() if e.platform}
    specific = [e for e in ecos if e not in platforms and not (e == "native" and "python" in ecos)]
    return specific or ["generic"]


def _variant(default: str, variants, ecos: list[str], names: dict) -> str | None:
    table = dict(variants)
    for e in lookup_order(ecos):
        if e in table:
            text = fill(table[e], names)
            if text:
                return text
    return fill(default, names) if default else None


@dataclass
class Fired:
    rule: Rule
    conclusion: str
    fix: str | None
    next_step: str | None


def evaluate_rules(d, snapshot: dict | None = None, frames=None, lines=None, rules=None) -> list[Fired]:
    """The rules whose condition holds for this diagnosis, in file order (pure)."""
    rules, tables = rules or default_rules()
    names = names_of(d, snapshot, frames, lines or ())
    funcs = _funcs(tables, list(lines or []))
    every = expr.functions(funcs)          # the built-in and the caller's functions, merged once
    fired = []
    for rule in rules:
        if d.family not in rule.families:
            continue
        local = dict(names)
        scope = {**local, "__funcs__": every}     # what expr.evaluate builds for each expression
        try:
            for name, e in rule.let:
                try:
                    scope[name] = local[name] = expr.evaluate_in(e, scope)
                except expr.Missing:
                    pass
            if not expr.evaluate_in(rule.when, scope):
                continue
        except expr.Missing:
            continue
        conclusion = fill(rule.conclusion, local)
        if conclusion is None:
            continue
        fired.append(Fired(rule, conclusion,
                           _variant(rule.fix, rule.fix_for, d.ecosystems, local),
                           _variant(rule.next_step, rule.next_step_for, d.ecosystems, local)))
    return fired


def reason(d, snapshot: dict | None = None, frames=None, lines=None) -> None:
    """Apply the rules that hold: conclusions to `reasoning`, the first fix/next step/origin chosen wins."""
    fix_set = next_set = origin_set = False
    allowed = present(d.ecosystems)
    for f in evaluate_rules(d, snapshot, frames, lines):
        if f.rule.origin and origin_set and f.rule.origin != d.origin:
            continue        # a later reading of the origin the first one overrules: it would contradict it
        d.reasoning.append(f.conclusion)
        # a rule's advice counts only if something of it survives in the log's own terms
        if f.fix and not fix_set and cut(f.fix, allowed)[0]:
            d.fix, fix_set = f.fix, True
        if f.next_step and not next_set and cut(f.next_step, allowed)[0]:
            d.next_step, next_set = f.next_step, True
        if f.rule.origin and not origin_set:
            # the first rule that reads an origin decides it, also when it agrees with the signature's
            if f.rule.origin != d.origin:
                d.reasoning.append(f"origin {f.rule.origin}, not {d.origin or '-'} ({f.rule.id})")
            d.origin, origin_set = f.rule.origin, True


def advise(d, snapshot: dict | None = None, frames=None, lines=None):
    """The diagnosis with the rules applied and its advice in the log's own ecosystem (a copy)."""
    if d.family in ("none",):
        return d
    d = copy.copy(d)
    d.facts, d.notes, d.reasoning = dict(d.facts), list(d.notes), list(d.reasoning)
    reason(d, snapshot, frames, lines)
    localise(d)
    return d
