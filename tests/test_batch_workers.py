"""Batch workers get their configuration from the pool initializer: spawn gives what fork gives."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
CUSTOM = "frobnicator exploded at stage 7\n"

SIG = '''family = "illegal-memory-access"

[[signature]]
id = "t.frobnicator"
origin = "kernel-logic"
frameworks = ["cuda"]
role = "root"
priority = 80
title = "the frobnicator exploded"
patterns = ['frobnicator exploded at stage (?P<stage_int>\\d+)']
explanation = "e"
fix = ["f"]
next_step = "n"
no_match = ["frobnicator exploded"]
[[signature.match]]
line = "frobnicator exploded at stage 7"
facts = { stage_int = 7 }
'''


def _run(method: str, logs: Path, sigs: Path, *extra) -> list[dict]:
    p = subprocess.run([sys.executable, "-m", "cli", "classify", "-j", "2", "--env",
                        str(FIX / "snapshots" / "h100-healthy.madeup.json"), "--signatures", str(sigs),
                        str(logs), *extra], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), DIAGNOSE_START_METHOD=method))
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_spawn_gives_what_fork_gives_with_env_and_signatures(tmp_path, fmt):
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(6):
        (logs / f"oom{i}.log").write_text("x\n" * i + OOM)
        (logs / f"custom{i}.log").write_text("y\n" * i + CUSTOM)
    sigs = tmp_path / "sigs"
    sigs.mkdir()
    (sigs / "custom.toml").write_text(SIG)
    fork = _run("fork", logs, sigs, "-f", fmt)
    spawn = _run("spawn", logs, sigs, "-f", fmt)
    assert spawn == fork
    if fmt == "jsonl":
        got = {Path(d["path"]).name: d for d in map(json.loads, spawn.splitlines())}
        assert got["custom3.log"]["signature"] == "t.frobnicator"           # --signatures reached the workers
        assert got["custom3.log"]["facts"]["stage_int"] == 7
        assert any("H100" in e for e in got["oom2.log"]["env"])              # --env reached the workers


def test_an_unknown_start_method_is_a_clear_error(tmp_path):
    (tmp_path / "a.log").write_text(OOM)
    p = subprocess.run([sys.executable, "-m", "cli", "classify", "-j", "2", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), DIAGNOSE_START_METHOD="teleport"))
    assert p.returncode == 2 and "DIAGNOSE_START_METHOD" in p.stderr and "Traceback" not in p.stderr


def test_the_start_method_is_chosen_by_the_environment(monkeypatch):
    from diagnose import batch

    monkeypatch.setenv("DIAGNOSE_START_METHOD", "spawn")
    assert batch.start_method() == "spawn"
    monkeypatch.delenv("DIAGNOSE_START_METHOD")
    assert batch.start_method() == "fork"
