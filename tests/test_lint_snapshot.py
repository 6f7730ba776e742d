"""What a reviewer reads is the product: every rule fixture's findings, rendered as `diagnose lint`
prints them (80 columns), frozen in tests/fixtures/lint/rules.snap (ruff keeps .snap files the same
way). A change of wording, place or severity shows up here; to accept one, run
`UPDATE_LINT_SNAPSHOT=1 pytest tests/test_lint_snapshot.py` and review the diff."""
import os
from pathlib import Path

from diagnose.lint import lint_paths
from findings import render

ROOT = Path(__file__).resolve().parent.parent
SNAP = ROOT / "tests" / "fixtures" / "lint" / "rules.snap"


def test_rendered_findings_match_the_snapshot(monkeypatch):
    monkeypatch.chdir(ROOT)                      # paths in the snapshot are relative to the repository
    report = lint_paths(["tests/fixtures/lint/rules"])
    assert not report.errors
    text = render.text(report.findings) + "\n"
    assert max(len(line) for line in text.splitlines()) <= 80
    if os.environ.get("UPDATE_LINT_SNAPSHOT") == "1":
        SNAP.write_text(text)
    assert text == SNAP.read_text(), "rendered lint findings changed: review, then UPDATE_LINT_SNAPSHOT=1"
