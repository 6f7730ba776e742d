"""Every timing rule is data with docs and a fixture pair: the flawed script gives that rule's finding
and no other, its fair twin gives nothing (tests/fixtures/timing/)."""
from pathlib import Path

import pytest

from diagnose.timing import load_rules, read, read_file
from findings import render

FIX = Path(__file__).parent / "fixtures" / "timing"
RULES = load_rules()


def _suffix(rule):
    return ".py" if rule.language == "python" else ".cu"


def test_rules_are_complete_data():
    assert len(RULES) >= 18
    for r in RULES:
        assert r.id.startswith("timing.") and r.title and r.why and r.fix and r.example and r.instead, r.id
        assert r.fixture, f"{r.id} has no fixture"
        assert (FIX / f"{r.fixture}{_suffix(r)}").exists() and (FIX / f"{r.fixture}_fair{_suffix(r)}").exists(), r.id
        if r.tier == "support":
            assert r.severity != "error", f"{r.id}: one weak signal is not an error"


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_flawed_fixture_gives_its_rule_only(rule):
    found = read_file(FIX / f"{rule.fixture}{_suffix(rule)}", RULES)
    assert sorted({f.id for f in found}) == [rule.id], render.text(found)
    f = next(x for x in found if x.id == rule.id)
    assert f.severity == rule.severity and f.reader == "timing" and f.evidence[0].line
    assert "{" not in f.title, f.title          # every placeholder filled


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_fair_twin_gives_nothing(rule):
    found = read_file(FIX / f"{rule.fixture}_fair{_suffix(rule)}", RULES)
    assert found == [], render.text(found)


def test_renders_in_every_format(monkeypatch):
    monkeypatch.chdir(FIX)           # relative paths, as a reviewer types them
    found, errors = read(["no_sync.py", "dtype_mismatch.py"])
    assert not errors
    assert all(len(line) <= 80 for line in render.text(found).splitlines())
    assert render.jsonl(found).count("\n") == len(found)
    assert "| error |" in render.markdown(found)
    sarif = render.sarif(found, tool="diagnose timing")
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"timing.no-sync", "timing.dtype-mismatch"}


def test_unreadable_file_is_an_error_not_a_crash(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def f(:\n")
    found, errors = read([bad, FIX / "no_sync.py"])
    assert errors and "broken.py" in errors[0]
    assert {f.id for f in found} == {"timing.no-sync"}        # the rest of the batch goes on


# Whole scripts in the styles reviewers meet (a Triton perf_report, jax, torch.utils.benchmark, an event
# harness like KernelBench's, a one-shot host timer): the findings each should give, and no others.
SCRIPTS = {
    "triton_perf_report.py": set(),
    "jax_no_spread.py": {"timing.no-spread"},
    "torch_benchmark_timer.py": set(),
    "event_harness_small_inputs.py": {"timing.cache-resident"},
    "naive_single_shot.py": {"timing.no-sync", "timing.no-warmup", "timing.few-reps", "timing.no-spread"},
    "host_work_timed.py": set(),
    "dtype_sweep.py": set(),
    "sync_before_only.py": {"timing.no-sync"},      # a sync before the work does not count              # both sides in each dtype, a setting changed between rounds         # timing host work in a GPU script: no kernel-timing finding
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_whole_scripts(name):
    found = read_file(FIX / "scripts" / name, RULES)
    assert {f.id for f in found} == SCRIPTS[name], render.text(found)


def test_docs_list_every_rule():
    doc = (Path(__file__).parent.parent / "docs" / "timing.md").read_text()
    missing = [r.id for r in RULES if f"`{r.id}`" not in doc]
    assert not missing, f"docs/timing.md lacks {missing}"


def test_rendered_findings_are_frozen(monkeypatch):
    """What a reviewer reads for every flawed fixture, frozen (ruff's .snap idea): a change in wording,
    place or severity shows in the diff. Regenerate with DIAGNOSE_UPDATE_SNAPSHOTS=1."""
    import os

    monkeypatch.chdir(FIX)
    text = "\n\n".join(render.text(read_file(f"{r.fixture}{_suffix(r)}", RULES)) for r in RULES) + "\n"
    snap = FIX / "rendered.txt"
    if os.environ.get("DIAGNOSE_UPDATE_SNAPSHOTS"):
        snap.write_text(text)
    assert snap.read_text() == text


def test_cli_exit_codes_formats_and_folders(capsys, monkeypatch):
    import json

    from cli.main import main

    monkeypatch.chdir(FIX)
    assert main(["timing", "no_sync_fair.py"]) == 0
    assert "no timing findings" in capsys.readouterr().out
    assert main(["timing", "no_sync.py", "--json"]) == 1                  # an error-severity finding
    doc = json.loads(capsys.readouterr().out)
    assert doc["findings"][0]["id"] == "timing.no-sync" and doc["errors"] == []
    assert main(["timing", "few_reps.py"]) == 0                           # warnings only
    capsys.readouterr()
    assert main(["timing", "missing.py"]) == 2
    assert "missing.py" in capsys.readouterr().err
    assert main(["timing", "scripts", "--format", "jsonl"]) == 1          # a folder: every script in it
    ids = {json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()}
    assert {"timing.no-sync", "timing.cache-resident", "timing.no-spread"} <= ids
    assert main(["timing", "cache_resident_fair.py", "--device", "no-such-gpu"]) == 2
    assert main(["timing"]) == 2
