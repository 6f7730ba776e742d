"""Every regex that touches log text runs in linear time: adversarial lines, a wall bound and growth.

The patterns are found, not listed: every re2 regex held at module level (alone, or in a dict, list or
tuple) by a module of signatures/, diagnose/, probes/ or findings/ is fed each bait at two sizes.
A pattern kept elsewhere (built lazily, inside a class) is added to EXTRA as a function returning
(name, regex) pairs. Python `re` on log text is refused outright in the modules of TEXT_MODULES:
its backtracking took 16.8 s on one 173-byte line of run-together timestamps.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import time
from pathlib import Path

import pytest

re2 = pytest.importorskip("re2")

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("findings", "signatures", "probes", "diagnose")
WALL_S = 2.0          # generous: re2 takes well under 10 ms on 100k characters
GROWTH = 3.0          # doubling the input may at most triple the time ...
FLOOR_S = 0.01        # ... once the time is big enough to measure
SIZE = 50_000         # characters of bait; each is also run at twice this

# Lines shaped to make a backtracking engine explode on one of our patterns, or merely long.
BAITS = {
    "run-together ISO timestamps": "2024-01-01T10:00:00.123",
    "timestamp with spaces": "2024-01-01 10:00:00,123 ",
    "digits": "1",
    "digits and spaces": "1 ",
    "digits and dots": "1.",
    "word and space (\\w+\\s?)+": "ab ",
    "letters": "a",
    "rank prefixes": "[rank0]:",
    "pid prefixes": "(pid=1 ",
    "bracketed dates": "[2024-",
    "glog-ish": "W1210 0",
    "ANSI CSI": "\x1b[",
    "ANSI OSC": "\x1b]0;",
    "path segments": "/a.b",
    "quotes": "'\"",
    "hex": "0x",
    "shape-ish": "[1, (2x",
    "ptxas-ish": "ptxas info : Used 1",
    "error words": "Error: ",
    "docker prefix": "svc |",
    "failure lexicon": "Expected failed ERROR no errors may fail ",
    "quoted assertion": "Assertion `a",
}


def _modules():
    for pkg in PACKAGES:
        importlib.import_module(pkg)
        for info in pkgutil.walk_packages([str(ROOT / pkg)], prefix=pkg + "."):
            yield importlib.import_module(info.name)


def _regexes(value, name: str, depth: int = 0):
    if isinstance(value, re2._Regexp):
        yield name, value
    elif depth < 3 and isinstance(value, dict):
        for k, v in value.items():
            yield from _regexes(v, f"{name}[{k!r}]", depth + 1)
    elif depth < 3 and isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _regexes(v, f"{name}[{i}]", depth + 1)


def _fallback_words():
    # the wording fallback builds its table lazily; whatever shape the table has, its re2 regexes are found
    from signatures import fallback

    table = fallback._load()
    for family, _origin, _fix, words, *_ in table.rows:
        for wid, rx in words:
            yield f"signatures.fallback[{family}][{table.words[wid]!r}]", rx
    if table.context is not None:           # the GPU context words, one re2 alternation
        yield "signatures.fallback[context]", table.context
    for family, veto in (table.vetoes or {}).items():    # the rows' vetoes, and the [gpu_stack] names they ask
        for i, rx in enumerate(veto.when):
            yield f"signatures.fallback[{family}].veto_when[{i}]", rx
        if veto.unless is not None:
            yield f"signatures.fallback[{family}].veto_unless", veto.unless
    if table.gpu_stack is not None:
        yield "signatures.fallback[gpu_stack]", table.gpu_stack


def _generic_hints():
    from signatures.matcher import HINTS

    for i, (kind, p) in enumerate(HINTS):
        yield f"signatures.matcher.HINTS[{i}:{kind}]", re2.compile(p.encode())


def _excuses():
    # the [[excuse]] patterns of signatures/evidence.toml, joined as the engine runs them on hint lines
    from signatures import evidence

    evidence.excused("x")
    yield "signatures.evidence._EXCUSE", evidence._EXCUSE


def _guidance_questions():
    from diagnose import guidance

    for spec in guidance.specs():
        yield f"diagnose.guidance[{spec.key}]", spec.pattern


# Patterns not held at module level: add a function yielding (name, regex) here.
EXTRA = [_fallback_words, _generic_hints, _excuses, _guidance_questions]


def text_patterns() -> dict[str, object]:
    found: dict[str, object] = {}
    for mod in _modules():
        for attr, value in vars(mod).items():
            for name, rx in _regexes(value, f"{mod.__name__}.{attr}"):
                found.setdefault(name, rx)
    for extra in EXTRA:
        found.update(extra())
    return found


PATTERNS = text_patterns()


def _bait(unit: str, n: int, as_bytes: bool):
    text = (unit * (n // len(unit) + 1))[:n] + " RuntimeError: x!"
    return text.encode("utf-8") if as_bytes else text


def _time(fn, arg, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t)
    return best


ATTEMPTS = 3          # a growth seen must be seen this many times running: CI machines stall for ms


def _confirmed(check):
    """check() -> problem or None; a problem counts only when every one of ATTEMPTS measurements shows it
    (a superlinear pattern shows it every time; a neighbour's burst of load does not last three)."""
    problem = None
    for _ in range(ATTEMPTS):
        problem = check()
        if problem is None or "bound" in problem:     # over the wall bound once is enough (and slow to redo)
            return problem
    return problem


def growth_problem(fn, make, n: int) -> str | None:
    """None when fn(make(2n)) is within the wall bound and at most GROWTH times fn(make(n))."""
    small, big = make(n), make(2 * n)
    return _confirmed(lambda: _growth_once(fn, small, big, n))


def _growth_once(fn, small, big, n: int) -> str | None:
    t1, t2 = _time(fn, small), _time(fn, big)
    if t2 > WALL_S:
        return f"{t2:.2f} s on {2 * n} characters (bound {WALL_S} s)"
    if t2 > FLOOR_S and t2 > GROWTH * t1:
        return f"{t1 * 1e3:.1f} ms -> {t2 * 1e3:.1f} ms when the input doubled"
    return None


def test_the_patterns_are_found():
    names = set(PATTERNS)
    for expected in ("signatures.normalise._LEVEL", "signatures.normalise._PREFIX", "signatures.normalise._ANSI",
                     "diagnose.clusters.MASKS[0][0]", "diagnose.guidance[cuda]",
                     "probes.capture._COMPILER_WORDS", "signatures.facts._SIZE", "signatures.evidence._EXCUSE"):
        assert expected in names, sorted(names)


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_every_text_pattern_is_linear_on(bait):
    bad = []
    for name, rx in sorted(PATTERNS.items()):
        as_bytes = isinstance(rx.pattern, bytes)

        def run(text, rx=rx):
            rx.search(text)
            rx.match(text)

        problem = growth_problem(run, lambda n, b=as_bytes: _bait(BAITS[bait], n, b), SIZE)
        if problem:
            bad.append(f"{name}: {problem}")
    assert not bad, "\n".join(bad)


def test_the_check_catches_a_backtracking_pattern():
    # The line-level pattern as it was, in Python `re`: the check must flag it (else it proves nothing).
    import re

    old = re.compile(r"^\s*(?:\[rank\d+\]:?\s*|\((?:\w+\s+)?pid=\d+[^)]*\)\s*|\d{4}-\d\d-\d\d[T\s][\d:.,]+\S*\s*"
                     r"|\[\d{4}-[^\]]*\]\s*)*(?:(?P<glog>[IW])\d{4}\s|(?<=:\s)(?P<tf>[IW])\s\S+:\d+\]"
                     r"|\[(?P<cpp>[IW])[\s\d]|\[?(?P<word>WARNING|WARN|INFO|DEBUG)\b)")
    assert growth_problem(old.match, lambda n: _bait(BAITS["run-together ISO timestamps"], n, False), 56)


def test_the_timestamp_line_that_took_16_seconds():
    from signatures.normalise import line_level, strip_prefix

    line = ("2024-01-01T10:00:00.123" * 8)[:157] + " RuntimeError: x"     # 173 bytes
    t = time.perf_counter()
    assert line_level(line) is None
    strip_prefix(line)
    assert time.perf_counter() - t < 0.1


# Modules whose job is reading log text: no Python `re` at all (re2 only).
TEXT_MODULES = ("signatures/normalise.py", "signatures/facts.py", "diagnose/clusters.py", "diagnose/guidance.py")


def test_text_modules_do_not_use_python_re():
    bad = []
    for rel in TEXT_MODULES:
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == "re" for a in node.names) or \
                    isinstance(node, ast.ImportFrom) and node.module == "re":
                bad.append(f"{rel}:{node.lineno} imports re")
    assert not bad, "\n".join(bad)


