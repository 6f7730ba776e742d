"""Output injection: names and log lines that try to be formulas, HTML, markup or terminal escapes."""
from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from findings.render import csv_cell, md_code, md_escape

ROOT = Path(__file__).resolve().parent.parent
OOM = "RuntimeError: CUDA error: out of memory"


def cli(cwd, *args):
    p = subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd, capture_output=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200"))
    return p


def _unescaped_pipes(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row))


def test_csv_cells_cannot_be_formulas(tmp_path):
    for name in ("=HYPERLINK(1).log", "+1.log", "-2.log", "@SUM.log"):
        (tmp_path / name).write_text(f"=cmd|' /C calc'!A0 {OOM}\n")
    p = cli(tmp_path, "classify", "-f", "csv", "-j", "1", "--", "=HYPERLINK(1).log", "+1.log", "-2.log", "@SUM.log")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout.decode())))
    assert len(rows) == 4
    for r in rows:
        for key, value in r.items():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), (key, value)
    assert {r["path"] for r in rows} == {"'=HYPERLINK(1).log", "'+1.log", "'-2.log", "'@SUM.log"}
    assert all(r["root_text"].startswith("'=cmd") for r in rows)
    assert csv_cell("0.85") == "0.85" and csv_cell("\tx") == "'\tx"


def test_markdown_never_renders_html_or_breaks_the_table(tmp_path):
    evil = "<img src=x onerror=alert(1)>|`x`.log"
    (tmp_path / evil).write_text(f"<script>alert(1)</script> `tick` | pipe {OOM}\n")
    p = cli(tmp_path, "classify", "-f", "markdown", "-j", "1", evil)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    prose = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", out)       # code spans are literal text, never HTML
    assert "script" in out and not re.search(r"(?<!\\)<", prose)
    row = next(line for line in out.splitlines() if "img" in line)
    assert _unescaped_pipes(row) == 8            # 7 columns: the name and the line stay in their cells
    assert md_escape("<b>") == "\\<b\\>"
    assert md_code("a ``b`` | c") == "```a ``b`` \\| c```"


def test_terminal_output_with_markup_and_escapes_in_names(tmp_path):
    d = tmp_path / "runs[bold]x["            # its files' paths read ".../runs[bold]x[/bold]..."
    d.mkdir()
    name = "bold]\x1b]0;pwned\x07x.log"
    (d / name).write_text(f"\x1b]52;c;ZXZpbA==\x07 {OOM}\n")
    (d / "ok.log").write_text("fine\n")
    for args in (("classify", "-j", "1", d), ("explain", d / name), ("clusters", d)):
        p = cli(tmp_path, *args)
        assert p.returncode == 0, (args, p.stderr.decode())
        assert b"\x1b]" not in p.stdout and b"\x07" not in p.stdout, args
        assert b"MarkupError" not in p.stderr
    p = cli(tmp_path, "explain", d / "gone\x1b[2J.log")
    assert p.returncode == 2 and b"\x1b" not in p.stderr and b"\\e[2J" in p.stderr


def test_one_markdown_escaper():
    # the report, the store and clusters escape through findings.render; none keeps its own table
    for rel in ("diagnose/report.py", "diagnose/store.py", "cli/commands/clusters.py"):
        src = (ROOT / rel).read_text()
        assert "md_escape" in src and "maketrans" not in src and '.replace("|"' not in src, rel
