"""Load and validate signature files (TOML, one file per family is the convention).

Every problem stops loading with a `SignatureError` naming the file, the signature and what is wrong.
"""
from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from signatures.model import Example, Signature

try:                      # Python 3.11+: the parser lives in re._parser; sre_parse is a deprecated alias
    from re import _parser as sre_parse
except ImportError:       # pragma: no cover
    import sre_parse
from signatures.taxonomy import ECOSYSTEMS, FAMILIES, NON_FAILURE, NOT_GPU_PREFIX, ORIGINS, ROLES

DATA_DIR = Path(__file__).parent / "data"
REQUIRED = ("id", "origin", "frameworks", "role", "priority", "title", "patterns", "explanation", "fix", "next_step")
KNOWN = set(REQUIRED) | {"family", "references", "match", "no_match", "in_warnings", "tier", "fix_for", "next_step_for", "reach",
                         "context_reach", "context_when"}
TIERS = ("hard", "support", "context")   # context: never a failure alone; explains one beside it
REACHES = ("around", "line", "after", "before")
# data the generated signatures are made of (the code tables, and the fallback's fix texts they reuse)
_TABLES = (Path(__file__).parent / "codes.toml", Path(__file__).parent / "fallback.toml")
MAX_PATTERN_LEN = 2000
CONTEXT_REACH = 20      # lines either side of an unexplained failure that context evidence explains


class SignatureError(ValueError):
    pass


def _where(path: Path, sig_id: str | None) -> str:
    return f"{path}: signature {sig_id!r}" if sig_id else f"{path}"


def check_pattern(pattern: str) -> str | None:
    """None when the pattern is usable; else what is wrong with it."""
    if len(pattern) > MAX_PATTERN_LEN:
        return f"pattern longer than {MAX_PATTERN_LEN} characters"
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as e:
        return f"bad regex: {e}"
    if re.search(r"\(\?<?[=!]|\\[1-9]|\(\?P=", pattern):
        return "lookaround and backreferences are not allowed (the matcher is linear-time: re2/hyperscan)"
    # Nested repeats such as (a+)+ would backtrack catastrophically in Python `re`; the matcher
    # never runs `re` on log text (hyperscan gate, re2 captures: both linear), so they are allowed.
    if "\n" in pattern or "\\n" in pattern:
        return "patterns match within one line; \\n is not allowed"
    try:
        import re2
        re2.compile(pattern.encode())
    except ImportError:
        pass
    except Exception as e:  # re2.error
        return f"re2 rejects it: {e}"
    return _hyperscan_problem(pattern)


def _hyperscan_problem(pattern: str) -> str | None:
    """A pattern with no required literal goes into the hyperscan gate whole: it must compile there."""
    from signatures.literals import required_literals

    if required_literals(pattern):
        return None
    if not pattern.isascii():
        return "a pattern with no required literal must be ASCII (the gate scans bytes); give it a literal of 4+ characters"
    try:
        import hyperscan
    except ImportError:
        return None
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(expressions=[pattern.encode()], ids=[0], elements=1,
                   flags=[hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY])
    except hyperscan.error as e:
        return f"hyperscan rejects it ({e}); give it a literal of 4+ characters that every match contains"
    return None


def _prose(text: str) -> str:
    """TOML multi-line prose: single newlines joined, blank lines kept as paragraph breaks."""
    paras = [" ".join(line.strip() for line in para.splitlines()) for para in text.strip().split("\n\n")]
    return "\n\n".join(p for p in paras if p)


def _as_tuple(value, path, sig_id, key) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise SignatureError(f"{_where(path, sig_id)}: {key!r} must be a string or a list of strings")


