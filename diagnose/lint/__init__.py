"""`diagnose lint`: kernel source read before anything runs (Triton, Pallas, NKI with Python `ast`;
CUDA C++ with tree-sitter), against rules that are data (rules/*.toml) with their checks registered
by id (triton.py, cuda.py, pallas.py, nki.py). Returns `findings.Finding`s.

    report = lint_paths(["kernels/"], target="sm_90")
    report.findings   # Finding list, worst first
    report.errors     # "path: what is wrong" for inputs that could not be read or parsed
"""
from __future__ import annotations

from diagnose.lint.engine import LintReport, explain_rule, lint_file, lint_paths, rules

__all__ = ["LintReport", "explain_rule", "lint_file", "lint_paths", "rules"]
