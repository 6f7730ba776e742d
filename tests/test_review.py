"""diagnose review: parts found by content, the rubric as data, a failing reader -> not assessable, formats."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from diagnose.review import RubricError, TaskError, discover, load_rubric, review_task
from diagnose.review import readers
from diagnose.review.render import markdown

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''


def _task(tmp_path, **files):
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text) if isinstance(text, bytes) else p.write_text(text)
    return tmp_path


def test_parts_are_found_by_content_not_names(tmp_path):
    t = _task(tmp_path, **{"a.py": KERNEL, "checks/b.py": "import torch\ndef test_b():\n    assert True\n",
                           "notes.txt": "Write a kernel for any length n.\n",
                           "run/output.txt": "Traceback (most recent call last):\nRuntimeError: CUDA error: x\n",
                           "snap.json": json.dumps({"schema": "diagnose.env/1", "gpus": []}),
                           "prof.csv": '"ID","Process ID","Kernel Name","Metric Name"\n'})
    np.save(t / "y_expected.npy", np.zeros(4))
    np.save(t / "y_got.npy", np.zeros(4))
    p = discover(t)
    name = lambda role: sorted(Path(x).name for x in p.of(role))   # noqa: E731
    assert name("kernel") == ["a.py"] and name("test") == ["b.py"] and name("spec") == ["notes.txt"]
    assert name("log") == ["output.txt"] and name("snapshot") == ["snap.json"] and name("profile") == ["prof.csv"]
    assert [(Path(s.out).name, Path(s.ref).name) for s in p.tensors] == [("y_got.npy", "y_expected.npy")]


def test_task_toml_names_roles(tmp_path):
    t = _task(tmp_path, **{"impl.py": "x = 1\n", "task.toml": '[roles]\nkernel = ["impl.py"]\n'})
    assert [Path(x).name for x in discover(t).of("kernel")] == ["impl.py"]
    (t / "task.toml").write_text('[roles]\nkernel = ["missing.py"]\n')
    with pytest.raises(TaskError, match="missing.py"):
        discover(t)


def test_not_a_folder(tmp_path):
    with pytest.raises(TaskError, match="not a folder"):
        discover(tmp_path / "nope")


def test_rubric_errors_name_the_file_and_entry(tmp_path):
    bad = tmp_path / "r.toml"
    bad.write_text('[[dimension]]\nid = "a"\ntitle = "A"\n[[route]]\nreader = "log"\ndimension = "b"\n')
    with pytest.raises(RubricError, match=r"r.toml: route #1 names dimension 'b'"):
        load_rubric(bad)
    bad.write_text("not toml [")
    with pytest.raises(RubricError, match="cannot read"):
        load_rubric(bad)


def test_a_reader_that_fails_marks_its_dimension_not_assessable(tmp_path, monkeypatch):
    t = _task(tmp_path, **{"kernel.py": KERNEL, "spec.md": "# Task\nAdd for any length.\n"})
    np.save(t / "out.npy", np.ones(8, np.float32))
    np.save(t / "ref.npy", np.ones(8))

    def boom(*a, **k):
        raise RuntimeError("planted")

    monkeypatch.setattr(readers, "read_numerics", boom)
    r = review_task(t)
    num = next(d for d in r.dimensions if d.id == "numerics")
    assert num.verdict == "not assessable" and "planted" in num.why
    assert any(x.reader == "numerics" and x.status == "failed" for x in r.readers)


def test_no_evidence_is_not_a_pass(tmp_path):
    r = review_task(_task(tmp_path, **{"spec.md": "# Task\nA softmax.\n"}))
    assert all(d.verdict == "not assessable" for d in r.dimensions if d.id != "completeness")
    assert r.overall == "not assessable"


def test_own_rubric_changes_the_verdict(tmp_path):
    t = _task(tmp_path, **{"kernel.py": KERNEL})
    (t / "out.log").write_text("$ python -m pytest\n1 passed in 0.1s\n")
    r = review_task(t)
    assert r.verdict("validity") == "pass"
    own = tmp_path.parent / "strict.toml"
    own.write_text('[[dimension]]\nid = "validity"\ntitle = "V"\npass_from = ["profile"]\n')
    assert review_task(t, own).verdict("validity") == "not assessable"


def test_markdown_is_80_columns_and_escapes_untrusted_text(tmp_path):
    t = _task(tmp_path, **{"spec.md": "# Task <script>\nWrite `x` for any length n | m, in float16 and bfloat16.\n",
                           "test_k.py": "import torch\ndef test_k():\n    x = torch.rand(256)\n",
                           "kernel.py": KERNEL})
    md = markdown(review_task(t))
    assert "<script>" not in md
    long = [line for line in md.splitlines() if len(line) > 80 and not line.startswith("|")]
    assert not long, long


def test_cli_batch_summary_and_exit_codes(tmp_path):
    good = _task(tmp_path / "good", **{"kernel.py": KERNEL, "run.log": "$ pytest\n3 passed in 1.0s\n"})
    bad = _task(tmp_path / "bad", **{"kernel.py": KERNEL,
                                     "run.log": "Traceback (most recent call last):\n"
                                                "RuntimeError: CUDA error: an illegal memory access was encountered\n"})
    out = tmp_path / "reviews"
    r = subprocess.run([sys.executable, "-m", "cli", "review", str(good), str(bad), str(tmp_path / "missing"),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert "missing: not a folder" in r.stderr
    assert (out / "good.md").exists() and (out / "bad.md").exists() and (out / "summary.md").exists()
    assert "| bad | FAIL |" in r.stdout and "| good |" in r.stdout
    j = subprocess.run([sys.executable, "-m", "cli", "review", "--format", "json", str(good)], capture_output=True,
                       text=True)
    assert j.returncode == 0 and json.loads(j.stdout)["schema"] == "diagnose.review/1"
    e = subprocess.run([sys.executable, "-m", "cli", "review", str(tmp_path / "missing")], capture_output=True, text=True)
    assert e.returncode == 2


def test_triage_session_from_reviews(tmp_path):
    from diagnose.store import Store

    _task(tmp_path / "tasks" / "one", **{"kernel.py": KERNEL, "run.log": "$ pytest\n3 passed in 1.0s\n"})
    _task(tmp_path / "tasks" / "two", **{"kernel.py": KERNEL,
                                         "run.log": "RuntimeError: CUDA error: an illegal memory access was encountered\n"})
    db = tmp_path / "s.db"
    r = subprocess.run([sys.executable, "-m", "cli", "triage", "--db", str(db), "--review", str(tmp_path / "tasks")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = {Path(x.path).name: x for x in Store(db).rows()}
    assert set(rows) == {"one", "two"}
    assert rows["two"].family == "illegal-memory-access"
    task = Store(db).task(rows["two"].id)
    assert any("review validity: fail" in n for n in task.diagnosis.notes)


def test_an_env_snapshot_in_the_task_is_judged(tmp_path):
    import shutil

    src = Path(__file__).parent / "fixtures" / "env"
    snaps = sorted(src.rglob("*.json"))
    t = _task(tmp_path, **{"kernel.py": KERNEL, "run.log": "$ pytest\n3 passed in 1.0s\n"})
    judged = []
    for snap in snaps[:6]:
        shutil.copy(snap, t / "env.json")
        r = review_task(t)
        env = next(x for x in r.readers if x.reader == "env")
        assert env.status == "ok", env.why
        judged.append(bool(env.findings))
        assert any("env:" in e for e in env.examined)
    assert any(judged), "no env fixture produced a finding"


def test_cuda_block_sizes_come_from_the_parse(tmp_path):
    from diagnose.review.completeness import block_sizes

    cu = tmp_path / "k.cu"
    cu.write_text("#define TILE 32\n#define N 7\n__global__ void k(float* x) {}\n"
                  "void launch(float* x) { const int threads = 256; int blocks = 4; k<<<blocks, threads>>>(x); }\n")
    assert block_sizes([cu]) == {32, 256}
