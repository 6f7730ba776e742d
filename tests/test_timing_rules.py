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


# every (rule, fixture) pair: a rule may have several (`fixture = ["a", "b"]`), one case each
PAIRS = [(r, f) for r in RULES for f in r.fixtures]
PAIR_IDS = [f"{r.id}:{f}" for r, f in PAIRS]


def test_rules_are_complete_data():
    assert len(RULES) >= 18
    for r in RULES:
        assert r.id.startswith("timing.") and r.title and r.why and r.fix and r.example and r.instead, r.id
        assert r.fixture, f"{r.id} has no fixture"
        for f in r.fixtures:
            assert (FIX / f"{f}{_suffix(r)}").exists() and (FIX / f"{f}_fair{_suffix(r)}").exists(), (r.id, f)
        if r.tier == "support":
            assert r.severity != "error", f"{r.id}: one weak signal is not an error"


@pytest.mark.parametrize("rule,fixture", PAIRS, ids=PAIR_IDS)
def test_flawed_fixture_gives_its_rule_only(rule, fixture):
    found = read_file(FIX / f"{fixture}{_suffix(rule)}", RULES)
    assert sorted({f.id for f in found}) == [rule.id], render.text(found)
    f = next(x for x in found if x.id == rule.id)
    assert f.severity == rule.severity and f.reader == "timing" and f.evidence[0].line
    assert "{" not in f.title, f.title          # every placeholder filled


@pytest.mark.parametrize("rule,fixture", PAIRS, ids=PAIR_IDS)
def test_fair_twin_gives_nothing(rule, fixture):
    found = read_file(FIX / f"{fixture}_fair{_suffix(rule)}", RULES)
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
    # bench(lambda: f(x)): the side is f(x), with its input's dtype and size (the corpus's softmax bench)
    "event_helper_lambda.py": {"timing.cache-resident", "timing.dtype-mismatch"},
    "do_bench_median_only.py": {"timing.no-spread"},    # return_mode="median" returns one number
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
    text = "\n\n".join(render.text(read_file(f"{f}{_suffix(r)}", RULES)) for r, f in PAIRS) + "\n"
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


def test_cache_rule_uses_a_gpu_l2_only_for_gpu_work(tmp_path):
    """The L2 of a GPU is used only when the script's work runs on one (torch-bench-unfair, a CPU script,
    once got '16.8 MB inside a 50 MB L2'); the default L2 is said to be assumed; --device names it."""
    cpu = FIX / "cache_resident_gpu_fair.py"
    assert read_file(cpu, RULES) == []
    assert read_file(cpu, RULES, l2_bytes=50e6) == []        # --device H100: the tensors are still made on the CPU
    gpu = [f for f in read_file(FIX / "cache_resident_gpu.py", RULES) if f.id == "timing.cache-resident"]
    assert len(gpu) == 1 and "assumed" in gpu[0].title and gpu[0].facts["l2_from"].startswith("assumed")
    named = [f for f in read_file(FIX / "cache_resident_gpu.py", RULES, l2_bytes=96e6)
             if f.id == "timing.cache-resident"]
    assert "named device's 96 MB L2" in named[0].title and named[0].facts["l2_from"] == "--device"
    # the inputs' device unknown (a command-line argument): silent unless the reviewer names a GPU
    src = (FIX / "cache_resident_gpu.py").read_text().replace('device="cuda"', "device=sys.argv[1]")
    src = src.replace("import statistics", "import statistics\nimport sys").replace("torch.cuda.synchronize()", "")
    p = tmp_path / "unknown_device.py"
    p.write_text(src)
    assert "timing.cache-resident" not in {f.id for f in read_file(p, RULES)}
    assert "timing.cache-resident" in {f.id for f in read_file(p, RULES, l2_bytes=50e6)}


