"""The command line as a user runs it: formats, ordering, exit statuses, bad inputs in a batch."""
import csv
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures" / "sigs"
IMA = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def diagnose(*args, input=None):
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], capture_output=True,
                          input=input, timeout=120)


@pytest.fixture
def logs(tmp_path):
    d = tmp_path / "logs"
    (d / "sub").mkdir(parents=True)
    (d / "a.log").write_text("start\n" + IMA)
    (d / "sub" / "b.log").write_text("x\n" * 3 + OOM)
    (d / "c.log").write_text("all good\n")
    (d / "binary.bin").write_bytes(b"\x00\x01\x02ELF" * 100)
    (d / "empty.log").write_bytes(b"")
    (d / "latin1.log").write_bytes(b"caf\xe9 \xff\xfe\n" + IMA.encode())
    data = gzip.compress(("ok\n" * 50000 + IMA).encode())
    (d / "cut.log.gz").write_bytes(data[: len(data) // 2])
    (d / "whole.log.gz").write_bytes(gzip.compress(("ok\n" * 5 + OOM).encode()))
    return d


def rows(out: bytes):
    return [json.loads(line) for line in out.decode().splitlines()]


def test_jsonl_contract_and_bad_inputs(logs):
    r = diagnose("classify", "--format", "jsonl", "--signatures", FIX, logs, logs / "missing.log")
    assert r.returncode == 0, r.stderr
    got = {Path(x["path"]).name: x for x in rows(r.stdout)}
    for x in got.values():
        for field in ("path", "family", "origin", "signature", "confidence", "title", "root", "chain",
                      "facts", "fix", "next_step"):
            assert field in x
    assert got["a.log"]["family"] == "illegal-memory-access" and got["a.log"]["root"]["line"] == 2
    assert got["b.log"]["family"] == "oom" and got["b.log"]["facts"]["requested_bytes"] == 2 << 30
    assert got["c.log"]["family"] == "none"
    assert got["binary.bin"]["family"] == "unknown" and "binary" in got["binary.bin"]["error"]
    assert got["empty.log"]["family"] == "unknown" and "empty" in got["empty.log"]["title"]
    assert got["latin1.log"]["family"] == "illegal-memory-access"
    assert "gzip" in got["cut.log.gz"]["error"]
    assert got["whole.log.gz"]["family"] == "oom"
    assert got["missing.log"]["error"] == "no such file or directory"


def test_order_is_stable_whatever_jobs(logs):
    one = diagnose("classify", "--format", "jsonl", "--jobs", "1", logs).stdout
    two = diagnose("classify", "--format", "jsonl", "--jobs", "2", logs).stdout
    assert one == two
    paths = [x["path"] for x in rows(one)]
    assert paths == sorted(paths)


def test_csv_markdown_table(logs):
    r = diagnose("classify", "--format", "csv", "--signatures", FIX, logs)
    table = list(csv.DictReader(io.StringIO(r.stdout.decode())))
    assert {row["family"] for row in table} >= {"illegal-memory-access", "oom", "none", "unknown"}
    md = diagnose("classify", "--format", "markdown", "--signatures", FIX, logs).stdout.decode()
    assert md.startswith("# Diagnoses (8 logs)") and "| illegal-memory-access |" in md
    t = diagnose("classify", "--signatures", FIX, logs).stdout.decode()
    assert "8 logs" in t and "family" in t


def test_stdin(tmp_path):
    r = diagnose("classify", "--format", "jsonl", "--signatures", FIX, "-", input=("a\n" + OOM).encode())
    [x] = rows(r.stdout)
    assert x["path"] == "-" and x["family"] == "oom" and x["root"]["line"] == 2


def test_explain_shows_root_fix_and_context(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("line one\nline two\n" + OOM + "after\n")
    r = diagnose("explain", "--signatures", FIX, p)
    out = r.stdout.decode()
    assert r.returncode == 0
    assert "oom" in out and "▶" in out and "line two" in out and "tried to allocate 2.00 GiB" in out     # the size as the log wrote it


REDOS = """
family = "illegal-memory-access"
[[signature]]
id = "t.redos"
origin = "kernel-logic"
frameworks = ["cuda"]
role = "root"
priority = 75
title = "nested repeats"
patterns = ['RuntimeError: (?P<msg>(?:\\w+\\s?)+)x']
explanation = "e"
fix = ["f"]
next_step = "n"
[[signature.match]]
line = "RuntimeError: ab cd x"
no_match = ["RuntimeError: ab cd"]
"""


def test_redos_prone_signature_runs_in_linear_time(tmp_path):
    # (?:\w+\s?)+ takes Python `re` hours on the first line; the matcher never uses `re` on log text.
    (tmp_path / "redos.toml").write_text(REDOS)
    log = tmp_path / "evil.log"
    log.write_text("RuntimeError: " + "a" * 5000 + "!\nRuntimeError: ab cd x\n")
    r = subprocess.run([sys.executable, "-m", "cli", "classify", "--format", "jsonl", "--signatures",
                        str(tmp_path / "redos.toml"), str(log)], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    [x] = rows(r.stdout)
    assert x["signature"] == "t.redos" and x["root"]["line"] == 2


def test_invalid_signature_file_is_refused_with_a_clear_error(tmp_path, logs):
    bad = (FIX / "cascade.toml").read_text().replace("an illegal memory access was encountered", "(?<=x)illegal")
    (tmp_path / "bad.toml").write_text(bad)
    r = diagnose("classify", "--signatures", tmp_path / "bad.toml", logs)
    err = r.stderr.decode()
    assert r.returncode == 2
    assert "bad.toml" in err and "'t.ima'" in err and "lookaround" in err


def test_usage_errors_exit_2(tmp_path):
    assert diagnose("classify").returncode == 2
    assert diagnose("explain", tmp_path / "nope.log").returncode == 2
    assert diagnose("signatures", "show", "no.such.id").returncode == 2


def test_signatures_list_show_export_check():
    assert b"signatures in" in diagnose("signatures", "list").stdout
    r = diagnose("signatures", "export", "--format", "rg")
    assert r.returncode == 0 and len(r.stdout.splitlines()) >= 1
    r = diagnose("signatures", "check")
    assert r.returncode == 0, r.stderr.decode()[-2000:]


def test_help_does_not_import_heavy_modules():
    code = ("import sys; from cli.main import build_parser; build_parser(); "
            "bad=[m for m in ('rich','textual','numpy','torch','hyperscan','re2','psutil') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    assert out == "[]"
