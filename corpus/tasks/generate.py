"""Run the whole-task corpus for real: each task's commands in a fresh copy, logs normalised, outputs kept.

    python -m corpus.tasks.generate              # every task whose tools are installed
    python -m corpus.tasks.generate --only ID    # some of them (ids or fnmatch patterns)
    python -m corpus.tasks.generate --check      # rerun and report every task whose logs differ

Tasks are declared in corpus/tasks/tasks.toml; a task folder corpus/tasks/<id>/ holds its sources
(spec, kernel, test, benchmark) and, after a run, what running them produced (logs, tensors, results).
Commands run with the venv's python first on PATH, stdout and stderr merged as a terminal shows them.
"""
from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from corpus.generate import _path_replacements, normalise, run_env

TASKS = Path(__file__).resolve().parent
MANIFEST = TASKS / "tasks.toml"
WORK = TASKS.parent / "_work" / "tasks"
MODULES = {"torch": "torch", "triton": "triton", "jax": "jax", "numpy": "numpy", "pytest": "pytest"}


@dataclass
class Task:
    id: str
    framework: str
    runs: list[list[str]]
    outputs: list[str] = field(default_factory=list)
    volatile: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    expect: dict = field(default_factory=dict)
    timeout: int = 600

    @property
    def folder(self) -> Path:
        return TASKS / self.id

    def produced(self) -> list[str]:
        return [log for _, log in self.runs if log] + list(self.outputs)


def load_tasks(path: Path = MANIFEST) -> list[Task]:
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    known = set(Task.__dataclass_fields__)
    return [Task(**{k: v for k, v in t.items() if k in known}) for t in doc.get("task", [])]


def missing_needs(t: Task) -> list[str]:
    out = []
    for n in t.needs:
        if n in MODULES:
            if importlib.util.find_spec(MODULES[n]) is None:
                out.append(n)
        elif shutil.which(n) is None:
            out.append(n)
    return out


def run_task(t: Task, work_root: Path = WORK) -> dict[str, bytes]:
    """Run a task in a fresh copy of its sources; return {file name: content} of its logs and outputs."""
    work = work_root / t.id
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    produced = set(t.produced())
    for f in t.folder.iterdir():
        if f.is_file() and f.name not in produced:
            shutil.copy2(f, work / f.name)
    out: dict[str, bytes] = {}
    for command, log in t.runs:
        proc = subprocess.Popen(["bash", "-c", command], cwd=work, env=run_env(work, {}),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            text, _ = proc.communicate(timeout=t.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            text, _ = proc.communicate()
            text += f"\n[corpus.tasks.generate: killed after {t.timeout} s]\n".encode()
        if log:
            text = f"$ {command}\n" + text.decode("utf-8", "replace")
            if log in t.volatile:        # measurements: keep the numbers, hide only the paths
                for old, new in _path_replacements(work):
                    text = text.replace(old, new)
            else:
                text = normalise(text, work)
            out[log] = text.encode()
    for name in t.outputs:
        if (work / name).is_file():
            out[name] = (work / name).read_bytes()
    shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", metavar="ID")
    ap.add_argument("--check", action="store_true", help="rerun and report tasks whose logs differ; write nothing")
    args = ap.parse_args(argv)
    tasks = [t for t in load_tasks() if not args.only or any(fnmatch.fnmatch(t.id, p) for p in args.only)]
    differ = 0
    for t in tasks:
        miss = missing_needs(t)
        if miss:
            print(f"skip {t.id}: needs {', '.join(miss)}")
            continue
        files = run_task(t)
        if args.check:
            bad = [n for n, data in files.items() if n not in t.volatile and n.endswith(".log")
                   and (t.folder / n).read_bytes() != data] if all((t.folder / n).exists() for n in files) else ["(missing)"]
            print(f"{'DIFF' if bad else 'same'} {t.id} {' '.join(bad)}")
            differ += bool(bad)
            continue
        for name, data in files.items():
            (t.folder / name).write_bytes(data)
        print(f"wrote {t.id}: {', '.join(sorted(files))}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
