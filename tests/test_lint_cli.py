"""`diagnose lint` as a reviewer uses it: exit statuses, formats, bad input, rule docs, targets;
and `diagnose explain LOG --source DIR`, the lint findings fused with a log diagnosis."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from diagnose.lint import rules
from diagnose.lint.fuse import fuse_lint
from diagnose.model import Diagnosis, Line
from findings import Evidence, Finding

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "lint"
ISSUES = ROOT / "tests" / "fixtures" / "issues"


def run(capsys, *argv):
    rc = main(["lint", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_clean_tree_exits_0_and_says_what_was_checked(capsys):
    rc, out, err = run(capsys, FIX / "clean")
    assert rc == 0 and not err
    assert "37 rules" in out or f"{len(rules())} rules" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_no_findings_message(capsys, tmp_path):
    shutil.copy(FIX / "clean" / "cuda_saxpy.cu", tmp_path)
    rc, out, _ = run(capsys, tmp_path)
    assert rc == 0 and out.startswith("no findings:") and "1 file" in out and "does not run the kernels" in out


def test_error_finding_exits_1_with_place_source_why_fix(capsys):
    rc, out, _ = run(capsys, FIX / "rules" / "cuda.block-too-large.cu")
    assert rc == 1
    first = out.split("\n\n")[0].splitlines()
    assert first[0].startswith("tests/fixtures/lint/rules/cuda.block-too-large.cu:9:3")    # relative to the cwd
    assert "error  lint.cuda.block-too-large" in " ".join(first[:2])
    assert any(line.strip().startswith("| k<<<") for line in first)
    assert any("why:" in line for line in first) and any("fix:" in line for line in first)
    assert max(len(line) for line in out.splitlines()) <= 80


def test_bad_inputs_exit_2_name_the_file_and_the_rest_goes_on(capsys, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import triton\ndef f(:\n")
    rc, out, err = run(capsys, tmp_path / "missing.cu", broken, FIX / "rules" / "cuda.block-too-large.cu")
    assert rc == 2
    assert "missing.cu: no such file or directory" in err
    assert "broken.py:2:" in err and "syntax error" in err
    assert "lint.cuda.block-too-large" in out          # the good file was still linted
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    rc, _, err = run(capsys, notes)
    assert rc == 2 and "notes.txt: not a kernel source file" in err


def test_usage_errors(capsys):
    assert run(capsys)[0] == 2
    rc, _, err = run(capsys, "--target", "sm_42", FIX / "clean")
    assert rc == 2 and "unknown target 'sm_42'" in err
    rc, _, err = run(capsys, "--explain", "lint.nope")
    assert rc == 2 and "no rule" in err
    rc, _, err = run(capsys, "--select", "lint.zzz", FIX / "clean")
    assert rc == 2 and "--select lint.zzz" in err


def test_jsonl_is_one_finding_per_line(capsys):
    rc, out, _ = run(capsys, "--format", "jsonl", FIX / "rules" / "cuda.shared-bank-conflict.cu")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rc == 0 and rows and all(r["id"].startswith("lint.") and r["reader"] == "lint" for r in rows)
    rows = [r for r in rows if r["id"] == "lint.cuda.shared-bank-conflict"]
    assert rows[0]["evidence"][0]["line"] == 16 and rows[0]["evidence"][0]["col"]
    assert rows[0]["facts"]["array"] == "tile" and rows[0]["facts"]["row_words"] == 32


def test_sarif_2_1_0(capsys):
    rc, out, _ = run(capsys, "--format", "sarif", FIX / "rules")
    doc = json.loads(out)
    assert doc["version"] == "2.1.0" and rc == 1
    drv = doc["runs"][0]["tool"]["driver"]
    assert {r["id"] for r in drv["rules"]} == set(rules())       # every rule's metadata, not only those that fired
    r0 = next(r for r in drv["rules"] if r["id"] == "lint.cuda.block-too-large")
    assert r0["fullDescription"]["text"] and r0["help"]["text"] and r0["defaultConfiguration"]["level"] == "error"
    res = doc["runs"][0]["results"]
    assert res and all(r["level"] in ("error", "warning", "note") for r in res)
    loc = res[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] and loc["region"]["startLine"] >= 1


def test_markdown_and_table(capsys):
    rc, out, _ = run(capsys, "--format", "markdown", FIX / "rules" / "triton.unmasked-load.py")
    assert out.startswith("| severity | where | id | finding |") and "| lint.triton.unmasked-load |" in out
    rc, out, _ = run(capsys, "--format", "table", FIX / "rules" / "triton.unmasked-load.py")
    assert all(len(line) <= 80 for line in out.splitlines()) and "E  lint.triton.unmasked-load" in out


def test_rules_and_explain(capsys):
    rc, out, _ = run(capsys, "--rules")
    assert rc == 0 and all(f" {r}" in out for r in rules())
    rc, out, _ = run(capsys, "--explain", "lint.cuda.shared-bank-conflict")
    for section in ("What it finds", "Why it matters", "Example", "Use instead", "Fix"):
        assert section in out
    assert max(len(line) for line in out.splitlines()) <= 80
    rc, out, _ = run(capsys, "--rules", "--format", "jsonl")
    assert len(out.splitlines()) == len(rules())


def test_target_changes_the_shared_memory_verdict(capsys):
    f = FIX / "rules" / "triton.shared-memory-estimate.py"
    _, out90, _ = run(capsys, "--format", "jsonl", "--select", "lint.triton.shared-memory-estimate", f)
    _, out86, _ = run(capsys, "--format", "jsonl", "--select", "lint.triton.shared-memory-estimate", "--target", "sm_86", f)
    on90 = [json.loads(x) for x in out90.splitlines()]
    on86 = [json.loads(x) for x in out86.splitlines()]
    assert {r["facts"]["target"] for r in on90} == {"sm_90"} and {r["facts"]["target"] for r in on86} == {"sm_86"}
    assert len(on86) > len(on90)        # 101,376 bytes on sm_86 against 232,448 on sm_90


def test_help_stays_light():
    code = ("import sys; from cli.main import build_parser; build_parser(); "
            "bad = [m for m in ('tree_sitter', 'tree_sitter_cuda', 'triton', 'torch', 'jax') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# ---- explain LOG --source: the lint findings fused with the diagnosis --------------------------

def _explain_json(capsys, log, *sources):
    argv = ["explain", str(log), "--json"]
    for s in sources:
        argv += ["--source", str(s)]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_sanitizer_log_names_the_kernel_whose_guard_is_missing(capsys, tmp_path):
    # a real compute-sanitizer report (memcheck: "Invalid __global__ read ... in generate") and a
    # source with two unguarded kernels: the one the log names is the likely root
    src = tmp_path / "src"
    src.mkdir()
    (src / "gen.cu").write_text(
        "__global__ void other(float* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  out[i] = 0.0f;\n}\n"
        "__global__ void generate(const float* in, float* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  out[i] = in[i] * 2.0f;\n}\n"
        "void run(const float* in, float* out, int n) {\n"
        "  other<<<(n + 255) / 256, 256>>>(out, n);\n  generate<<<(n + 255) / 256, 256>>>(in, out, n);\n"
        "  cudaGetLastError();\n}\n")
    d = _explain_json(capsys, ISSUES / "g16-011.log", src)
    assert d["family"] == "illegal-memory-access"
    root = d["findings"][0]
    assert root["id"] == "lint.cuda.unguarded-global-index" and root["facts"]["kernel"] == "generate"
    assert root["evidence"][0]["line"] == 7
    note = next(n for n in d["notes"] if n.startswith("likely root"))
    assert "gen.cu:7:3" in note and "the log names kernel generate" in note


def test_triton_ima_names_the_unmasked_load(capsys, tmp_path):
    text = (FIX / "clean" / "triton_vector_add.py").read_text()
    (tmp_path / "add.py").write_text(text.replace("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)"))
    d = _explain_json(capsys, ISSUES / "g15-005.log", tmp_path)
    assert d["family"] == "illegal-memory-access"
    assert d["findings"][0]["id"] == "lint.triton.unmasked-load"
    assert any(n.startswith("likely root in the source: ") and "add.py:13:" in n for n in d["notes"])


def test_guarded_source_says_no_guard_is_missing(capsys):
    # the corpus's GPU scenario: the scatter is guarded (i < n); its bug is a corrupt index table
    d = _explain_json(capsys, ISSUES / "g16-011.log", ROOT / "corpus" / "scenarios" / "gpu" / "illegal_address.cu")
    assert not any(n.startswith("likely root") for n in d["notes"])
    assert any("found no missing mask or bounds guard" in n for n in d["notes"])


def test_explain_renders_findings(capsys, tmp_path):
    text = (FIX / "clean" / "cuda_saxpy.cu").read_text()
    (tmp_path / "s.cu").write_text(text.replace("if (i < n) y[i]", "y[i]"))
    assert main(["explain", str(ISSUES / "g16-011.log"), "--source", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "findings (1)" in out and "lint.cuda.unguarded-global-index" in out and "likely root" in out


def test_fuse_is_pure_and_family_aware():
    f = Finding(id="lint.triton.unmasked-load", severity="error", reader="lint", title="t", origin="kernel-logic",
                evidence=[Evidence("k.py", 3, 5, "x = tl.load(p)")], facts={"kernel": "k"})
    oom = Diagnosis(path="a.log", family="oom", root=Line(1, "CUDA out of memory"))
    fused = fuse_lint(oom, [f])
    assert fused.findings == [f] and not fused.notes and oom.findings == []     # attached, no root claim
    da = Diagnosis(path="b.log", family="device-assert", root=Line(1, "device-side assert triggered"))
    fused = fuse_lint(da, [f], ["x.cu: cannot read"])
    assert fused.notes[0].startswith("likely root in the source: k.py:3:5 lint.triton.unmasked-load")
    assert fused.notes[-1] == "lint could not read x.cu: cannot read"


def test_docs_list_every_rule():
    doc = (ROOT / "docs" / "lint.md").read_text()
    missing = [r for r in rules() if f"`{r}`" not in doc]
    assert not missing, f"docs/lint.md lacks {missing}: regenerate its rule table"


def test_ignore_comment_silences_one_rule(capsys, tmp_path):
    text = (FIX / "clean" / "cuda_saxpy.cu").read_text().replace("if (i < n) y[i] = a * x[i] + y[i];", "y[i] = a * x[i] + y[i];")
    f = tmp_path / "s.cu"
    f.write_text(text)
    assert run(capsys, f)[0] == 1
    f.write_text(text.replace("y[i] = a * x[i] + y[i];", "y[i] = a * x[i] + y[i];  // lint: ignore[lint.cuda.unguarded-global-index]"))
    rc, out, _ = run(capsys, f)
    assert rc == 0 and "unguarded-global-index" not in out


def test_pathological_python_is_a_clear_error_not_a_traceback(capsys, tmp_path):
    nested = tmp_path / "nested.py"
    nested.write_text("import triton\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    long_sum = tmp_path / "long_sum.py"
    long_sum.write_text("import triton\nx = " + "+".join(["a"] * 100000) + "\n")
    rc, _, err = run(capsys, nested, long_sum)
    assert rc == 2
    assert "nested.py:2:" in err and "too many nested parentheses" in err
    assert "long_sum.py: cannot be parsed as Python" in err
