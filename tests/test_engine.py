"""Matching and root-cause choice on messy input, with made-up test signatures."""
import gzip
from pathlib import Path

import pytest

from diagnose.engine import confidence_of, decide
from signatures.loader import load_all
from signatures.matcher import Matcher

FIX = Path(__file__).parent / "fixtures" / "sigs"


@pytest.fixture(scope="module")
def m():
    return Matcher([s for s in load_all([FIX]) if s.id.startswith("t.")])


def run(m, text: bytes | str):
    data = text.encode() if isinstance(text, str) else text
    return decide(m.scan_bytes(data), "<t>")


def test_root_beats_symptom_and_wrapper_whatever_the_order(m):
    log = ("step 1\nCUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n"
           "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7)\n")
    d = run(m, log)
    assert d.family == "illegal-memory-access" and d.root.line == 3
    assert [c.role for c in d.chain][0] == "root"
    assert {c.signature for c in d.chain} == {"t.ima", "t.cublas", "t.watchdog"}


def test_wrapper_alone_gives_its_family_with_lower_confidence(m):
    d = run(m, "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7)\n")
    assert d.family == "timeout-hang" and d.confidence == confidence_of("wrapper") < confidence_of("root")


def test_symptom_alone(m):
    d = run(m, "CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm\n")
    assert d.family == "illegal-memory-access" and d.confidence == confidence_of("symptom") < confidence_of("root")


def test_facts_and_fix_template(m):
    d = run(m, "x\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0)\n")
    assert d.facts["requested_bytes"] == 2 * 1024**3
    assert "2.00 GiB" in d.fix and "2147483648" not in d.fix      # the size as the log wrote it


def test_messy_text_keeps_original_line_numbers(m):
    log = (b"\x1b[32mok\x1b[0m\r\n"                      # ANSI + CRLF
           b"epoch 1:  10%\repoch 1:  50%\repoch 1: 100%\r\n"   # progress bar
           b"bad utf-8 \xff\xfe here\n"
           b"[rank3]: RuntimeError: CUDA error: an \x1b[1millegal\x1b[0m memory access was encountered\n")
    d = run(m, log)
    assert d.family == "illegal-memory-access"
    assert d.root.line == 4
    assert "\x1b" not in d.root.text


def test_warning_level_failure_is_none(m):
    log = ("W1210 08:01:33.059000 3495860 torch/foo.py:987] [0/0] CUDA out of memory. Tried to allocate 2.00 GiB\n"
           "done\n")
    d = run(m, log)
    assert d.family == "none"
    assert d.chain and d.chain[0].role == "demoted"


def test_benign_fallback_excuses_the_failure_before_it(m):
    log = ("CUDA out of memory. Tried to allocate 1.00 GiB\n"
           "Encountered an exception in identify_mutated_tensors, assuming every input is mutated\n")
    assert run(m, log).family == "none"


def test_unmatched_traceback_is_unknown_and_points_at_the_error(m):
    log = ("Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
           "    foo()\nZeroDivisionError: division by zero\n")
    d = run(m, log)
    assert d.family == "unknown" and d.root.line == 4
    assert "ZeroDivisionError" in d.root.text


def test_clean_log_is_none(m):
    d = run(m, "TF32 is enabled\nall 12 tests passed\n")
    assert d.family == "none" and d.root is None


def test_chunked_reading_counts_lines_across_chunks(m, monkeypatch, tmp_path):
    import signatures.matcher as mm

    monkeypatch.setattr(mm, "CHUNK", 64)
    p = tmp_path / "long.log"
    p.write_text("noise line\n" * 500 + "CUDA error: an illegal memory access was encountered\n" + "tail\n" * 10)
    d = decide(m.scan_file(p), str(p))
    assert d.root.line == 501          # counted by re-reading the earlier chunks
    gz = tmp_path / "long.log.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    d = decide(m.scan_file(gz), str(gz))
    assert d.root.line == 501 and d.lines == 511   # a stream is counted as it goes


# -- bad inputs: each gives a clear row, none crashes -------------------------------------------

def test_binary_file(m, tmp_path):
    p = tmp_path / "core.bin"
    p.write_bytes(b"\x7fELF\x00\x00\x01" + bytes(range(256)) * 10)
    d = decide(m.scan_file(p), str(p))
    assert d.family == "unknown" and "binary" in d.error