def test_default_dtype_is_the_libraries_and_unknown_once_changed(tmp_path):
    flawed = read_file(FIX / "dtype_default.py", RULES)
    assert [f.id for f in flawed] == ["timing.dtype-mismatch"]
    f = flawed[0]
    assert "reference(x.double(), 1.5) (fp64)" in f.title and "candidate(x, 1.5) (fp32, the default)" in f.title
    assert f.facts["assumed"] == ["candidate(x, 1.5): no dtype given, the library default"]
    # torch.set_default_dtype makes the unwritten dtype unknown: say nothing rather than guess
    src = (FIX / "dtype_default.py").read_text().replace("x = torch.randn(2048, 2048)",
                                                          "torch.set_default_dtype(torch.float64)\n"
                                                          "x = torch.randn(2048, 2048)")
    p = tmp_path / "default_changed.py"
    p.write_text(src)
    assert read_file(p, RULES) == []
    # numpy's default is float64: x.astype(np.float32) against x differs, x.astype(np.float64) does not
    src = (FIX / "dtype_default.py").read_text().replace("import torch", "import numpy as np\nimport torch")
    src = src.replace("x = torch.randn(2048, 2048)", "x = np.random.randn(2048, 2048)")
    for cast, ids in ((".astype(np.float32)", ["timing.dtype-mismatch"]), (".astype(np.float64)", [])):
        p.write_text(src.replace("x.double()", "x" + cast))
        assert [f.id for f in read_file(p, RULES)] == ids, cast


def test_trivial_input_names_the_calls_as_written():
    found = [f for f in read_file(FIX / "trivial_input.py", RULES)]
    assert [f.title for f in found] == ["timed on all zeros: baseline(a, b) and candidate(a, b)"]
    assert found[0].evidence[0].text == 'a = torch.zeros(N, N, device="cuda", dtype=torch.float16)'


def test_segment_matches_ast_get_source_segment():
    """pyscan.segment reads node text from the file's lines; it must equal ast's (which is slow)."""
    import ast

    from diagnose.source import parse
    from diagnose.timing.pyscan import segment

    for path in [FIX / "dtype_default.py", FIX / "scripts" / "triton_perf_report.py"]:
        src = parse(path)
        nodes = [n for n in ast.walk(src.tree) if isinstance(n, (ast.expr, ast.stmt))]
        assert nodes
        for n in nodes:
            assert segment(src, n) == ast.get_source_segment(src.text, n), ast.dump(n)[:80]


def test_segment_handles_non_ascii_and_multiline(tmp_path):
    import ast

    from diagnose.source import parse
    from diagnose.timing.pyscan import segment

    p = tmp_path / "u.py"
    p.write_text('s = "größe"; t = f(s,\n      "ü")\n', encoding="utf-8")
    src = parse(p)
    for n in ast.walk(src.tree):
        if isinstance(n, (ast.expr, ast.stmt)):
            assert segment(src, n) == ast.get_source_segment(src.text, n)


def test_default_dtype_only_where_no_dtype_is_written(tmp_path):
    """dtype=dt with dt unknown (a parameter), or numpy's positional dtype, is not the default."""
    base = (FIX / "dtype_default.py").read_text()
    p = tmp_path / "given.py"
    # an unresolvable dtype= on the candidate's input: unknown, so no finding (not "fp32, the default")
    p.write_text(base.replace("x = torch.randn(2048, 2048)", "import sys\nDT = getattr(torch, sys.argv[1])\n"
                              "x = torch.randn(2048, 2048, dtype=DT)"))
    assert read_file(p, RULES) == []
    # numpy.zeros(shape, np.float32): the positional dtype is read
    src = base.replace("import torch", "import numpy as np\nimport torch")
    src = src.replace("x = torch.randn(2048, 2048)", "x = np.zeros((2048, 2048), np.float32)")
    p.write_text(src.replace("x.double()", "x.astype(np.float64)"))
    ids = [f.id for f in read_file(p, RULES)]
    assert "timing.dtype-mismatch" in ids
    d = next(f for f in read_file(p, RULES) if f.id == "timing.dtype-mismatch")
    assert "(fp32)" in d.title and "default" not in d.title, d.title
