"""The matcher at scale: the joint database finds what the per-pattern scans found, a big log keeps a
bounded set of matches, and a giant line is never kept whole."""
from pathlib import Path

import pytest

pytest.importorskip("hyperscan")

from signatures import matcher as M  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
IMA = b"RuntimeError: CUDA error: an illegal memory access was encountered\n"
OOM = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


@pytest.fixture(scope="module")
def m():
    return M.default_matcher()


def test_joint_database_finds_the_lines_the_gate_and_single_scans_find(m):
    """The small-log path (one joint scan, the loosened anchored patterns in it) against one scan per
    gated pattern: the same lines, exact patterns before confirmation, loosened ones after it."""
    logs = sorted((ROOT / "corpus" / "logs").glob("*.log")) + sorted((ROOT / "tests" / "fixtures" / "issues").glob("*.log"))
    assert len(logs) > 500
    assert m.loosened, "the anchored patterns are in the joint database"
    checked = loose_checked = 0
    for path in logs:
        buf = M.normalise_chunk(path.read_bytes())
        if b"\0" in buf[:8192]:
            continue
        if not buf.endswith(b"\n"):
            buf += b"\n"
        old = {(ls, le, pid) for pid in m.gate(buf) for ls, le in m._locate(pid, buf, 0, 1 << 30)}
        new = {(ls - 1, le - 1, pid) for ls, le, pid in m._group_hits(b"\n" + buf) if ls >= 1}
        exact_old = {h for h in old if h[2] not in m.loosened}
        exact_new = {h for h in new if h[2] not in m.loosened}
        assert exact_new == exact_old, path.name

        def confirmed(hits):
            return {h for h in hits if h[2] in m.loosened and m._read_line(buf[h[0]:h[1]], h[2]) is not None}

        assert confirmed(new) == confirmed(old), path.name
        checked += bool(old)
        loose_checked += bool(confirmed(old))
    assert checked > 500 and loose_checked > 300


def test_loosened_patterns_find_their_lines_at_the_edges(m):
    """A loosened `^`/`$` pattern still finds its line first and last in a group, and a line where the
    anchor does not hold is only a candidate (re2 rejects it)."""
    frame = next(pid for pid in m.loosened if b'File "' in m.raw[pid])
    oom = next(pid for pid in m.loosened if m.raw[pid].endswith(b"out of\\s*$"))
    buf = b'\n  File "a.py", line 3, in f\nx File "b.py", line 4, in g\ntorch.OutOfMemoryError: CUDA out of\n'
    hits = {(buf[ls:le], pid) for ls, le, pid in m._group_hits(buf)}
    assert (b'  File "a.py", line 3, in f', frame) in hits
    assert (b"torch.OutOfMemoryError: CUDA out of", oom) in hits
    assert m._read_line(b'x File "b.py", line 4, in g', frame) is None
    assert M.loosen(rb"a^b") == b"ab" and M.loosen(rb"(?i)(?:^|\s)x$") == rb"(?i)(?:\n|\s)x\n"
    assert M.loosen(rb"^\s*(?:x)?$") == rb"\s*(?:x)?"        # can match empty: anchors dropped, not \n


def test_a_big_log_keeps_the_first_and_last_matches_of_a_pattern(m, tmp_path, monkeypatch):
    monkeypatch.setattr(M, "CHUNK", 64 << 10)      # many chunks from a small file
    monkeypatch.setattr(M, "FILE_KEEP", 5)
    noise = b"step 1 loss 0.5 lr 1e-4\n" * 2000
    path = tmp_path / "big.log"
    with open(path, "wb") as f:
        for _ in range(40):
            f.write(noise + OOM)
        f.write(noise + IMA)
    r = m.scan_file(path)
    oom = [x for x in r.matches if x.signature.family == "oom"]
    per_pattern: dict = {}
    for x in oom:
        per_pattern.setdefault(x.signature.id, []).append(x.line)
    every = [(i + 1) * 2001 for i in range(40)]
    for lines in per_pattern.values():
        assert len(lines) <= 10
        assert lines[:5] == every[:5] and lines[-5:] == every[-5:]
    assert any(x.signature.family == "illegal-memory-access" and x.line == 41 * 2001 for x in r.matches)
    assert len(r.hints) <= 2 * M.TAIL_HINTS


def test_a_giant_line_is_kept_capped(m, tmp_path):
    path = tmp_path / "one-line.log"
    path.write_bytes(b"x" * (20 << 20) + b" " + OOM)          # one 20 MB line, then the failure on it
    r = m.scan_file(path)
    assert r.matches, "the failure at the end of a giant line is still found"
    for x in r.matches:
        assert len(x.text) <= M.MAX_TEXT
        assert all(len(str(v)) <= M.MAX_FACT for v in x.facts.values())
    for _kind, _line, text in r.hints:
        assert len(text) <= M.MAX_TEXT


