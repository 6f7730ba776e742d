"""One adapter per reader: a task's parts in, `findings.Finding`s and what was examined out.

Each adapter returns a `ReaderResult`. A reader that is not installed, or that raises on this task's
files, returns `status` "unavailable"/"failed" with why; the review marks the dimensions it would have
judged "not assessable: <why>" and goes on.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from findings import Evidence, Finding
from signatures.taxonomy import is_not_gpu


@dataclass
class ReaderResult:
    reader: str
    findings: list[Finding] = field(default_factory=list)
    examined: list[str] = field(default_factory=list)    # what it read that can show a pass
    status: str = "ok"                                   # ok | unavailable | failed | nothing-to-read
    why: str = ""
    extra: dict = field(default_factory=dict)


def _safe(name: str, fn, *args) -> ReaderResult:
    try:
        return fn(*args)
    except ModuleNotFoundError as e:
        return ReaderResult(name, status="unavailable", why=f"the {name} reader is not installed ({e.name})")
    except ImportError as e:
        return ReaderResult(name, status="unavailable", why=f"the {name} reader could not be imported ({e})")
    except Exception as e:   # one reader's failure must not stop the review
        return ReaderResult(name, status="failed", why=f"the {name} reader failed: {type(e).__name__}: {e}")


# -- logs --------------------------------------------------------------------------------------------------

_CLEAN_NOTE = re.compile(r"^(?:=+ )?(\d+ passed.*|compiled .*|PASS\w*)", re.M)


def read_logs(paths, snapshot=None) -> ReaderResult:
    from diagnose.engine import diagnose_file

    r = ReaderResult("log")
    if not paths:
        return ReaderResult("log", status="nothing-to-read", why="no log or run output in the task")
    for p in paths:
        d = diagnose_file(p, snapshot)
        r.extra.setdefault("diagnoses", []).append(d)
        name = Path(p).name
        if d.family == "none" and not d.error:
            r.examined.append(f"log: {name} shows no failure")
            continue
        if d.family == "numerical-mismatch":
            r.examined.append(f"log: {name} ran to completion; it failed only on its numerical check")
        line = d.root.line if d.root else None
        text = d.root.text.strip() if d.root else ""
        if d.family == "unknown" and not is_not_gpu(d.family, d.signature):   # not-gpu.*: a known failure
            f = Finding(f"log.unknown", "warning", "log",
                        f"{name} shows a failure no signature explains" + (f": {text[:120]}" if text else ""),
                        evidence=[Evidence(p, line, text=text)] if d.root else [Evidence(p)],
                        why=d.error or "The log has failure evidence (a traceback, an error line, a non-zero exit).",
                        fix="Read the root line in context: `diagnose explain " + name + "`.",
                        facts=dict(d.facts), confidence=d.confidence or None)
        else:
            f = Finding(f"log.{d.signature or d.family}", "error", "log", f"{name}: {d.title or d.family}",
                        origin=d.origin, family=d.family,
                        evidence=[Evidence(p, line, text=text)], why=d.explanation.strip(), fix=d.fix,
                        facts=dict(d.facts), confidence=d.confidence or None)
        r.findings.append(f)
    return r


# -- numerics ----------------------------------------------------------------------------------------------

def _infer_dtype(arr, file_dtype: str) -> tuple[str, str | None]:
    """The precision an output's values are consistent with; (dtype, note) — fp16/bf16 values saved as fp32
    are read as what they are, and the review says so."""
    a = np.asarray(arr).astype(np.float32) if file_dtype in ("float32", "fp32") else None
    if a is None:
        return file_dtype, None
    if a.size:
        sample = a.reshape(-1)[: 1 << 20]
        finite = sample[np.isfinite(sample)]
        if np.unique(finite[:4096]).size < 64 or np.all(finite[:4096] == np.round(finite[:4096])):
            return file_dtype, None       # few distinct or integer values: exactness proves nothing
        if finite.size and np.all(finite.astype(np.float16).astype(np.float32) == finite):
            return "float16", "the output's values are all exact float16 numbers: read as a float16 result"
        bits = finite.view(np.uint32)
        if finite.size and np.all((bits & 0xFFFF) == 0):
            return "bfloat16", "the output's values are all exact bfloat16 numbers: read as a bfloat16 result"
    return file_dtype, None


_SPEC_DTYPE = {"float16": re.compile(r"\b(?:float16|fp16|half)\b", re.I),
               "bfloat16": re.compile(r"\b(?:bfloat16|bf16)\b", re.I)}


def read_numerics(tensor_sets, tolerances=None, spec_text: str = "") -> ReaderResult:
    from diagnose.numerics import analyse, load_tensor

    r = ReaderResult("numerics")
    if not tensor_sets:
        return ReaderResult("numerics", status="nothing-to-read",
                            why="no output/reference tensor pair (out*.npy + ref*.npy) in the task")
    tol = next((t for t in tolerances or [] if "atol" in t or "rtol" in t), None)
    for ts in tensor_sets:
        out = load_tensor(ts.out)
        ref = load_tensor(ts.ref)
        base = load_tensor(ts.baseline) if ts.baseline else None
        dtype, note = _infer_dtype(out.values, str(out.dtype))
        if note and not _SPEC_DTYPE[dtype].search(spec_text or ""):
            # fp16-exact values where the spec asks for no fp16: judge in the stored dtype, and say it
            r.findings.append(Finding(
                "review.numerics.lower-precision-than-spec", "error" if spec_text else "warning", "numerics",
                f"every value of {Path(ts.out).name} is an exact {dtype} number, but the spec does not ask for "
                f"{dtype}: the kernel computes or stores in {dtype}", family="numerical-mismatch",
                origin="kernel-logic", evidence=[Evidence(ts.out)],
                why="A result rounded to a narrower type carries its rounding error into every consumer.",
                fix=f"Keep the computation and the output in {out.dtype} (accumulate in float32).",
                facts={"stored": str(out.dtype), "values_exact_in": dtype}))
            dtype, note = str(out.dtype), None
        kw = {}
        if tol:
            kw = {"atol": tol.get("atol"), "rtol": tol.get("rtol"), "tol_source": "test"}
        reading = analyse(out.values, ref.values, dtype, str(ref.dtype),
                          baseline=base.values if base is not None else None, **kw)
        r.extra.setdefault("readings", []).append((ts, reading))
        pair = f"{Path(ts.out).name} vs {Path(ts.ref).name}"
        for f in getattr(reading, "findings", []):
            if isinstance(f, Finding):
                if not f.evidence or not f.evidence[0].file:
                    f.evidence = [Evidence(ts.out, text=(f.evidence[0].text if f.evidence else ""))]
                r.findings.append(f)
        if note:
            r.findings.append(Finding("review.numerics.dtype-inferred", "info", "numerics", note,
                                      evidence=[Evidence(ts.out)], facts={"dtype": dtype}))
        if reading.verdict == "likely defect" and not any(f.severity == "error" for f in r.findings):
            r.findings.append(Finding("numerics.defect", "error", "numerics",
                                      f"{pair}: the error is beyond what {dtype} rounding explains",
                                      family="numerical-mismatch", origin="kernel-logic",
                                      evidence=[Evidence(ts.out)], facts=dict(getattr(reading, "measures", {}))))
        if reading.verdict != "likely defect":
            r.examined.append(f"numerics: {pair} ({dtype}): {reading.verdict}"
                              + (f", tolerance from {Path(tol['file']).name}:{tol['line']}" if tol else ""))
    return r


# -- source readers ----------------------------------------------------------------------------------------

def read_lint(kernel_paths, target=None) -> ReaderResult:
    from diagnose.lint import lint_paths

    if not kernel_paths:
        return ReaderResult("lint", status="nothing-to-read", why="no kernel source in the task")
    rep = lint_paths(list(kernel_paths), target=target) if target else lint_paths(list(kernel_paths))
    r = ReaderResult("lint", findings=list(rep.findings))
    r.examined.append(f"lint: {len(kernel_paths)} kernel file(s) read, {len(rep.findings)} finding(s)")
    if getattr(rep, "errors", None):
        r.examined.append("lint could not read: " + "; ".join(rep.errors))
    return r


def read_timing(bench_paths, results_paths=(), doc_paths=()) -> ReaderResult:
    import diagnose.timing as timing

    if not bench_paths and not results_paths:
        return ReaderResult("timing", status="nothing-to-read", why="no benchmark script or timing results in the task")
    r = ReaderResult("timing")
    if bench_paths:
        got = timing.read(list(bench_paths))
        fs, errors = (list(got[0]), list(got[1])) if isinstance(got, tuple) else (list(getattr(got, "findings", got)), [])
        if errors:
            r.examined.append("timing could not read: " + "; ".join(map(str, errors)))
        r.findings += fs
        worst = [f for f in fs if f.severity in ("error", "warning")]
        if not worst:
            r.examined.append(f"timing: {', '.join(Path(p).name for p in bench_paths)} read, no unfair practice found")
    claimed = claims(doc_paths)
    for p in results_paths:
        from diagnose.timing import results as res

        claim = claimed[0][3] if claimed else None
        try:
            reading = res.analyse(res.load(p), claim=claim, seed=0)
        except Exception as e:
            r.findings.append(Finding("review.benchmark.results-unreadable", "warning", "review",
                                      f"{Path(p).name}: the timing results could not be read ({e})",
                                      evidence=[Evidence(p)]))
            continue
        r.extra.setdefault("results", []).append((p, reading))
        r.findings += list(getattr(reading, "findings", []) or [])
        if claimed and getattr(reading, "supported", None) is False:
            cp, line, text, ratio = claimed[0]
            ci = getattr(reading, "ci", None)
            r.findings.append(Finding(
                "review.benchmark.claim-not-supported", "error", "review",
                f"the claimed {ratio:g}x speed-up is not supported by {Path(p).name}"
                + (f" (measured {reading.speedup:.2f}x, 95% CI {ci[0]:.2f}-{ci[1]:.2f})"
                   if ci and getattr(reading, "speedup", None) else ""),
                evidence=[Evidence(cp, line, text=text), Evidence(p)],
                why="A speed-up claim needs repeated, like-for-like measurements whose interval excludes 1.0.",
                fix="Report the measured ratio with its interval, or fix the benchmark and measure again.",
                facts={"claimed": ratio}))
        elif getattr(reading, "supported", None) and not any(
                f.severity == "error" for f in getattr(reading, "findings", []) or []):
            r.examined.append(f"timing: {Path(p).name} supports the speed-up")
    return r


def read_profile(paths) -> ReaderResult:
    import diagnose.profile as profile

    if not paths:
        return ReaderResult("profile", status="nothing-to-read", why="no profiler export (ncu, nsys, torch.profiler) in the task")
    got = profile.read(list(paths)) if hasattr(profile, "read") else profile.read_profiles(list(paths))
    fs = list(getattr(got, "findings", got))
    r = ReaderResult("profile", findings=fs)
    r.examined.append(f"profile: {len(paths)} export(s) read")
    return r


def read_env(snapshot_paths) -> ReaderResult:
    if not snapshot_paths:
        return ReaderResult("env", status="nothing-to-read", why="no environment snapshot (diagnose env --json) in the task")
    from diagnose.env import run_checks
    from probes.schema import validate

    path = snapshot_paths[0]
    snap = validate(json.loads(Path(path).read_text(encoding="utf-8")), str(path))
    r = ReaderResult("env", extra={"snapshot": snap})
    for f in run_checks(snap, str(path)):
        if not f.evidence:
            f.evidence = [Evidence(str(path))]
        r.findings.append(f)
    r.examined.append(f"env: {Path(snapshot_paths[0]).name} judged")
    return r


# -- claims ------------------------------------------------------------------------------------------------

_CLAIM = re.compile(r"(\d+(?:\.\d+)?)\s*(?:x|×|times)\s+(?:faster|speed-?up|quicker)|speed-?up of (\d+(?:\.\d+)?)\s*x?",
                    re.I)


def claims(doc_paths) -> list[tuple[str, int, str, float]]:
    """Speed-up claims in the task's prose: (file, line, text, ratio)."""
    out = []
    for p in doc_paths:
        for i, line in enumerate(Path(p).read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            m = _CLAIM.search(line)
            if m:
                out.append((p, i, line.strip(), float(m[1] or m[2])))
    return out
