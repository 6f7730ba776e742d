"""Whole machines (issue #18): each made-up snapshot gives exactly the expected rows (no false ones) with
exact fixes, one row per cause; and no mutation of any snapshot field crashes the checks or the report.

The snapshots are written by tests/fixtures/env/make_machines.py (MADE-UP: real version strings and NVML
messages, not recorded on those machines).
"""
import copy
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.commands.env import write_report
from diagnose.env import run_checks
from probes.schema import SnapshotError, validate

MACHINES = Path(__file__).parent / "fixtures" / "env" / "machines"
ROOT = Path(__file__).parent.parent
DIAGNOSE = [sys.executable, "-m", "cli"]


def load(name):
    return json.loads((MACHINES / f"{name}.madeup.json").read_text())


# machine -> {check id: (severity, [substrings of title + fix])}; every other non-info finding is a false one.
EXPECTED = {
    "hgx-h200-8gpu": {},
    "rtx5090-old-torch": {
        "env.gpu.arch-not-in-torch": ("error", ["RTX 5090, CC 12.0", "torch 2.5.1+cu124",
                                                "pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128"]),
    },
    "t4-driver470-cu121": {
        "env.driver.too-old": ("error", ["driver 470.239.06 (CUDA 11.4)", "torch 2.1.2+cu121 (CUDA 12.1)", ">= 525.60.13",
                                         "pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu118",
                                         "cuda-compat-12-1"]),
        "env.gpu.no-bf16": ("warning", ["Tesla T4, CC 7.5"]),
    },
    "forward-compat-container": {},
    "4x-v100-triton": {
        "env.gpu.no-bf16": ("warning", ["GPUs 0, 1, 2, 3 (4x Tesla V100-SXM2-32GB, CC 7.0)", "float16"]),
    },
    "two-toolkits-gcc13": {
        "env.toolkit.host-compiler-too-new": ("error", ["gcc (/usr/bin/gcc) and g++ (/usr/bin/g++) 13.3.0",
                                                        "nvcc 12.2.140", "CUDAHOSTCXX=/usr/bin/g++-12"]),
        "env.toolkit.several-cuda": ("warning", ["12.2 (/usr/local/cuda-12.2/bin/nvcc)", "12.8"]),
    },
    "mig-a100-ecc-thermal": {
        "env.gpu.ecc-uncorrectable": ("error", ["GPU 0 (", "reset before use"]),
        "env.gpu.mig": ("warning", ["2 instance(s)", "MIG 3g.40gb 40.0 GiB"]),
        "env.gpu.thermal": ("warning", ["GPUs 0, 1 (2x NVIDIA A100-SXM4-80GB, CC 8.0)"]),
    },
    "jax-libtpu-neuron-gpu-host": {
        "env.accelerators.neuron-mismatch": ("error", ["torch-neuronx 2.9.0.2.15.32035", "torch 2.7.1",
                                                       "pip install torch==2.9.0"]),
        "env.accelerators.libtpu-on-gpu-host": ("warning", ["libtpu 0.0.21", "JAX_PLATFORMS=cuda"]),
    },
    "lost-gpu": {
        "env.gpu.lost": ("error", ["GPU 3", "GPU is lost"]),
        "env.gpu.xid": ("error", ["Xid 79", "0000:4a:00"]),
    },
}
# infos that must be there too (shown with --info): the facts a reviewer should see
EXPECTED_INFO = {
    "forward-compat-container": ["env.driver.forward-compat"],
    "rtx5090-old-torch": ["env.driver.cuda-bindings-too-new"],
    "jax-libtpu-neuron-gpu-host": ["env.accelerators.neuron-without-device"],
}


def test_every_machine_has_a_fixture_and_an_expectation():
    assert {p.name.removesuffix(".madeup.json") for p in MACHINES.glob("*.json")} == set(EXPECTED)


def test_the_fixtures_are_what_the_generator_writes(tmp_path):
    sys.path.insert(0, str(MACHINES.parent))
    try:
        import make_machines
    finally:
        sys.path.pop(0)
    for name, snap in make_machines.M.items():
        assert json.loads(json.dumps(snap)) == load(name), f"{name}: rerun make_machines.py"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_machine_gives_the_expected_rows_and_no_false_ones(name):
    fs = run_checks(validate(load(name), name))
    shown = {f.id: f for f in fs if f.severity != "info"}
    assert set(shown) == set(EXPECTED[name]), [(f.id, f.title) for f in fs if f.severity != "info"]
    for fid, (severity, parts) in EXPECTED[name].items():
        f = shown[fid]
        text = " ".join((f.title + " " + f.fix).split())
        assert f.severity == severity, (fid, f.severity)
        for p in parts:
            assert p in text, (fid, p, text)
    assert len([f for f in fs if f.id in shown]) == len(shown), "one cause, one row"
    for fid in EXPECTED_INFO.get(name, []):
        assert any(f.id == fid for f in fs), fid