def test_the_direct_re2_calls_give_the_wrappers_answers():
    """Confirmations call the re2 extension directly: the same named groups as the wrapper's
    groupdict (unset groups left out, order kept), None where it finds nothing; the wrapper path too."""
    import re2

    from signatures import re2direct

    class Wrapped:                      # an re2 object without the extension's internals
        def __init__(self, rx):
            self.search, self.match = rx.search, rx.match

    rx = re2.compile(rb"(?P<b>x+)(y)?(?P<a>z)?(?P<c>\d*)")
    for text in (b"--xxz", b"xy", b"nothing", b"", b"x\xff\xfez9"):
        m = rx.search(text)
        want = None if m is None else {k: v for k, v in m.groupdict().items() if v is not None}
        assert re2direct.groups(rx)(text) == want
        assert re2direct.groups(Wrapped(rx))(text) == want
    assert list(re2direct.groups(rx)(b"xxz9")) == list(rx.search(b"xxz9").groupdict())    # the wrapper's order
    for anchored in (False, True):
        for text in (b"--xxz", b"xy", b"nothing", b"", b"x\xff"):
            m = rx.match(text) if anchored else rx.search(text)
            want = -1 if m is None else m.end()
            assert re2direct.end(rx, anchored)(text) == want
            assert re2direct.end(Wrapped(rx), anchored)(text) == want


def test_trim_tail_cuts_a_trailing_repeat_that_stays_on_its_line():
    assert M.trim_tail(rb"ptxas fatal\s*: (?P<message>.{1,300})") == rb"ptxas fatal\s*: (?P<message>.)"
    assert M.trim_tail(rb"\bNCCL WARN (?P<message>\S.{0,200})") == rb"\bNCCL WARN (?P<message>\S)"
    assert M.trim_tail(rb"on rank (?P<rank>\d+)") == rb"on rank (?P<rank>\d)"
    assert M.trim_tail(rb"(?:a|bind to [\w.-]+)") == rb"(?:a|bind to [\w.-])"
    assert M.trim_tail(rb"\+{5,} Timeout \+{5,}") == rb"\+{5,} Timeout \+{5}"
    # a repeat that can cross a newline, one that is not last, a quantified group, dot-all: unchanged
    for p in (rb"error:\s+", rb'File "[^"]+', rb"x\d+\b", rb"(?:ab)+", rb"(?s)x.+", rb"x[\x00-\x7f]+", rb"x\D+"):
        assert M.trim_tail(p) == p, p
    assert M.trim_tail(rb"(?:x)?y*") == rb"(?:x)?y*"      # cut, it would match empty: left whole


def test_trimmed_patterns_find_the_same_lines(m):
    """Every shipped pattern whose tail trim_tail cuts (as the joint database and the single scans
    hold it) finds exactly the lines the whole pattern finds, over the corpus and the issue logs."""
    import hyperscan as hs

    flags = hs.HS_FLAG_MULTILINE | hs.HS_FLAG_ALLOWEMPTY
    pairs = []
    for p in m.raw:
        if p.isascii():
            for e in {p, M.loosen(p) if M._anchored(p) else p}:
                if M.trim_tail(e) != e:
                    pairs.append((e, M.trim_tail(e)))
    assert len(pairs) > 100

    def db_of(exprs):
        db = hs.Database(mode=hs.HS_MODE_BLOCK)
        db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=[flags] * len(exprs))
        return db

    whole, trimmed = db_of([e for e, _ in pairs]), db_of([t for _, t in pairs])

    def lines(db, buf):
        out = set()

        def on_match(i, _from, to, _flags, _ctx):
            out.add((i, buf.rfind(b"\n", 0, max(to - 1, 0)) + 1))

        db.scan(buf, match_event_handler=on_match)
        return out

    logs = sorted((ROOT / "corpus" / "logs").glob("*.log")) + sorted((ROOT / "tests" / "fixtures" / "issues").glob("*.log"))
    hit = 0
    for path in logs:
        buf = b"\n" + M.normalise_chunk(path.read_bytes()) + b"\n"
        found = lines(whole, buf)
        assert lines(trimmed, buf) == found, path.name
        hit += bool(found)
    assert hit > 100


def test_the_failure_gate_gates_what_the_whole_gate_gates_of_failure_signatures(m):
    """The rescue of wrapped lines gates only failure signatures' patterns: of those, the same ones as
    the whole gate, over every corpus and issue log."""
    failure = {pid for pid, (_, sig) in enumerate(m.owners) if sig is not None and sig.role != "benign"}
    logs = sorted((ROOT / "corpus" / "logs").glob("*.log")) + sorted((ROOT / "tests" / "fixtures" / "issues").glob("*.log"))
    gated = 0
    for path in logs:
        buf = M.normalise_chunk(path.read_bytes())
        want = m.gate(buf) & failure
        assert m._failure_gate()(buf) == want, path.name
        gated += bool(want)
    assert gated > 300
