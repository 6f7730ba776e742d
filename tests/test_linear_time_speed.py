"""The text patterns of the fast unexplained path run in linear time on adversarial lines: the
wrapped-line rescue's error words (one hyperscan database), the wording fallback (one hyperscan
database, then re2 for the words present) and the matcher's joint database of every pattern.

Same method as tests/test_linear_time.py (a wall bound, and at most GROWTH times the time when the
input doubles); the lead may fold these cases into that file."""
from __future__ import annotations

import time

import pytest

pytest.importorskip("hyperscan")

WALL_S = 2.0
GROWTH = 3.0
FLOOR_S = 0.02
SIZE = 500_000     # big enough that a shared machine's noise (a few ms) does not read as growth

BAITS = {
    "run-together ISO timestamps": "2024-01-01T10:00:00.123",
    "digits and spaces": "1 ",
    "word and space": "ab ",
    "error words": "Error: ",
    "failed allocate": "failed to allocat",
    "sm numbers": "sm_90 ",
    "dtype pairs": "float16 bfloat16 ",
    "cuda and cpu": "cuda:0 cpu ",
    "assertion block": "assertion failed block ",
    "rank prefixes": "[rank0]:",
    "long word": "a",
    "newlines": "RuntimeError: x\n",
}


def _bait(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n] + " RuntimeError: CUDA error: out of memory"


def _time(fn, arg, repeat: int = 3) -> float:
    # CPU time of this process, the best of a few: on a shared machine wall time counts the waits
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn(arg)
        best = min(best, time.process_time() - t)
    return best


def _grows_linearly(fn, make, n: int = SIZE) -> str | None:
    t1, t2 = _time(fn, make(n)), _time(fn, make(2 * n))
    if t2 > WALL_S:
        return f"{t2:.2f} s on {2 * n} characters (bound {WALL_S} s)"
    if t2 > FLOOR_S and t2 > GROWTH * t1:
        return f"{t1 * 1e3:.1f} ms -> {t2 * 1e3:.1f} ms when the input doubled"
    return None


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_wrapped_line_error_words_are_linear(bait):
    from signatures.wrapped import error_lines

    assert _grows_linearly(error_lines, lambda n: _bait(BAITS[bait], n).encode()) is None


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_fallback_words_are_linear(bait):
    from signatures.fallback import guess

    # one evidence line, ASCII (hyperscan, then re2 for the words present) and non-ASCII (re2 for all);
    # evidence lines are cut at MAX_TEXT (2,000 characters) before they get here: 100k is far past it
    n = 100_000
    assert _grows_linearly(lambda t: guess([(t, 2.0)]), lambda k: _bait(BAITS[bait], k), n) is None
    assert _grows_linearly(lambda t: guess([(t, 2.0)]), lambda k: "é" + _bait(BAITS[bait], k), n) is None


@pytest.mark.parametrize("bait", sorted(BAITS))
def test_joint_database_scan_is_linear(bait):
    from signatures.matcher import default_matcher

    m = default_matcher()
    assert _grows_linearly(lambda b: m._joint_lines(b, None, None), lambda n: _bait(BAITS[bait], n).encode()) is None


def test_the_check_catches_quadratic_work():
    """The growth check must flag a quadratic function, else it proves nothing."""
    def quadratic(text):
        for i in range(0, len(text), 200):
            text.count("x", 0, i)
    assert _grows_linearly(quadratic, lambda n: "a" * n, 100_000)
