"""Frozen `diagnose explain` text for labelled real logs across frameworks (like ruff's .snap files).

Each snapshot is the explanation a reviewer reads at 80 columns, without colour. A change in the
engine, the signatures or the advice that changes what a reviewer reads shows up here as a diff to
read and accept: `UPDATE_SNAPSHOTS=1 pytest tests/test_explain_snapshots.py` rewrites them.
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest

from diagnose.engine import diagnose_file
from diagnose.report import write_explain

ROOT = Path(__file__).resolve().parent.parent
ISSUES = Path(__file__).parent / "fixtures" / "issues"
SNAPS = Path(__file__).parent / "snapshots" / "explain"

# (framework, family): one log each, the first in manifest order, so the set is stable and spans
# the ecosystems the advice is written for.
WANTED = [
    ("pytorch", "oom"), ("pytorch", "device-assert"), ("pytorch", "dtype-mismatch"), ("pytorch", "timeout-hang"),
    ("pytorch", "illegal-memory-access"), ("pytorch", "driver-mismatch"),
    ("jax", "oom"), ("jax", "arch-mismatch"), ("jax", "timeout-hang"), ("pallas", "compile-error"),
    ("pallas", "shared-memory-exceeded"), ("tensorflow", "missing-library"), ("tensorflow", "dtype-mismatch"),
    ("tensorflow", "oom"), ("triton", "shared-memory-exceeded"), ("triton", "compile-error"),
    ("triton", "launch-config"), ("cuda", "arch-mismatch"), ("cuda", "launch-config"), ("cuda", "compile-error"),
    ("cuda-c++", "launch-config"), ("neuron", "compile-error"), ("nki", "compile-error"), ("rocm", "arch-mismatch"),
    ("pytorch-rocm", "illegal-memory-access"), ("julia", "device-assert"), ("julia", "oom"),
    ("lua-torch", "missing-library"), ("numba", "missing-library"), ("cupy", "compile-error"),
    ("inductor", "autotune-failure"), ("vllm", "oom"), ("llama.cpp", "oom"), ("caffe", "driver-mismatch"),
    ("mxnet", "oom"),
]
CORPUS = ["cuda-removed-api-cuda13", "triton-interp-softmax-mask-bug", "pallas-tpu-block-not-8x128"]


def _cases():
    rows = []
    for m in sorted(ISSUES.glob("manifest-*.tsv"), key=lambda p: int(p.stem.split("-g")[1])):
        with open(m, newline="") as f:
            rows += [r for r in csv.DictReader(f, delimiter="\t") if r.get("id")]
    out = []
    for fw, fam in WANTED:
        hit = next((r for r in rows if r["framework"] == fw and r["family"] == fam), None)
        if hit:
            out.append(f"tests/fixtures/issues/{hit['id']}.log")
    return out + [f"corpus/logs/{c}.log" for c in CORPUS]


CASES = _cases()


def render(rel: str) -> str:
    from rich.console import Console

    d = diagnose_file(ROOT / rel)
    d.path = rel
    buf = io.StringIO()
    console = Console(file=buf, width=80, color_system=None, force_terminal=False, legacy_windows=False)
    write_explain(d, console=console, log_path=str(ROOT / rel))
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def test_the_set_spans_enough_logs_and_frameworks():
    assert len(CASES) >= 30


@pytest.mark.parametrize("rel", CASES, ids=[Path(c).stem for c in CASES])
def test_explain_snapshot(rel):
    got = render(rel)
    snap = SNAPS / f"{Path(rel).stem}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") or not snap.exists():
        snap.write_text(got)
        if not os.environ.get("UPDATE_SNAPSHOTS"):
            pytest.fail(f"{snap} did not exist: written; read it and commit it")
    assert got == snap.read_text(), f"{rel}: the explanation changed; read the diff, then UPDATE_SNAPSHOTS=1"
    assert all(len(line) <= 80 for line in got.splitlines()), f"{rel}: a line is wider than 80 columns"