# -- hyperscan databases that read log text (the fast unexplained path) ------------------------------
# hyperscan cannot backtrack, but Python runs per match: these check that the callbacks stay linear too.

def _cpu_growth_problem(fn, make, n: int) -> str | None:
    """growth_problem in CPU time of this process, best of 3 (on a shared machine wall time counts
    the waits: a few ms of them read as growth at these sizes)."""
    def best(arg):
        times = []
        for _ in range(3):
            t = time.process_time()
            fn(arg)
            times.append(time.process_time() - t)
        return min(times)

    small, big = make(n), make(2 * n)

    def once():
        t1, t2 = best(small), best(big)
        if t2 > WALL_S:
            return f"{t2:.2f} s CPU on {2 * n} characters (bound {WALL_S} s)"
        if t2 > 2 * FLOOR_S and t2 > GROWTH * t1:
            return f"{t1 * 1e3:.1f} ms -> {t2 * 1e3:.1f} ms CPU when the input doubled"
        return None

    return _confirmed(once)


def _scan_problem(fn, bait: str) -> str | None:
    return _cpu_growth_problem(fn, lambda n: _bait(BAITS[bait], n, True), SIZE * 4)


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_wrapped_line_error_words_are_linear(bait):
    from signatures.wrapped import error_lines

    assert _scan_problem(error_lines, bait) is None


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_failure_line_detector_is_linear(bait):
    from signatures.lineflag import Detector

    # the gate (one hyperscan pass) and the scoring of the lines it lets through
    detector = Detector(0.0, {"failed": 1.0}, 0.99)
    assert _scan_problem(detector.flag, bait) is None


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_fallback_word_database_is_linear(bait):
    from signatures.fallback import guess

    # one evidence line, ASCII (hyperscan, then re2 for the words present) and non-ASCII (re2 for all)
    assert _cpu_growth_problem(lambda t: guess([(t, 2.0)]), lambda n: _bait(BAITS[bait], n, False), SIZE) is None
    assert _cpu_growth_problem(lambda t: guess([(t, 2.0)]), lambda n: "é" + _bait(BAITS[bait], n, False), SIZE) is None


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_joint_database_is_linear(bait):
    from signatures.matcher import default_matcher

    m = default_matcher()      # the loosened anchored patterns are in it
    assert _scan_problem(lambda b: m._joint_lines(b, None, None), bait) is None
