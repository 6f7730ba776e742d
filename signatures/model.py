"""Plain data of the knowledge base: a signature, and a match of one against a log line."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Example:
    line: str
    facts: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Signature:
    id: str
    family: str
    origin: str
    frameworks: tuple[str, ...]
    role: str
    priority: int
    title: str
    patterns: tuple[str, ...]
    explanation: str
    fix: tuple[str, ...]          # templates; the first whose facts are all present is used
    next_step: str
    references: tuple[str, ...]
    examples: tuple[Example, ...]
    counterexamples: tuple[str, ...]
    in_warnings: bool = False     # still a failure when logged at warning/info level
    fix_for: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (ecosystem, fix templates) for logs of it
    next_step_for: tuple[tuple[str, str], ...] = ()         # (ecosystem, next step)
    file: str = ""
    # evidence tier: `hard` names the failure; `support` points at a family without naming the
    # failure (a traceback frame in an autotuner, a status code): used only when no hard root is found;
    # `context` never shows a failure on its own (the source line of a check), it only explains an
    # unexplained failure just after it (engine.py `_warned`)
    tier: str = "hard"
    # what a benign signature excuses: `around` (the failures logged just before it: a fallback's
    # caught exception) or `line` (its own line only: an informational vendor code like Xid 63)
    reach: str = "around"
    context_reach: int = 20       # context: lines either side of the failure it may explain
    # context: an re2 pattern the unexplained failure's root line must match for this evidence to
    # explain it ("" = any failure), and a failure line it explains (`diagnose signatures check` puts
    # each example above it, and above a bare AssertionError, which it must then not explain)
    context_when: str = ""
    context_probe: str = ""


@dataclass
class Match:
    """One signature matched on one line (numbers are 1-based lines of the original file)."""
    signature: Signature
    line: int
    text: str
    facts: dict
    demoted: bool = False         # on a warning/info-level line and the signature does not count there

    @property
    def family(self) -> str:
        return self.signature.family