def _build(raw: dict, default_family: str | None, path: Path) -> Signature:
    sig_id = raw.get("id")
    if not isinstance(sig_id, str) or not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", sig_id or ""):
        raise SignatureError(f"{_where(path, sig_id)}: 'id' must be lower-case letters, digits, '.', '_' or '-'")
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise SignatureError(f"{_where(path, sig_id)}: missing field(s) {', '.join(missing)}")
    unknown = sorted(set(raw) - KNOWN)
    if unknown:
        raise SignatureError(f"{_where(path, sig_id)}: unknown field(s) {', '.join(unknown)}")
    family = raw.get("family", default_family)
    # `none` is for benign signatures only; `unknown` for a known failure that is not a GPU failure
    # (id `not-gpu.*`, role root: signatures/data/not-gpu.toml)
    not_gpu = family == "unknown" and sig_id.startswith(NOT_GPU_PREFIX) and raw["role"] == "root"
    if family not in FAMILIES or family in NON_FAILURE and raw["role"] != "benign" and not not_gpu:
        raise SignatureError(f"{_where(path, sig_id)}: unknown family {family!r} (see signatures/taxonomy.py)")
    if sig_id.startswith(NOT_GPU_PREFIX) and not not_gpu:
        raise SignatureError(f"{_where(path, sig_id)}: a {NOT_GPU_PREFIX}* signature has family 'unknown' and role 'root'")
    if raw["origin"] not in ORIGINS and not (raw["role"] == "benign" and raw["origin"] == "none"):
        raise SignatureError(f"{_where(path, sig_id)}: unknown origin {raw['origin']!r}; one of {', '.join(ORIGINS)}")
    if raw["role"] not in ROLES:
        raise SignatureError(f"{_where(path, sig_id)}: role must be one of {', '.join(ROLES)}, not {raw['role']!r}")
    if raw.get("tier", "hard") not in TIERS:
        raise SignatureError(f"{_where(path, sig_id)}: tier must be one of {', '.join(TIERS)}, not {raw['tier']!r}")
    if raw.get("reach", "around") not in REACHES or ("reach" in raw and raw["role"] != "benign"):
        raise SignatureError(f"{_where(path, sig_id)}: reach is for benign signatures: one of {', '.join(REACHES)}")
    if "context_reach" in raw and (raw.get("tier") != "context" or not isinstance(raw["context_reach"], int)
                                   or not 1 <= raw["context_reach"] <= 200):
        raise SignatureError(f"{_where(path, sig_id)}: 'context_reach' (lines, 1..200) is for tier = \"context\" only")
    when = raw.get("context_when", {})
    if "context_when" in raw and (raw.get("tier") != "context" or not isinstance(when, dict)
                                  or set(when) != {"pattern", "probe"}):
        raise SignatureError(f"{_where(path, sig_id)}: 'context_when' (a table: pattern, probe) is for tier = \"context\" only")
    if when:
        import re2
        try:
            matched = re2.search(when["pattern"], when["probe"]) is not None
        except re2.error as e:
            raise SignatureError(f"{_where(path, sig_id)}: context_when pattern does not compile in re2: {e}") from None
        if not matched:
            raise SignatureError(f"{_where(path, sig_id)}: context_when probe {when['probe']!r} does not match its pattern")
    if not isinstance(raw["priority"], int) or not 0 <= raw["priority"] <= 100:
        raise SignatureError(f"{_where(path, sig_id)}: priority must be an integer 0..100")
    patterns = _as_tuple(raw["patterns"], path, sig_id, "patterns")
    for p in patterns:
        problem = check_pattern(p)
        if problem:
            raise SignatureError(f"{_where(path, sig_id)}: pattern {p!r}: {problem}")
    groups = set()
    for p in patterns:
        groups |= set(re.compile(p).groupindex)
    fixes = _as_tuple(raw["fix"], path, sig_id, "fix")
    for template in fixes:
        for name in re.findall(r"\{(\w+)\}", template):
            if name not in groups:
                raise SignatureError(f"{_where(path, sig_id)}: fix uses {{{name}}} but no pattern captures it")
    fix_for, next_step_for = _variants(raw, path, sig_id, groups)
    examples = []
    late_no_match: list[str] = []
    for ex in raw.get("match", []):
        if not isinstance(ex, dict) or not isinstance(ex.get("line"), str):
            raise SignatureError(f"{_where(path, sig_id)}: each [[signature.match]] needs a 'line' string")
        extra = sorted(set(ex) - {"line", "facts", "no_match"})
        if extra:
            raise SignatureError(f"{_where(path, sig_id)}: [[signature.match]] has unknown key(s) {', '.join(extra)}")
        # TOML puts a `no_match = [...]` written after a [[signature.match]] table inside that table:
        # it still means the signature's counterexamples.
        late_no_match += list(_as_tuple(ex.get("no_match", []), path, sig_id, "no_match"))
        examples.append(Example(ex["line"], dict(ex.get("facts", {}))))
    if not examples:
        raise SignatureError(f"{_where(path, sig_id)}: needs at least one [[signature.match]] example")
    # every pattern is shown working on a line, and every signature says what it must not take: a
    # pattern no example exercises is knowledge no test holds
    for p in patterns:
        rx = re.compile(p)
        if not any(rx.search(ex.line) for ex in examples):
            raise SignatureError(f"{_where(path, sig_id)}: pattern {p!r} has no [[signature.match]] example")
    no_match = _as_tuple(raw.get("no_match", []), path, sig_id, "no_match") + tuple(late_no_match)
    if not no_match:
        raise SignatureError(f"{_where(path, sig_id)}: needs at least one no_match line (a near miss it must not take)")
    return Signature(
        id=sig_id, family=family, origin=raw["origin"],
        frameworks=_as_tuple(raw["frameworks"], path, sig_id, "frameworks"),
        role=raw["role"], priority=raw["priority"], title=raw["title"].strip(), patterns=patterns,
        explanation=_prose(raw["explanation"]), fix=tuple(_prose(f) for f in fixes), next_step=_prose(raw["next_step"]),
        references=_as_tuple(raw.get("references", []), path, sig_id, "references"),
        examples=tuple(examples),
        counterexamples=no_match,
        in_warnings=bool(raw.get("in_warnings", False)), file=str(path), tier=raw.get("tier", "hard"),
        reach=raw.get("reach", "around"), context_reach=int(raw.get("context_reach", CONTEXT_REACH)),
        context_when=when.get("pattern", ""), context_probe=when.get("probe", ""),
        fix_for=fix_for, next_step_for=next_step_for,
    )


