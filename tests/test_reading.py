"""Opening logs (signatures/reading.py): truncated and multi-member gzip, UTF-16, one gzip test; and the
output side of a batch: -o checked before the batch, the table at 80 columns."""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from signatures import reading
from signatures.matcher import default_matcher

ROOT = Path(__file__).resolve().parent.parent
IMA = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
OOM = "RuntimeError: CUDA error: out of memory\n"


@pytest.fixture(scope="module")
def m():
    return default_matcher()


def _decodable(data: bytes) -> bytes:
    return zlib.decompressobj(31).decompress(data)


@pytest.mark.parametrize("keep", [0.5, 0.9, -12, -3])
def test_a_truncated_gzip_keeps_every_byte_it_could_decode(m, tmp_path, keep):
    body = ("ok line\n" * 100000 + IMA + "tail\n" * 10).encode()
    data = gzip.compress(body)
    cut = int(len(data) * keep) if keep > 0 else len(data) + keep
    p = tmp_path / "cut.log.gz"
    p.write_bytes(data[:cut])
    with reading.open_log(p) as f:
        got = f.read()
        assert f.truncated
    assert got == _decodable(data[:cut]) and body.startswith(got)
    r = m.scan_file(p)
    assert r.bytes == len(got) and r.error.startswith("truncated gzip")
    assert (len(got) > body.index(b"RuntimeError")) == any(x.family == "illegal-memory-access" for x in r.matches)


def test_concatenated_members_and_trailing_zeros(m, tmp_path):
    p = tmp_path / "multi.gz"
    p.write_bytes(gzip.compress(b"first\n") + gzip.compress(IMA.encode()) + b"\0" * 512)
    r = m.scan_file(p)
    assert r.error is None and [x.line for x in r.matches if x.family == "illegal-memory-access"] == [2]


def test_a_gzip_bomb_is_decoded_in_bounded_steps(tmp_path):
    p = tmp_path / "bomb.gz"
    p.write_bytes(gzip.compress(b"a\n" * (32 << 20)))          # 64 MB from ~64 KB
    with reading.open_log(p) as f:
        sizes = set()
        while block := f.read(1 << 20):
            sizes.add(len(block))
            assert len(f._out) <= 2 * reading.STEP             # never the whole thing at once
    assert max(sizes) == 1 << 20


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_utf16_logs_are_read_not_called_binary(m, tmp_path, codec):
    text = "héllo\n" + "x\n" * 3 + OOM
    raw = text.encode(codec)
    if codec == "utf-16-be":
        raw = b"\xfe\xff" + raw
    p = tmp_path / "win.log"
    p.write_bytes(raw)
    r = m.scan_file(p)
    assert r.error is None
    assert [x.line for x in r.matches if x.family == "oom"] == [5]
    gz = tmp_path / "win.log.gz"
    gz.write_bytes(gzip.compress(raw))
    assert [x.line for x in m.scan_file(gz).matches if x.family == "oom"] == [5]


def test_one_gzip_test_for_the_whole_project(tmp_path):
    # the magic bytes are checked in one place; the TUI's log view decides as the matcher does
    hits = [str(p.relative_to(ROOT)) for pkg in ("signatures", "diagnose", "probes", "tui", "cli", "findings")
            for p in (ROOT / pkg).rglob("*.py") if "\\x1f\\x8b" in p.read_text() or 'endswith(".gz")' in p.read_text()]
    assert hits == ["signatures/reading.py"]
    from tui.log_source import LogSource

    p = tmp_path / "no-suffix"          # gzip without .gz in its name
    p.write_bytes(gzip.compress(("a\n" + IMA).encode()))
    src = LogSource(str(p))
    assert len(src) == 2 and "illegal memory access" in src.line(1)


def _cli(*args, cwd=ROOT, **env):
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT), **env))


def test_a_bad_output_path_fails_before_the_batch(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(OOM)
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    # were the batch run first, it would block reading the FIFO (no writer is ever opened): it is not
    writer = os.open(fifo, os.O_RDWR)       # keeps a writer, so a read would wait for ever
    try:
        p = _cli("classify", logs, fifo, "-o", "/nonexistent/dir/out.txt")
    finally:
        os.close(writer)
    assert p.returncode == 2 and "/nonexistent/dir/out.txt: cannot write the output there" in p.stderr
    assert "Traceback" not in p.stderr
    p = _cli("classify", logs, "-o", tmp_path)
    assert p.returncode == 2 and "is a directory" in p.stderr


def test_output_replaces_the_file_only_when_complete(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(OOM)
    out = tmp_path / "out.jsonl"
    out.write_text("previous\n")
    p = _cli("classify", logs, "-f", "jsonl", "-o", out)
    assert p.returncode == 0 and '"family": "oom"' in out.read_text()
    assert [x.name for x in tmp_path.iterdir() if x.name.endswith(".tmp")] == []


def test_the_table_fits_80_columns_and_keeps_every_row(tmp_path):
    logs = tmp_path / "logs"
    (logs / "a-rather-long-directory-name-for-folding" / "deeper").mkdir(parents=True)
    for i in range(5):
        (logs / "a-rather-long-directory-name-for-folding" / "deeper" / f"task-{i:04d}-with-a-long-name.log").write_text(
            "x\n" * i + OOM)
    (logs / "ok.log").write_text("fine\n")
    p = _cli("classify", "-j", "1", logs, COLUMNS="80")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert max(len(x) for x in lines) <= 80
    body = lines[lines.index(next(x for x in lines if x.startswith("┡"))) + 1:
                 lines.index(next(x for x in lines if x.startswith("└")))]
    assert sum("oom" in x for x in body) == 5 and sum("none" in x for x in body) == 1
    assert "6 logs" in p.stdout
    assert any(f"{i + 1}: RuntimeError" in x for x in body for i in range(5))
