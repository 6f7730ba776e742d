"""Confidence is measured: confidence.toml is the fit of the before-records, by the kind of evidence."""
import csv
import tomllib
from pathlib import Path

import pytest

from bench import calibration
from bench.kind_probe import probe
from bench.rounds import ISSUES, KINDS, kind_of, shows_progress
from diagnose.engine import confidence_of, diagnose_file, diagnose_text
from signatures.matcher import default_matcher

TABLE = tomllib.loads(calibration.TABLE.read_text(encoding="utf-8"))


def test_confidence_table_is_the_fit_of_the_before_records():
    """Every value is (right + 1) / (n + 2) over the rounds it names: refit with --write, never by hand."""
    rows = [r for r in calibration.records() if r["round"] in TABLE["fitted_on"]]
    if TABLE.get("evidence_now"):
        rows = calibration.with_evidence_now(rows)
    assert {r["round"] for r in rows} == set(TABLE["fitted_on"])
    fitted = calibration.fit(rows)
    for kind, v in fitted.items():
        assert TABLE["kind"][kind] == {"value": v["value"], "n": v["n"], "right": v["right"]}, kind
    assert set(TABLE["kind"]) == set(calibration.DOCS) and set(calibration.DOCS) <= set(KINDS)


def test_every_before_record_names_its_kind():
    for path in sorted(ISSUES.glob("before-*.tsv")):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        assert rows and all(r["kind"] in KINDS for r in rows), path.name


def test_laplace_fit_and_held_out():
    rows = ([{"round": "g1", "kind": "root", "right": "1", "confidence": "0.9", "got": "oom", "family": "oom"}] * 8
            + [{"round": "g2", "kind": "root", "right": "0", "confidence": "0.9", "got": "oom", "family": "x"}] * 2)
    assert calibration.fit(rows)["root"] == {"right": 8, "n": 10, "value": 0.75}
    assert calibration.fit(rows)["support"]["value"] == 0.5            # never seen: no evidence either way
    scored, _ = calibration.held_out(rows)
    # g1 is scored with the fit of g2 alone (0/2 -> 0.25), g2 with g1's (8/8 -> 0.9)
    assert {r["round"]: r["confidence"] for r in scored} == {"g1": "0.25", "g2": "0.90"}


@pytest.mark.parametrize("fields,progress,kind", [
    ({"family": "none", "title": "failure text appears only in warnings or handled exceptions"}, False, "none-handled"),
    ({"family": "none", "title": "no failure found"}, True, "none-progress"),
    ({"family": "none", "title": "no failure found"}, False, "none-silent"),
    ({"family": "oom", "signature": "fallback.oom", "role": None}, False, "fallback"),
    ({"family": "unknown", "title": "a failure no signature explains", "role": None}, False, "unknown"),
    ({"family": "unknown", "title": "the log is empty: there is nothing to diagnose", "role": None}, False, "unreadable"),
    ({"family": "oom", "signature": "oom.x", "role": "root", "tier": "hard", "rivals": ["dtype-mismatch"]}, False, "root-rival"),
    ({"family": "oom", "signature": "oom.x", "role": "root", "tier": "hard", "rivals": []}, False, "root"),
    ({"family": "unknown", "signature": "not-gpu.host-allocator", "role": "root", "tier": "hard", "rivals": []}, False, "root"),
    ({"family": "oom", "signature": "oom.x", "role": "root", "tier": "support"}, False, "support"),
    ({"family": "oom", "signature": "oom.x", "role": "root", "notes": ["matched across a hard-wrapped line"]}, False, "wrapped"),
    ({"family": "timeout-hang", "signature": "t.w", "role": "wrapper"}, False, "wrapper"),
])
def test_kind_of(fields, progress, kind):
    assert kind_of(fields, progress) == kind


def test_the_engine_gives_each_kind_its_measured_confidence():
    """The engine and bench.rounds name the same kinds: every round log's confidence is its kind's value."""
    matcher, wrong = default_matcher(), []
    for name in TABLE["fitted_on"]:
        with open(ISSUES / f"manifest-{name}.tsv", newline="") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                path = ISSUES / f"{r['id']}.log"
                d = diagnose_file(path, matcher=matcher)
                kind = kind_of(probe(str(path), matcher), shows_progress(path))
                want = round(min(d.confidence, confidence_of(kind)), 2) if kind == "wrapped" else confidence_of(kind)
                if d.confidence != want:
                    wrong.append(f"{r['id']}: {kind} {want}, engine {d.confidence}")
    assert not wrong, "\n".join(wrong)


def test_a_root_alone_gets_the_root_value():
    d = diagnose_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert d.confidence == confidence_of("root")
