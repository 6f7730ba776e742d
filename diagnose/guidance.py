"""What to check next when a diagnosis is uncertain: the questions a senior kernel engineer asks, in order.

`questions(diagnosis, findings)` is a pure function of the diagnosis (its root line, evidence, chain,
ecosystems) and the environment findings; the questions themselves are data (guidance.toml), their
commands written in the log's ecosystem. Each question cites the log line that prompted it and says why it
comes at that point: cheap checks that rule out a whole class of causes first, slow ones last.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from diagnose.model import Diagnosis

UNCERTAIN_BELOW = 0.6


@dataclass(frozen=True)
class Question:
    ask: str          # the question, as a reviewer would put it
    why: str          # what in the log prompts it and why it comes now
    command: str = "" # the exact thing to run, when there is one
    line: int | None = None   # the log line that prompted it


def uncertain(d: Diagnosis) -> bool:
    """Guidance is shown for failures no signature explains and for low-confidence diagnoses (not for a
    known failure that is no GPU failure: a not-gpu.* signature, host RAM exhausted)."""
    from signatures.taxonomy import is_not_gpu

    if is_not_gpu(d.family, d.signature):
        return d.confidence < UNCERTAIN_BELOW
    return d.family == "unknown" or (d.family != "none" and d.confidence < UNCERTAIN_BELOW)


GUIDANCE_FILE = Path(__file__).parent / "guidance.toml"


@dataclass(frozen=True)
class _Spec:
    key: str
    pattern: object        # compiled re2 pattern over one log line
    ask: str
    why: str
    command: str
    command_for: tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=1)
def specs() -> tuple[_Spec, ...]:
    """The questions of guidance.toml, in order; a bad entry names the file and the key."""
    import re2

    try:
        data = tomllib.loads(GUIDANCE_FILE.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{GUIDANCE_FILE}: {e}") from None
    out = []
    for raw in data.get("question", []):
        key = raw.get("key")
        unknown = set(raw) - {"key", "pattern", "ask", "why", "command", "command_for"}
        if not key or unknown or not all(raw.get(k) for k in ("pattern", "ask", "why")):
            raise ValueError(f"{GUIDANCE_FILE}: question {key!r}: needs key, pattern, ask, why; unknown {sorted(unknown)}")
        try:
            rx = re2.compile(raw["pattern"])
        except Exception as e:
            raise ValueError(f"{GUIDANCE_FILE}: question {key!r}: bad pattern: {e}") from None
        out.append(_Spec(key, rx, raw["ask"], raw["why"], raw.get("command", ""),
                         tuple(raw.get("command_for", {}).items())))
    return tuple(out)


def _command(spec: _Spec, d: Diagnosis) -> str:
    """The question's command in the log's ecosystem; none when it would name an absent framework."""
    from diagnose.advice import foreign, present as allowed

    present = allowed(d.ecosystems)
    variants = dict(spec.command_for)
    for eco in d.ecosystems:
        if eco in variants and not foreign(variants[eco], present):
            return variants[eco]
    return spec.command if spec.command and not foreign(spec.command, present) else ""


def _first(d: Diagnosis, pattern):
    """The first log line (number, text) matching a pattern: the root line first, then the evidence."""
    candidates = ([d.root] if d.root else []) + list(d.evidence) + [c for c in d.chain]
    for item in candidates:
        if pattern.search(item.text):
            return item.line, item.text
    if d.error and pattern.search(d.error):
        return None, d.error
    return None


def _cite(hit) -> str:
    line, text = hit
    text = text.strip()
    text = text if len(text) <= 90 else text[:87] + "..."
    return f"line {line} reads “{text}”" if line else f"the input reports “{text}”"


def questions(d: Diagnosis, findings: list | None = None) -> list[Question]:
    """The ordered checks for an uncertain diagnosis (also usable for any diagnosis)."""
    out: list[Question] = []
    if d.error:
        out.append(Question(
            "Is the log complete?",
            f"the input could not be read in full ({d.error}); a cut log hides the real root cause, "
            "so get the whole log before reasoning about it."))

    for f in findings or []:
        if isinstance(f, dict) and str(f.get("severity", "")).lower() in ("error", "critical", "fail"):
            out.append(Question(
                f"Does the environment problem explain it: {f.get('message', '')}?",
                "the environment snapshot of this task flags it; an environment fault makes every kernel "
                "fail and is cheaper to rule out than any code.", str(f.get("fix", "") or "")))

    for spec in specs():
        if hit := _first(d, spec.pattern):
            out.append(Question(spec.ask, spec.why.replace("{cite}", _cite(hit)), _command(spec, d), hit[0]))
    if not any(q.line for q in out):
        root = f"the root line {d.root.line} (“{d.root.text.strip()[:80]}”)" if d.root else "no line"
        out.append(Question(
            "What is the first error in the log, not the last?",
            f"nothing in {root} names a known failure; read upward from the end to the first traceback or "
            "error: later errors are often consequences of it.", "", d.root.line if d.root else None))
    out.append(Question(
        "Does it fail the same way on a second run, and on another machine?",
        "a failure that moves or vanishes points at a race, uninitialised memory or a faulty device; one "
        "that repeats exactly points at the code or its inputs."))
    out.append(Question(
        "Should this failure have a signature?",
        "if similar logs share it, a signature turns this review into an automatic diagnosis next time.",
        "diagnose clusters <directory of similar logs>"))
    return out