def test_forward_compat_overrides_the_static_verdict():
    s = load("forward-compat-container")
    assert not [f for f in run_checks(s) if f.id == "env.driver.too-old"]
    s["cuda"]["driver_api_version"] = s["probes"]["cuda"]["driver_api_version"] = "11.4"   # no compat libcuda
    s["frameworks"]["torch"]["is_available"] = True                                        # but torch worked
    fs = run_checks(s)
    assert not [f for f in fs if f.id == "env.driver.too-old"]          # observed success wins
    s["frameworks"]["torch"].update(is_available=False, device_count=0)
    assert [f for f in run_checks(s) if f.id == "env.driver.too-old" and f.severity == "error"]


def test_forward_compat_on_a_geforce_is_an_error():
    s = load("forward-compat-container")
    s["gpus"][0]["name"] = "NVIDIA GeForce RTX 4090"
    (f,) = [f for f in run_checks(s) if f.id == "env.driver.forward-compat"]
    assert f.severity == "error" and "not supported" in f.title


def test_triton_with_a_cuda13_ptxas_cannot_target_volta():
    s = load("4x-v100-triton")
    s["frameworks"]["triton"].update(version="3.9.0", ptxas_version="13.0.88")
    s["driver"].update(version="580.95.05", cuda_version="13.0")
    (f,) = [f for f in run_checks(s) if f.id == "env.gpu.triton-cannot-target"]
    assert f.severity == "error" and f.title.startswith("GPUs 0, 1, 2, 3") and "TRITON_PTXAS_PATH" in f.fix


def test_unknown_uuid_in_cuda_visible_devices():
    s = load("hgx-h200-8gpu")
    s["env"]["CUDA_VISIBLE_DEVICES"] = "GPU-deadbeef-0000"
    (f,) = [f for f in run_checks(s) if f.id == "env.env.cuda-visible-devices"]
    assert f.severity == "error" and "GPU-deadbeef-0000" in f.title and "no GPU is visible" in f.title
    s["env"]["CUDA_VISIBLE_DEVICES"] = s["gpus"][2]["uuid"][:12]
    assert not [f for f in run_checks(s) if f.id == "env.env.cuda-visible-devices"]


# -- robustness: every field's type mutated, every key deleted ---------------------------------------------

# one value of each JSON type (and the empty ones), plus deleting the key
MUTANTS = (None, 0, True, "x" * 300, [None], {}, "")


def _paths(x, path=()):
    yield path
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x[:2]):
            yield from _paths(v, path + (i,))


_DELETE = object()


def _set(root, path, value):
    x = root
    for p in path[:-1]:
        x = x[p]
    if value is _DELETE:
        if isinstance(x, dict):
            del x[path[-1]]
        else:
            x.pop(path[-1])
    else:
        x[path[-1]] = value


def test_every_single_field_mutation_and_deletion_is_judged_without_a_traceback():
    """Every key of two rich machines (a lost GPU among 8; JAX, libtpu and Neuron beside torch), each set to
    a value of every JSON type and deleted: the checks never crash (not even into env.probe.check-crashed)
    and the report renders (for the None mutant of each key; rendering is 4x the cost of judging)."""
    from rich.console import Console

    crashed, runs = [], 0
    for name in ("lost-gpu", "jax-libtpu-neuron-gpu-host"):
        base = load(name)
        base["gpus"][0]["mig"] = {"enabled": True, "devices": [{"index": 0, "name": "MIG 3g.40gb", "uuid": "MIG-1",
                                                                "memory_total_bytes": 1 << 30}]}
        base["libraries"] = {"libcudnn": {"candidates": [{"path": "/x/libcudnn.so.9", "version": "9.1.0",
                                                          "via": "LD_LIBRARY_PATH", "soname": "libcudnn.so.9"}]}}
        base["host"]["amd_gpus"] = [{"node": 1, "gfx": "gfx90a"}]
        for path in list(_paths(base))[1:]:
            for value in MUTANTS + (_DELETE,):
                s = copy.deepcopy(base)
                _set(s, path, value)
                runs += 1
                try:
                    s = validate(s, name)
                except SnapshotError:
                    continue                    # a clear exit-2 message, not a traceback
                fs = run_checks(s)              # raises on any traceback outside a check
                bad = [f for f in fs if f.id == "env.probe.check-crashed"]
                if bad:
                    crashed.append((name, path, repr(value)[:20], bad[0].title[:120]))
                if value is None:
                    write_report(s, fs, console=Console(file=io.StringIO(), width=80), show_info=True)
    assert runs > 2500, runs
    assert not crashed, crashed[:10]


