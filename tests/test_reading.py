"""Opening logs (signatures/reading.py): truncated and multi-member gzip, UTF-16, one gzip test; and the
output side of a batch: -o checked before the batch, the table at 80 columns."""
from __future__ import annotations

import gzip
import os
import re
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
            for p in (ROOT / pkg).rglob("*.py") if "\\x1f\\x8b" in p.read_text() or '.endswith(".gz")' in p.read_text()]
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
    rows = [x.split() for x in lines if not x.startswith(("│", "┃", "┏", "┡", "└")) and len(x.split()) > 2
            and x.split()[1] in ("oom", "none?", "none")]
    # "fine" shows no failure and no progress either: a `none-silent`, marked `none?` when its measured
    # confidence is under the table's low mark
    from diagnose.engine import confidence_of
    from diagnose.report import LOW_CONFIDENCE

    silent = "none?" if confidence_of("none-silent") < LOW_CONFIDENCE else "none"
    assert sum(r[1] == "oom" for r in rows) == 5 and sum(r[1] == silent for r in rows) == 1
    assert "6 logs" in p.stdout
    assert all(any(x.strip().startswith(f"{i + 1}: RuntimeError") for x in lines) for i in range(5))


def test_the_fast_table_is_what_rich_would_print(tmp_path):
    # the rows are written as text for speed: byte for byte what rich printed one row at a time
    import io

    from rich.console import Console
    from rich.text import Text

    from diagnose import report
    from diagnose.model import Diagnosis, Line

    res = [Diagnosis(path=f"/r/x{i}/{'é' * (i % 3)}t\tab-{i}.log", family=f, confidence=c, signature=sig,
                     root=Line(3, "  [rank0]: RuntimeError:\tCUDA error " + "y" * (i * 7)) if f != "none" else None)
           for i, (f, c, sig) in enumerate([("oom", 0.85, "oom.cuda"), ("none", 0.9, None), ("unknown", 0.5, None),
                                            ("oom", 0.3, "fallback.oom"), ("compile-error", 0.55, "compile-error.x")])]
    for width in (60, 80, 132):
        for colour in (False, True):
            def console():
                return Console(file=io.StringIO(), width=width, force_terminal=colour, color_system="256" if colour else None)
            fast, slow = console(), console()
            report.write_table(res, fast)
            # the same rows through rich, one print each (as write_table did before)
            rows = fast.file.getvalue()
            ref = _rich_rows(report, res, slow, Text)
            if not colour:
                assert rows.startswith(ref), width            # byte for byte
            else:                                             # the same text and styles; rich may split a
                strip = re.compile(r"\x1b\[[0-9;]*m").sub     # styled run in two at a tab stop
                assert strip("", rows).startswith(strip("", ref)), width
                assert "\x1b[36m" in rows and "\x1b[1;31m" in rows


def _rich_rows(report, results, console, Text):
    import os

    width = max(60, console.width or 80)
    paths = [d.path for d in results if d.path != "-"]
    base = os.path.commonpath(paths) if len(paths) > 1 else ""
    shown = [os.path.relpath(d.path, base) if base else d.path for d in results]
    fam_w = max([len(report.family_label(d)[0]) for d in results] + [6])
    wide = width >= 110
    org_w = max([len(d.origin or "-") for d in results] + [6]) if wide else 0
    path_w = min(max([len(p) for p in shown] + [4]), max(16, (width - fam_w - org_w - 8) // 2))
    rest = width - path_w - fam_w - org_w - (8 if wide else 7)
    if base:
        console.print(Text(f"in {base}/", style="bold"))
    console.print(Text(f"{'path':<{path_w}} {'family':<{fam_w}} conf " + (f"{'origin':<{org_w}} " if wide else "")
                       + "signature / title", style="bold"), no_wrap=True, overflow="ellipsis")
    for d, p in zip(results, shown):
        label, style = report.family_label(d)
        row = Text()
        row.append(f"{report.visible(report.shorten_left(p, path_w)):<{path_w}} ")
        row.append(f"{label:<{fam_w}} ", style=style)
        row.append(f"{d.confidence:.2f} ", style="yellow" if d.confidence < report.LOW_CONFIDENCE else "")
        if wide:
            row.append(f"{d.origin or '-':<{org_w}} ", style="dim")
        row.append(report.visible(report._sig_or_title(d))[:max(rest, 8)], style="cyan")
        console.print(row, no_wrap=True, overflow="ellipsis", crop=True)
        if d.root:
            line = report.visible(f"{d.root.line}: {report.strip_prefix(d.root.text).strip()}")
            line = line if len(line) <= width - 4 else line[:width - 5] + "…"
            console.print(Text("    " + line, style="dim"), no_wrap=True, overflow="ellipsis", crop=True)
    return console.file.getvalue()
