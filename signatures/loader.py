"""Load and validate signature files (TOML, one file per family is the convention).

Every problem stops loading with a `SignatureError` naming the file, the signature and what is wrong.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from signatures.model import Example, Signature

try:                      # Python 3.11+: the parser lives in re._parser; sre_parse is a deprecated alias
    from re import _parser as sre_parse
except ImportError:       # pragma: no cover
    import sre_parse
from signatures.taxonomy import FAMILIES, NON_FAILURE, ORIGINS, ROLES

DATA_DIR = Path(__file__).parent / "data"
REQUIRED = ("id", "origin", "frameworks", "role", "priority", "title", "patterns", "explanation", "fix", "next_step")
KNOWN = set(REQUIRED) | {"family", "references", "match", "no_match", "in_warnings"}
MAX_PATTERN_LEN = 2000


class SignatureError(ValueError):
    pass


def _where(path: Path, sig_id: str | None) -> str:
    return f"{path}: signature {sig_id!r}" if sig_id else f"{path}"


def _star_height(parsed, depth=0) -> int:
    """Nesting depth of unbounded repeats: 2 or more means catastrophic backtracking in `re`."""
    worst = depth
    for op, av in parsed:
        if op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            inner = depth + (1 if hi == sre_parse.MAXREPEAT or hi > 64 else 0)
            worst = max(worst, _star_height(sub, inner))
        elif op == sre_parse.SUBPATTERN:
            worst = max(worst, _star_height(av[-1], depth))
        elif op == sre_parse.BRANCH:
            for branch in av[1]:
                worst = max(worst, _star_height(branch, depth))
        elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            worst = max(worst, _star_height(av[1], depth))
    return worst


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
    if _star_height(parsed) >= 2:
        return "nested unbounded repetition such as (a+)+ or (?:\\w+\\s?)+ can backtrack catastrophically; flatten it"
    if "\n" in pattern or "\\n" in pattern:
        return "patterns match within one line; \\n is not allowed"
    try:
        import re2
        re2.compile(pattern.encode())
    except ImportError:
        pass
    except Exception as e:  # re2.error
        return f"re2 rejects it: {e}"
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
    if family not in FAMILIES or family in NON_FAILURE and raw["role"] != "benign":
        raise SignatureError(f"{_where(path, sig_id)}: unknown family {family!r} (see signatures/taxonomy.py)")
    if raw["origin"] not in ORIGINS and not (raw["role"] == "benign" and raw["origin"] == "none"):
        raise SignatureError(f"{_where(path, sig_id)}: unknown origin {raw['origin']!r}; one of {', '.join(ORIGINS)}")
    if raw["role"] not in ROLES:
        raise SignatureError(f"{_where(path, sig_id)}: role must be one of {', '.join(ROLES)}, not {raw['role']!r}")
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
    examples = []
    for ex in raw.get("match", []):
        if not isinstance(ex, dict) or not isinstance(ex.get("line"), str):
            raise SignatureError(f"{_where(path, sig_id)}: each [[signature.match]] needs a 'line' string")
        examples.append(Example(ex["line"], dict(ex.get("facts", {}))))
    if not examples:
        raise SignatureError(f"{_where(path, sig_id)}: needs at least one [[signature.match]] example")
    return Signature(
        id=sig_id, family=family, origin=raw["origin"],
        frameworks=_as_tuple(raw["frameworks"], path, sig_id, "frameworks"),
        role=raw["role"], priority=raw["priority"], title=raw["title"].strip(), patterns=patterns,
        explanation=_prose(raw["explanation"]), fix=tuple(_prose(f) for f in fixes), next_step=_prose(raw["next_step"]),
        references=_as_tuple(raw.get("references", []), path, sig_id, "references"),
        examples=tuple(examples), counterexamples=_as_tuple(raw.get("no_match", []), path, sig_id, "no_match"),
        in_warnings=bool(raw.get("in_warnings", False)), file=str(path),
    )


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
    sigs: list[Signature] = []
    seen: dict[str, str] = {}
    for path in signature_files(extra_dirs):
        for sig in load_file(path):
            if sig.id in seen:
                raise SignatureError(f"{path}: signature {sig.id!r}: duplicate id (also in {seen[sig.id]})")
            seen[sig.id] = str(path)
            sigs.append(sig)
    return sigs