def test_empty_file_is_not_none_but_says_it_is_empty(m, tmp_path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    d = decide(m.scan_file(p), str(p))
    assert d.family == "unknown" and d.error is None and d.confidence == 0.0 and "empty" in d.title


def test_truncated_gzip_classifies_what_it_read(m, tmp_path):
    body = ("line\n" * 20000 + "CUDA error: an illegal memory access was encountered\n" + "more\n" * 20000).encode()
    data = gzip.compress(body)
    p = tmp_path / "cut.log.gz"
    p.write_bytes(data[: len(data) // 2])
    d = decide(m.scan_file(p), str(p))
    assert d.error and "gzip" in d.error
    whole = tmp_path / "whole.log.gz"
    whole.write_bytes(data)
    d2 = decide(m.scan_file(whole), str(whole))
    assert d2.family == "illegal-memory-access" and d2.root.line == 20001 and d2.error is None


def test_100mb_line_without_newline(m, tmp_path):
    p = tmp_path / "oneline.log"
    with open(p, "wb") as f:
        f.write(b"x" * (100 << 20))
        f.write(b" CUDA error: an illegal memory access was encountered")
    d = decide(m.scan_file(p), str(p))
    assert d.family == "illegal-memory-access"
    assert len(d.root.text) <= 2000


def test_scanning_small_files_together_gives_what_each_gives_alone(m, tmp_path):
    texts = {
        "a.log": "ok\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
        "b.log": "no newline at the end: CUBLAS_STATUS_EXECUTION_FAILED",
        "c.log": "x\r\nepoch 1\r50%\r\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB\r\n",
        "d.log": "\x1b[31mTraceback (most recent call last):\x1b[0m\n  File \"x.py\", line 1, in <module>\nKeyError: 3\n",
        "e.log": "",
        "f.log": "CUDA out of memory. Tried to allocate 2.00 GiB\n" * 30 + "clean\n",
    }
    paths = []
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    (tmp_path / "g.bin").write_bytes(b"\x00\x01binary")
    paths.append(str(tmp_path / "g.bin"))
    together = m.scan_many(paths)
    for p, scan in zip(paths, together):
        alone = m.scan_file(p)
        assert [(x.signature.id, x.line, x.text, x.facts) for x in scan.matches] == \
               [(x.signature.id, x.line, x.text, x.facts) for x in alone.matches], p
        assert scan.hints == alone.hints and scan.error == alone.error and scan.bytes == alone.bytes, p
        assert decide(scan, p).to_json() == decide(alone, p).to_json()


def test_to_json_matches_dataclass_fields(m):
    from dataclasses import asdict

    d = run(m, "x\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nCUBLAS_STATUS_EXECUTION_FAILED\n")
    want = asdict(d)
    want.pop("error")
    assert d.to_json() == want


def test_hard_wrapped_failure_line_is_matched_across_the_wrap(m):
    from diagnose.engine import _decide

    wrapped = (b"Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
               b"[rank0]: RuntimeError: CUDA error: an illegal memory acc\n[rank0]: ess was encountered\n")
    d = _decide(m.scan_bytes(wrapped), "<t>", m, lambda: wrapped)
    assert d.family == "illegal-memory-access" and d.root.line == 3
    # the fitted confidence of a match across a wrap (diagnose/confidence.toml), below a clean root's
    from diagnose.engine import confidence_of
    assert d.confidence == confidence_of("wrapped") < confidence_of("root")
    assert any("hard-wrapped" in e for e in d.notes)
    clean = b"all fine: an illegal memory acc\nounting report was printed\n"
    assert _decide(m.scan_bytes(clean), "<t>", m, lambda: clean).family == "none"


def test_wrapped_line_beats_a_wording_guess(m):
    """The first half alone reads like an illegal access to the fallback; the join finds the signature."""
    from diagnose.engine import _decide

    wrapped = b"Traceback (most recent call last):\nRuntimeError: CUDA error: an illegal memory access was enc\nountered\n"
    d = _decide(m.scan_bytes(wrapped), "<t>", m, lambda: wrapped)
    assert d.signature == "t.ima" and d.root.line == 2


def test_second_half_is_strip_prefix_of_the_decoded_line():
    """The rescue's fast path for ASCII lines gives the bytes of the str path it replaces."""
    from signatures.normalise import strip_prefix
    from signatures.wrapped import second_half

    lines = [b"[rank0]: s watchdog got stuck", b"  plain text  ", b"\x1c\x1fx\x1e", b"", b"   ",
             b"2024-01-02 03:04:05,678 INFO trainer.py:12] lost", b"[1,0]<stderr>: tail",
             b"\xc3\xa9 caf\xc3\xa9 \xff", b"(RayWorkerWrapper pid=123) out of memory", b"E1210 08:01:33.123 x.cc:1] y"]
    for line in lines:
        assert second_half(line) == strip_prefix(line.decode("utf-8", "replace")).strip().encode(), line


def test_hot_pairs_are_the_candidate_pairs_by_offset():
    """signatures.wrapped.hot_pairs: the pairs candidate_pairs(buf, error_lines(buf)) gives, keyed by
    the first line's offset (its index is the count of newlines before it), over every corpus and
    issue log and the edges (a hot first or last line, no final newline, adjacent hot lines)."""
    from pathlib import Path

    from signatures.normalise import normalise_chunk
    from signatures.wrapped import candidate_pairs, error_lines, hot_pairs

    root = Path(__file__).resolve().parent.parent
    bufs = [normalise_chunk(p.read_bytes()) for p in sorted((root / "corpus" / "logs").glob("*.log"))
            + sorted((root / "tests" / "fixtures" / "issues").glob("*.log"))]
    bufs += [b"", b"error\n", b"error", b"x\nerror", b"error\nfailed\nok\n", b"\nerror\n\n", b"a\nb\nfatal: x\n"]
    for buf in bufs:
        want = candidate_pairs(buf, error_lines(buf))
        got = hot_pairs(buf)
        assert [(buf.count(b"\n", 0, at), a, b) for at, a, b in got] == want


def test_joined_pairs_are_the_hot_pairs_joined():
    """signatures.wrapped.joined_pairs (the rescue's one loop) gives what hot_pairs and second_half
    gave the rescue: per pair kept, the two lines joined without and with a space, in order."""
    from pathlib import Path

    from signatures.normalise import normalise_chunk
    from signatures.wrapped import MIN_FIRST, hot_pairs, joined_pairs, second_half

    root = Path(__file__).resolve().parent.parent
    logs = sorted((root / "corpus" / "logs").glob("*.log")) + sorted(
        p for p in (root / "tests" / "fixtures" / "issues").glob("*.log") if not p.name.startswith(("g43-", "g44-")))
    bufs = [normalise_chunk(p.read_bytes()) for p in logs]
    bufs += [b"", b"error\n", b"x" * 30 + b" error\n[rank0]: s watchdog\r\n", b"a failed on this long line\n   \n",
             b"an error on a line long enough\n\xc3\xa9 caf\xc3\xa9 \xff\n", b"\nerror\n\n"]
    for buf in bufs:
        want_at, want = [], []
        for at, first, second in hot_pairs(buf):
            a = first.rstrip(b"\r").rstrip()
            b = second_half(second.rstrip(b"\r"))
            if len(a) >= MIN_FIRST and b:
                want_at += [at, at]
                want += [a + b, a + b" " + b]
        assert joined_pairs(buf) == (want_at, want)


def test_cluster_scan_finds_each_patterns_lines():
    """Matcher._hit_lines_each: the patterns of a cluster (same gate literals, e.g. the *.code.cuda
    ones) located in one database give the lines each pattern's own database gives."""
    from diagnose.engine import default_matcher

    m = default_matcher()
    clusters = set(m._clusters().values())
    assert any(len(c) >= 9 for c in clusters)
    lines = [b"RuntimeError: CUDA error: code 2", b"CUDA driver error 700 here", b"cuda failure #719",
             b"CUDA runtime error in foo: 9", b"nothing", b"CUDA error: 710x", b"CUDA error 98 and CUDA error 209",
             b"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus", b"NVRM: Xid (PCI:0000:01:00): 13, pid=1",
             b"Expected object of device type cuda but got device type cpu",
             b"Expected object of scalar type Float but got scalar type Half"]
    bufs = [b"\n".join(lines) + b"\n", b"\n".join(reversed(lines)), b"\n".join(lines * 300) + b"\n"]
    hits = 0
    for c in clusters:
        for buf in bufs:
            pids = set(c)
            want = sorted(t for pid in pids for t in [(ls, le, pid) for ls, le in m._hit_lines(pid, buf)])
            assert sorted(m._hit_lines_each(pids, buf)) == want
            hits += len(want)
            part = set(sorted(c)[:2]) | {len(m.raw) - 1}
            want = sorted(t for pid in part for t in [(ls, le, pid) for ls, le in m._hit_lines(pid, buf)])
            assert sorted(m._hit_lines_each(part, buf)) == want
    assert hits > 1000          # the 200-line cap of a pattern is met (300 copies of its line)


def test_host_ram_exhausted_is_a_known_failure_but_no_gpu_family():
    """The taxonomy's oom is device memory: PyTorch's DefaultCPUAllocator (g41-037), numpy's
    _ArrayMemoryError, MKL's mkl_malloc end `unknown` with a signature (not-gpu.*) that says it is host
    memory, its facts kept; not a log a signature should be written for."""
    from diagnose.clusters import cluster
    from diagnose.engine import diagnose_text as diagnose_bytes

    log = (b"Traceback (most recent call last):\n  File \"nodes.py\", line 3, in decode\n"
           b"RuntimeError: [enforce fail at alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: "
           b"you tried to allocate 5242880 bytes.\n")
    d = diagnose_bytes(log, "<t>")
    assert d.family == "unknown" and d.signature == "not-gpu.host-allocator" and d.root.line == 3
    assert d.facts["requested_bytes"] == 5242880 and d.confidence > 0.5
    assert "host" in d.explanation.lower() and "not a gpu" in d.explanation.lower()
    assert "host memory, not the GPU" in d.fix
    assert cluster([d]) == []
    numpy = b"numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.58 GiB for an array with shape (30000, 32000)\n"
    assert diagnose_bytes(numpy, "<t>").signature == "not-gpu.host-allocator"
    # device memory stays oom
    assert diagnose_bytes(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                          b"capacity of 79.15 GiB of which 1.02 GiB is free.\n", "<t>").family == "oom"
