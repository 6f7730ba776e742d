"""Labelled real logs must keep classifying right: the shared dev set and the issue-thread fixtures.

The held-out evaluation uses other logs worded by other people; these sets guard against regressions
while signatures change. Accuracy thresholds, not exact lists, so one honest miss names itself.
"""
import csv
from pathlib import Path

import pytest

from diagnose.engine import diagnose_file

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT.parent / "shared" / "realworld"
ISSUES = Path(__file__).parent / "fixtures" / "issues"


def _rows(manifest: Path):
    with open(manifest, newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r.get("id")]


def _score(rows, log_of):
    misses = []
    for r in rows:
        d = diagnose_file(log_of(r["id"]))
        if d.family != r["family"]:
            misses.append(f"{r['id']}: want {r['family']}, got {d.family} (root: {d.root.text[:120] if d.root else '-'})")
    return 1 - len(misses) / len(rows), misses


@pytest.mark.skipif(not (DEV / "manifest.tsv").exists(), reason="../shared/realworld not present")
def test_dev_set_accuracy():
    rows = _rows(DEV / "manifest.tsv")
    acc, misses = _score(rows, lambda i: DEV / "logs" / f"{i}.log")
    assert acc >= 0.95, "\n".join(misses)
    cascades = [r for r in rows if r["root_cause_note"].startswith("CASCADE")]
    for r in cascades:
        assert diagnose_file(DEV / "logs" / f"{r['id']}.log").family == r["family"], r["id"]


MANIFESTS = sorted(ISSUES.glob("manifest-*.tsv"))


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[m.stem for m in MANIFESTS])
def test_issue_thread_fixtures(manifest):
    rows = _rows(manifest)
    for r in rows:
        assert (ISSUES / f"{r['id']}.log").exists(), f"{manifest.name}: {r['id']}.log missing"
    acc, misses = _score(rows, lambda i: ISSUES / f"{i}.log")
    assert acc >= 0.9, f"accuracy {acc:.3f}:\n" + "\n".join(misses)
