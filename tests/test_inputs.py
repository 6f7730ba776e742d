"""Hostile inputs to a batch: FIFOs, devices, dangling links, loops, unreadable directories.

Each is a row with a clear error, nothing hangs, and every argument is accounted for.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diagnose import inputs

ROOT = Path(__file__).resolve().parent.parent
OOM = "RuntimeError: CUDA error: out of memory\n"


def classify(*args, timeout=60):
    p = subprocess.run([sys.executable, "-m", "cli", "classify", "-f", "jsonl", "-j", "1", *map(str, args)],
                       cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0, p.stderr
    return {Path(d["path"]).name: d for d in map(json.loads, p.stdout.splitlines())}


@pytest.fixture
def tree(tmp_path):
    d = tmp_path / "logs"
    (d / "sub").mkdir(parents=True)
    (d / "a.log").write_text(OOM)
    (d / "sub" / "b.log").write_text("all good\n")
    os.mkfifo(d / "pipe.log")
    (d / "dangling.log").symlink_to(tmp_path / "nowhere.log")
    (d / "sub" / "loop").symlink_to(d)
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "c.log").write_text(OOM)
    (d / "linked").symlink_to(other)
    return tmp_path


def test_special_files_in_a_directory_are_rows_and_nothing_hangs(tree):
    got = classify(tree / "logs", timeout=60)        # a FIFO opened for reading would block forever
    assert got["a.log"]["family"] == "oom"
    assert got["b.log"]["family"] == "none"
    assert got["c.log"]["family"] == "oom"           # a symlinked directory is followed
    assert "FIFO" in got["pipe.log"]["error"] and got["pipe.log"]["confidence"] == 0.0
    assert "dangling symbolic link" in got["dangling.log"]["error"]
    assert "already scanned" in got["loop"]["error"]


def test_every_argument_is_accounted_for(tree):
    fifo = tree / "arg.fifo"
    os.mkfifo(fifo)
    got = classify(fifo, "/dev/zero", tree / "missing.log", tree / "logs" / "dangling.log", tree / "logs" / "a.log")
    assert set(got) == {"arg.fifo", "zero", "missing.log", "dangling.log", "a.log"}
    assert "FIFO that gave no data" in got["arg.fifo"]["error"]      # no writer: no hang, and said so
    assert "character device" in got["zero"]["error"]
    assert got["missing.log"]["error"] == "no such file or directory"
    assert got["a.log"]["family"] == "oom"


def test_a_fifo_argument_with_a_writer_is_read_like_stdin(tmp_path):
    fifo = tmp_path / "live.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"exec 3>'{fifo}'; sleep 0.3; printf '{OOM.strip()}\\n' >&3"])
    try:
        got = classify(fifo)
    finally:
        writer.wait(timeout=10)
    assert got["live.fifo"]["family"] == "oom"


def test_unreadable_directories_are_rows(tmp_path, monkeypatch):
    # Tests run as root here, where chmod 000 does not stop reading: the refusal is simulated at scandir.
    top = tmp_path / "top"
    (top / "locked").mkdir(parents=True)
    (top / "ok.log").write_text(OOM)
    (tmp_path / "locked-arg").mkdir()
    real = os.scandir

    def scandir(path):
        if Path(path).name.startswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(inputs.os, "scandir", scandir)
    found, rows = inputs.collect([top, tmp_path / "locked-arg"])
    assert found == [str(top / "ok.log")]
    errors = {Path(r.path).name: r.error for r in rows}
    assert set(errors) == {"locked", "locked-arg"}
    assert all(e.startswith("cannot list this directory: permission denied") for e in errors.values())


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads mode-000 directories")
def test_mode_000_directory_for_real(tmp_path):
    d = tmp_path / "closed"
    d.mkdir()
    (d / "x.log").write_text(OOM)
    d.chmod(0)
    try:
        got = classify(d)
    finally:
        d.chmod(0o755)
    assert "permission denied" in got["closed"]["error"]


def test_the_missing_file_message_is_one(tmp_path):
    from diagnose.engine import diagnose_file, diagnose_files

    missing = tmp_path / "gone.log"
    one = diagnose_file(missing)
    many = diagnose_files([str(missing)])[0]
    _, rows = inputs.collect([missing])
    assert one.error == many.error == rows[0].error == "no such file or directory"


def test_a_fifo_is_not_hashed_into_a_triage_session(tmp_path):
    from diagnose.store import Store, ingest

    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    (tmp_path / "a.log").write_text(OOM)
    writer = os.open(fifo, os.O_RDWR)        # a writer that never writes: hashing it would block for ever
    try:
        report = ingest(Store(str(tmp_path / "s.db"), create=True), [fifo, tmp_path / "a.log"], jobs=1, progress=False)
    finally:
        os.close(writer)
    assert report.added == 1 and report.missing == [str(fifo)] and "FIFO" in report.problems[str(fifo)]
