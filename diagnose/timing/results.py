"""Evidence for a claimed speed-up: repeated measurements -> the ratio of medians with a bootstrap CI.

    data = load("times.csv")                 # {side: [times]} (or summary statistics per side)
    r = analyse(data, claim=1.8, seed=0)     # Reading: speedup, ci, spread, verdict, findings
    r.supported                              # False when the interval holds 1.0, or the spread exceeds the gain

Formats read (docs/timing.md has examples):
- CSV, long: a name column (name, impl, provider, side, variant, method, label, kernel) and a time
  column (time, time_ms, ms, us, time_us, runtime, latency, seconds, elapsed): one row per measurement;
- CSV, wide: one column per side, one row per measurement;
- JSON: {side: [times]}; {side: {"times": [...]}} (torch.utils.benchmark Measurement fields;
  do_bench(..., return_mode="all") lists); a list of {name, time} records; or summary statistics
  {side: {"mean", "std", "num_trials"}} as KernelBench's eval results give them (`runtime_stats`,
  `ref_runtime_stats`): those are resampled from a normal distribution, which is said in the reading.

The bootstrap resamples each side independently with replacement (a seeded numpy Generator) and takes
the 2.5 and 97.5 percentiles of the ratio of medians.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from findings import Evidence, Finding

NAME_COLUMNS = ("name", "impl", "implementation", "provider", "side", "variant", "method", "label", "kernel", "version")
TIME_COLUMNS = ("time", "time_ms", "ms", "us", "time_us", "runtime", "runtime_ms", "latency", "latency_ms", "seconds",
                "s", "elapsed", "elapsed_ms", "duration", "duration_ms", "t")
BASELINE_WORDS = ("baseline", "base", "ref", "reference", "torch", "eager", "old", "cublas", "pytorch", "before")
MIN_SAMPLES = 5
MAX_BYTES = 64 * 1024 * 1024
MAX_SAMPLES = 1_000_000


class ResultsError(ValueError):
    """Measurements that cannot be read; the message names the file and what is expected."""


@dataclass
class Side:
    name: str
    times: list = field(default_factory=list)
    mean: float | None = None          # summary-only sides (no raw samples)
    std: float | None = None
    n: int | None = None

    @property
    def summary_only(self) -> bool:
        return not self.times and self.mean is not None


@dataclass
class Data:
    path: str
    baseline: Side
    candidate: Side
    others: list = field(default_factory=list)


def _num(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) else None
    try:
        f = float(str(v).strip())
        return f if math.isfinite(f) else None
    except ValueError:
        return None


def _pick(sides: dict, path: str, baseline: str | None, candidate: str | None) -> Data:
    sides = {k: v for k, v in sides.items() if v.times or v.summary_only}
    if len(sides) < 2:
        raise ResultsError(f"{path}: found {len(sides)} side(s) with measurements ({', '.join(sides) or 'none'}); "
                           "need a baseline and a candidate")
    for want in (baseline, candidate):
        if want is not None and want not in sides:
            raise ResultsError(f"{path}: no side named {want!r} (sides: {', '.join(sides)})")
    if baseline is None:
        guess = [k for k in sides if k != candidate and any(w in k.lower() for w in BASELINE_WORDS)]
        if len(guess) == 1:
            baseline = guess[0]
        elif len(sides) == 2 and candidate is not None:
            baseline = next(k for k in sides if k != candidate)
        elif len(sides) == 2:
            baseline = next(iter(sides))
        else:
            raise ResultsError(f"{path}: which side is the baseline? pass --baseline NAME (sides: {', '.join(sides)})")
    if candidate is None:
        rest = [k for k in sides if k != baseline]
        if len(rest) != 1:
            raise ResultsError(f"{path}: which side is the candidate? pass --candidate NAME (sides: {', '.join(rest)})")
        candidate = rest[0]
    if baseline == candidate:
        raise ResultsError(f"{path}: the baseline and the candidate are the same side ({baseline})")
    others = [v for k, v in sides.items() if k not in (baseline, candidate)]
    return Data(path=path, baseline=sides[baseline], candidate=sides[candidate], others=others)


def load(path, baseline: str | None = None, candidate: str | None = None) -> Data:
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise ResultsError(f"{path}: {size:,} bytes is more than a measurements file ({MAX_BYTES:,} at most)")
        text = p.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise ResultsError(f"{path}: cannot read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not UTF-8 text; give a CSV or JSON file") from None
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise ResultsError(f"{path}: not valid JSON ({e})") from None
        sides = _from_json(doc, str(path))
    else:
        sides = _from_csv(text, str(path))
    total = sum(len(s.times) for s in sides.values())
    if total > MAX_SAMPLES:
        raise ResultsError(f"{path}: {total:,} measurements is more than this reads ({MAX_SAMPLES:,})")
    for s in sides.values():
        bad = [t for t in s.times if t <= 0]
        if bad:
            raise ResultsError(f"{path}: side {s.name!r} has {len(bad)} time(s) that are not positive ({bad[0]:g})")
    return _pick(sides, str(path), baseline, candidate)


def _from_csv(text: str, path: str) -> dict:
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise ResultsError(f"{path}: not a CSV file ({e})") from None
    rows = [r for r in rows if any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    if len(rows) < 2:
        raise ResultsError(f"{path}: no measurements (a header and one row per measurement expected)")
    head = [h.strip().lower() for h in rows[0]]
    name_col = next((head.index(c) for c in NAME_COLUMNS if c in head), None)
    time_col = next((head.index(c) for c in TIME_COLUMNS if c in head), None)
    sides: dict = {}
    if name_col is not None and time_col is not None:
        for i, r in enumerate(rows[1:], start=2):
            if len(r) <= max(name_col, time_col):
                raise ResultsError(f"{path}:{i}: row has {len(r)} fields, the header {len(head)}")
            v = _num(r[time_col])
            if v is None:
                raise ResultsError(f"{path}:{i}: {r[time_col]!r} in column {rows[0][time_col]!r} is not a number")
            name = r[name_col].strip()
            sides.setdefault(name, Side(name)).times.append(v)
        return sides
    # wide: every column a side
    for j, h in enumerate(rows[0]):
        sides[h.strip()] = Side(h.strip())
    for i, r in enumerate(rows[1:], start=2):
        for j, c in enumerate(r[:len(head)]):
            if not c.strip():
                continue
            v = _num(c)
            if v is None:
                raise ResultsError(f"{path}:{i}: {c!r} is not a number; a wide CSV has one column per side, or "
                                   f"give a name column ({', '.join(NAME_COLUMNS[:4])}) and a time column "
                                   f"({', '.join(TIME_COLUMNS[:4])})")
            sides[rows[0][j].strip()].times.append(v)
    return sides


def _side_from(name: str, v, path: str) -> Side | None:
    if isinstance(v, list):
        times = [_num(x) for x in v]
        if any(t is None for t in times):
            raise ResultsError(f"{path}: side {name!r}: every measurement must be a number")
        return Side(name, times)
    if isinstance(v, dict):
        for key in ("times", "raw_times", "samples", "measurements", "all", "values"):
            if isinstance(v.get(key), list):      # torch.utils.benchmark's `times` are already per run
                return _side_from(name, v[key], path)
        mean = _num(v.get("mean"))
        if mean is not None:
            std = _num(v.get("std"))
            n = _num(v.get("num_trials") or v.get("n") or v.get("count"))
            if std is None or n is None:
                raise ResultsError(f"{path}: side {name!r} gives a mean but not its std and num_trials: "
                                   "the spread is needed to judge a speed-up")
            return Side(name, [], mean=mean, std=std, n=int(n))
    return None


def _from_json(doc, path: str) -> dict:
    sides: dict = {}
    if isinstance(doc, list):
        for i, rec in enumerate(doc):
            if not isinstance(rec, dict):
                raise ResultsError(f"{path}: item {i} is not an object with a name and a time")
            nk = next((k for k in rec if k.lower() in NAME_COLUMNS), None)
            tk = next((k for k in rec if k.lower() in TIME_COLUMNS), None)
            if nk is None or tk is None:
                raise ResultsError(f"{path}: item {i} has no name/time fields ({', '.join(rec)})")
            v = _num(rec[tk])
            if v is None:
                raise ResultsError(f"{path}: item {i}: {rec[tk]!r} is not a number")
            sides.setdefault(str(rec[nk]), Side(str(rec[nk]))).times.append(v)
        return sides
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: expected an object of sides or a list of records")
    # KernelBench eval result: runtime_stats (candidate) and ref_runtime_stats (baseline)
    if "runtime_stats" in doc or "ref_runtime_stats" in doc:
        for key, name in (("ref_runtime_stats", "reference"), ("runtime_stats", "candidate")):
            if key in doc:
                s = _side_from(name, doc[key], path)
                if s is not None:
                    sides[name] = s
        return sides
    for k, v in doc.items():
        s = _side_from(str(k), v, path)
        if s is not None:
            sides[str(k)] = s
    return sides


@dataclass
class Reading:
    path: str
    baseline: str
    candidate: str
    n_baseline: int
    n_candidate: int
    median_baseline: float
    median_candidate: float
    speedup: float
    ci: tuple
    spread: float                 # the larger relative IQR (or CV for summaries) of the two sides
    supported: bool
    verdict: str
    reasons: list
    claim: float | None = None
    seed: int = 0
    resamples: int = 0
    assumption: str = ""
    findings: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"path": self.path, "baseline": self.baseline, "candidate": self.candidate,
                "n": {"baseline": self.n_baseline, "candidate": self.n_candidate},
                "median": {"baseline": self.median_baseline, "candidate": self.median_candidate},
                "speedup": self.speedup, "ci95": list(self.ci), "relative_spread": self.spread,
                "supported": self.supported, "verdict": self.verdict, "reasons": self.reasons, "claim": self.claim,
                "bootstrap": {"seed": self.seed, "resamples": self.resamples, "statistic": "ratio of medians"},
                "assumption": self.assumption or None, "findings": [f.to_json() for f in self.findings]}

    def text(self) -> str:
        import textwrap

        w = lambda s: textwrap.fill(s, 80, subsequent_indent="  ")  # noqa: E731
        lines = [w(f"{self.path}: {self.candidate} vs {self.baseline} (baseline)"),
                 f"  medians {self.median_baseline:.4g} / {self.median_candidate:.4g}  "
                 f"(n = {self.n_baseline} / {self.n_candidate})",
                 f"  speed-up {self.speedup:.3f}x, 95% CI [{self.ci[0]:.3f}, {self.ci[1]:.3f}]  "
                 f"(bootstrap, {self.resamples} resamples, seed {self.seed})",
                 f"  spread (relative IQR, larger side) {self.spread:.1%}",
                 w(f"verdict: {self.verdict}")]
        for r in self.reasons:
            lines.append(w(f"  - {r}"))
        if self.assumption:
            lines.append(w(f"assumed: {self.assumption}"))
        return "\n".join(lines)


def _rel_iqr(x) -> float:
    import numpy as np

    q1, med, q3 = np.percentile(x, [25, 50, 75])
    return float((q3 - q1) / med) if med > 0 else float("inf")


def analyse(data: Data, claim: float | None = None, seed: int = 0, resamples: int = 10000) -> Reading:
    import numpy as np

    if resamples < 100:
        raise ResultsError("--resamples must be at least 100")
    rng = np.random.default_rng(seed)
    assumption = ""
    arrays = []
    for s in (data.baseline, data.candidate):
        if s.summary_only:
            if s.n is None or s.n < 1 or s.std is None or s.std < 0:
                raise ResultsError(f"{data.path}: side {s.name!r}: num_trials and std must be positive")
            # summaries only: draw n samples once from a normal with that mean and std (floored at 0)
            arrays.append(np.clip(rng.normal(s.mean, s.std, s.n), s.mean * 1e-3, None))
            assumption = ("one side or both give only mean, std and num_trials (KernelBench-style): the "
                          "samples are drawn from a normal distribution with those figures, so the interval "
                          "is only as good as that assumption (skew and outliers are lost)")
        else:
            arrays.append(np.asarray(s.times, dtype=float))
    b, c = arrays
    med_b, med_c = float(np.median(b)), float(np.median(c))
    speedup = med_b / med_c
    ratios = np.empty(resamples)
    chunk = max(1, min(resamples, 2_000_000 // max(len(b), len(c), 1)))     # bounds memory for long series
    done = 0
    while done < resamples:
        k = min(chunk, resamples - done)
        mb = np.median(b[rng.integers(0, len(b), (k, len(b)))], axis=1)
        mc = np.median(c[rng.integers(0, len(c), (k, len(c)))], axis=1)
        ratios[done:done + k] = mb / mc
        done += k
    lo, hi = (float(x) for x in np.percentile(ratios, [2.5, 97.5]))
    spread = max(_rel_iqr(b), _rel_iqr(c))
    gain = abs(speedup - 1.0)
    reasons = []
    if min(len(b), len(c)) < MIN_SAMPLES:
        reasons.append(f"too few measurements ({len(b)} / {len(c)}; at least {MIN_SAMPLES} per side)")
    if lo <= 1.0 <= hi:
        reasons.append(f"the 95% interval [{lo:.3f}, {hi:.3f}] holds 1.0: no difference is shown")
    if spread > gain:
        reasons.append(f"the spread ({spread:.1%} relative IQR) exceeds the gain ({gain:.1%})")
    supported = not reasons
    if supported:
        verdict = (f"supported: {speedup:.3f}x faster (95% CI {lo:.3f}-{hi:.3f})" if speedup > 1 else
                   f"supported: the candidate is slower, {1 / speedup:.3f}x (95% CI {lo:.3f}-{hi:.3f})")
    else:
        verdict = "not supported"
    r = Reading(path=data.path, baseline=data.baseline.name, candidate=data.candidate.name, n_baseline=len(b),
                n_candidate=len(c), median_baseline=med_b, median_candidate=med_c, speedup=speedup, ci=(lo, hi),
                spread=spread, supported=supported, verdict=verdict, reasons=reasons, claim=claim, seed=seed,
                resamples=resamples, assumption=assumption)
    facts = {"speedup": round(speedup, 4), "ci95": [round(lo, 4), round(hi, 4)], "relative_spread": round(spread, 4),
             "n": [len(b), len(c)], "baseline": r.baseline, "candidate": r.candidate}
    ev = [Evidence(file=data.path, text=f"{r.candidate} vs {r.baseline}")]
    if not supported:
        r.findings.append(Finding(
            id="timing.speedup-not-supported", severity="error", reader="timing",
            title=f"speed-up {speedup:.3f}x is not supported by the measurements: " + "; ".join(reasons),
            evidence=ev, facts=facts, confidence=0.9 if not assumption else 0.7,
            why="A ratio of two noisy times is evidence only when its interval excludes 1.0 and the gain is "
                "larger than the run-to-run spread.",
            fix="Take more measurements (and remove what makes them vary: other processes, clocks, cache state), "
                "or report the result as no measurable difference."))
    if claim is not None and not (lo <= claim <= hi):
        r.findings.append(Finding(
            id="timing.claim-outside-interval", severity="error" if claim > hi else "warning", reader="timing",
            title=f"the claimed {claim:g}x is outside the measured 95% interval [{lo:.3f}, {hi:.3f}]",
            evidence=ev, facts={**facts, "claim": claim}, confidence=0.85,
            why="The measurements do not reproduce the claimed ratio.",
            fix=f"Report {speedup:.3f}x (95% CI {lo:.3f}-{hi:.3f}) or explain the difference in setup."))
    if supported and not r.findings:
        r.findings.append(Finding(
            id="timing.speedup-supported", severity="info", reader="timing", title=verdict, evidence=ev, facts=facts,
            confidence=0.9 if not assumption else 0.7,
            why="The interval excludes 1.0 and the gain exceeds the spread; the measurements do not show how they "
                "were taken (a static read of the script does: diagnose timing SCRIPT)."))
    return r


__all__ = ["Data", "Reading", "ResultsError", "Side", "analyse", "load"]