def _variants(raw: dict, path: Path, sig_id: str, groups: set):
    """`fix_for` / `next_step_for`: per-ecosystem variants (keys from signatures.taxonomy.ECOSYSTEMS)."""
    out = []
    for key in ("fix_for", "next_step_for"):
        table = raw.get(key, {})
        if not isinstance(table, dict):
            raise SignatureError(f"{_where(path, sig_id)}: {key!r} must be a table of ecosystem = text")
        pairs = []
        for eco, value in table.items():
            if eco not in ECOSYSTEMS:
                raise SignatureError(f"{_where(path, sig_id)}: {key} names unknown ecosystem {eco!r}; "
                                     f"one of {', '.join(ECOSYSTEMS)}")
            texts = _as_tuple(value, path, sig_id, f"{key}.{eco}")
            for template in texts:
                for name in re.findall(r"\{(\w+)\}", template):
                    if name not in groups:
                        raise SignatureError(f"{_where(path, sig_id)}: {key}.{eco} uses {{{name}}} but no pattern captures it")
            texts = tuple(_prose(t) for t in texts)
            pairs.append((eco, texts if key == "fix_for" else texts[0]))
        out.append(tuple(pairs))
    return out[0], out[1]


def load_file(path: Path) -> list[Signature]:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SignatureError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SignatureError(f"{path}: not valid TOML: {e}") from None
    default_family = data.get("family")
    raws = data.get("signature", [])
    if not isinstance(raws, list) or not raws:
        raise SignatureError(f"{path}: no [[signature]] tables")
    return [_build(raw, default_family, path) for raw in raws]


def signature_files(extra_dirs=()) -> list[Path]:
    files = sorted(DATA_DIR.glob("*.toml"))
    for d in extra_dirs:
        d = Path(d)
        files += [d] if d.is_file() else sorted(d.glob("*.toml"))
    return files


def load_all(extra_dirs=()) -> list[Signature]:
    """Every signature, validated. Validation (regex parsing, re2 and hyperscan checks) is cached
    per set of file contents, so an unchanged knowledge base loads in milliseconds."""
    from signatures import cache

    files = signature_files(extra_dirs)
    parts = []
    for path in files + list(_TABLES):
        try:
            parts += [str(path).encode(), path.read_bytes()]
        except OSError:
            return _load_all(files)       # the slow path names the unreadable file
    data = cache.cached_json("signatures", parts, lambda: [_to_json(s) for s in _load_all(files)])
    return [_from_json(d) for d in data]


_TUPLES = ("frameworks", "patterns", "fix", "references", "counterexamples")


def _to_json(sig: Signature) -> dict:
    return dataclasses.asdict(sig)


def _from_json(d: dict) -> Signature:
    d = dict(d)
    for k in _TUPLES:
        d[k] = tuple(d[k])
    d["examples"] = tuple(Example(e["line"], dict(e["facts"])) for e in d["examples"])
    return Signature(**d)


def load_code_tables() -> list[Signature]:
    """The support-tier signatures generated from the status-code tables (signatures/codes.toml)."""
    from signatures import codes

    try:
        raws = codes.raw_signatures()
    except codes.CodeTableError as e:
        raise SignatureError(str(e)) from None
    return [_build(raw, None, codes.TABLE) for raw in raws]


def _load_all(files: list[Path]) -> list[Signature]:
    sigs: list[Signature] = []
    seen: dict[str, str] = {}
    groups = [(path, lambda path=path: load_file(path)) for path in files]
    groups.append((_TABLES[0], load_code_tables))
    for path, load in groups:
        for sig in load():
            if sig.id in seen:
                raise SignatureError(f"{path}: signature {sig.id!r}: duplicate id (also in {seen[sig.id]})")
            seen[sig.id] = str(path)
            sigs.append(sig)
    return sigs
