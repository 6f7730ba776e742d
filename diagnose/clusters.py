"""Group unexplained error lines into templates, so a maintainer sees which signature to write next."""
from __future__ import annotations

from dataclasses import dataclass, field

import re2
from signatures.normalise import strip_prefix
from signatures.taxonomy import is_not_gpu

# Order matters: sizes before plain numbers ("2.00 GiB" -> <SIZE>, not "<NUM> GiB").
MASKS = [
    (re2.compile(r"(?:[A-Za-z]:)?(?:/[\w.+@-]+){2,}/?|(?:\.{1,2}/)[\w./+@-]+"), "<PATH>"),
    (re2.compile(r"\b0x[0-9a-fA-F]+\b"), "<HEX>"),
    (re2.compile(r"\b[0-9a-f]{12,}\b"), "<HASH>"),
    (re2.compile(r"\b\d+(?:\.\d+)?\s*(?:[KMGT]i?B|bytes|B)\b"), "<SIZE>"),
    (re2.compile(r"(?:torch\.Size\()?\[\s*\d+(?:\s*,\s*\d+)*\s*\]\)?|\(\s*\d+(?:\s*[x,]\s*\d+)+\s*\)|\b\d+(?:x\d+)+\b"), "<SHAPE>"),
    (re2.compile(r"'[^']{0,200}'|\"[^\"]{0,200}\""), "<STR>"),
    (re2.compile(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"), "<NUM>"),
]

_SPACES = re2.compile(r"\s+")


def template(line: str) -> str:
    t = strip_prefix(line).strip()
    for rx, mask in MASKS:
        t = rx.sub(mask, t)
    return _SPACES.sub(" ", t)[:300]


@dataclass
class Cluster:
    template: str
    count: int = 0
    files: list[str] = field(default_factory=list)
    example: str = ""


def cluster(diagnoses, min_count: int = 1, max_examples: int = 5) -> list[Cluster]:
    """Templates of the root/evidence lines of logs no signature explained (unknown, or only guessed
    from the wording), most frequent first."""
    groups: dict[str, Cluster] = {}
    for d in diagnoses:
        guessed = (d.signature or "").startswith("fallback.")
        # a known failure that is no GPU failure (not-gpu.*: host RAM) has its signature already
        if (d.family != "unknown" and not guessed) or d.error or is_not_gpu(d.family, d.signature):
            continue
        lines = [d.root] if d.root else []
        lines += [e for e in d.evidence if not d.root or e.line != d.root.line][-5:]
        seen_here = set()
        for ln in lines:
            t = template(ln.text)
            if not t or t in seen_here or t.startswith("Traceback (most recent call last)"):
                continue
            seen_here.add(t)
            c = groups.setdefault(t, Cluster(t, example=ln.text.strip()[:300]))
            c.count += 1
            if len(c.files) < max_examples:
                c.files.append(f"{d.path}:{ln.line}")
    out = [c for c in groups.values() if c.count >= min_count]
    out.sort(key=lambda c: (-c.count, c.template))
    return out