def test_deep_and_huge_and_odd_files_exit_2_with_a_message(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(65 << 20)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"schema": "diagnose.env/1"}))
    for p, words in ((deep, "nested too deeply"), (big, "larger than a snapshot"), (empty, "")):
        r = subprocess.run(DIAGNOSE + ["env", "--from", str(p)], capture_output=True, text=True, cwd=ROOT, timeout=60)
        if p is empty:      # a data-free snapshot is not a healthy machine
            assert r.returncode == 1 and "env.probe.no-data" in r.stdout, r.stdout + r.stderr
        else:
            assert r.returncode == 2 and p.name in r.stderr and words in r.stderr, r.stderr
            assert "Traceback" not in r.stderr


def test_exit_codes_follow_fail_on_and_a_pipe_to_head_exits_0():
    p = str(MACHINES / "4x-v100-triton.madeup.json")           # warnings only
    run = lambda *a: subprocess.run(DIAGNOSE + ["env", "--from", p, *a], capture_output=True, text=True,  # noqa: E731
                                    cwd=ROOT, timeout=60)
    assert run().returncode == 0
    assert run("--fail-on", "warning").returncode == 1
    assert run("--fail-on", "never").returncode == 0
    lost = str(MACHINES / "lost-gpu.madeup.json")
    r = subprocess.run(" ".join(DIAGNOSE) + f" env --from {lost} --info | head -1", shell=True, capture_output=True,
                       text=True, cwd=ROOT, timeout=60, executable="/bin/bash")
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr
    r = subprocess.run(f"set -o pipefail; {' '.join(DIAGNOSE)} env --from {p} --info | head -1", shell=True,
                       capture_output=True, text=True, cwd=ROOT, timeout=60, executable="/bin/bash")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("fmt", ["jsonl", "markdown", "sarif"])
def test_findings_render_in_every_format(fmt):
    r = subprocess.run(DIAGNOSE + ["env", "--from", str(MACHINES / "lost-gpu.madeup.json"), "--format", fmt],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 1 and "env.gpu.lost" in r.stdout.replace("\\", "")
    if fmt == "jsonl":
        rows = [json.loads(line) for line in r.stdout.splitlines()]
        assert rows[0]["reader"] == "env" and rows[0]["facts"]["section"] == "gpu"
    if fmt == "sarif":
        assert json.loads(r.stdout)["version"] == "2.1.0"


def test_snapshot_json_records_the_tool_and_keeps_the_old_finding_keys(tmp_path):
    r = subprocess.run(DIAGNOSE + ["env", "--json", "--from", str(MACHINES / "lost-gpu.madeup.json")],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    snap = json.loads(r.stdout)
    assert snap["judged_by"]["name"] == "diagnose"
    f = snap["findings"][0]
    assert {"id", "severity", "section", "message", "fix", "title", "reader", "facts"} <= set(f)


# -- the published contract: docs/env-schema.json and docs/env-checks.md ----------------------------------

def test_the_check_list_in_docs_is_the_registry():
    from diagnose.env.registry import checks_markdown

    assert (ROOT / "docs" / "env-checks.md").read_text() == checks_markdown(), "run `make env-doc`"


def test_judged_snapshots_and_a_live_one_match_the_published_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from cli.commands.env import judge

    schema = json.loads((ROOT / "docs" / "env-schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    snaps = [load(n) for n in EXPECTED] + [json.loads(p.read_text()) for p in
                                           (ROOT / "tests" / "fixtures" / "snapshots").glob("*.json")]
    for s in snaps:
        judge(s, source="x.json")
        errors = sorted(v.iter_errors(s), key=str)
        assert not errors, errors[0]
    live = subprocess.run(DIAGNOSE + ["env", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    snap = json.loads(live.stdout)
    assert snap["tool"]["name"] == "diagnose" and snap["tool"]["version"]
    errors = sorted(v.iter_errors(snap), key=str)
    assert not errors, errors[0]
