"""The generic evidence table (signatures/evidence.toml): every entry's examples, as the matcher sees them."""
import pytest

from signatures.evidence import KINDS, load
from signatures.loader import check_pattern
from signatures.matcher import Matcher

EVIDENCE = load()
MATCHER = Matcher([])


@pytest.mark.parametrize("ev", EVIDENCE, ids=[f"{e.kind}:{e.pattern[:40]}" for e in EVIDENCE])
def test_evidence_examples(ev):
    assert check_pattern(ev.pattern) is None, check_pattern(ev.pattern)
    for line in ev.match:
        kinds = {h[0] for h in MATCHER.scan_bytes(line.encode() + b"\n").hints}
        assert ev.kind in kinds, f"{line!r} gives {kinds or 'nothing'}, want {ev.kind}"
    for line in ev.no_match:
        import re2
        assert not re2.search(ev.pattern, line), f"{ev.pattern!r} must not match {line!r}"


def test_every_kind_has_evidence():
    assert {e.kind for e in EVIDENCE} == set(KINDS)


def test_a_bad_entry_names_the_file(tmp_path):
    from signatures.evidence import load as load_table

    p = tmp_path / "ev.toml"
    p.write_text('[[evidence]]\nkind = "oops"\npattern = "x"\ndocs = "d"\nmatch = ["x"]\nno_match = ["y"]\n')
    with pytest.raises(ValueError, match=str(p)):
        load_table(p)


# -- excuses: benign contexts of a bare failure word (they excuse `lexicon` lines only)

from signatures.evidence import excused, load_excuses  # noqa: E402

EXCUSES = load_excuses()


@pytest.mark.parametrize("ex", EXCUSES, ids=[ex.pattern[:40] for ex in EXCUSES])
def test_excuse_examples(ex):
    import re2

    assert check_pattern(ex.pattern) is None, check_pattern(ex.pattern)
    for line in ex.match:
        assert re2.search(ex.pattern, line) and excused(line), f"{ex.pattern!r} must excuse {line!r}"
    for line in ex.no_match:
        assert not re2.search(ex.pattern, line), f"{ex.pattern!r} must not excuse {line!r}"


def test_an_excuse_applies_to_the_lexicon_only():
    """'no errors' excuses a bare failure word on its line, never an exception line."""
    from diagnose.engine import diagnose_text

    assert diagnose_text(b"-- Build finished, no errors occurred\n").family == "none"
    assert diagnose_text(b"-- Configuring incomplete, errors occurred!\n").family != "none"
    assert diagnose_text(b"Build failed.\n").family != "none"
    assert diagnose_text(b"RuntimeError: boom (no errors before this)\n").family != "none"


@pytest.mark.parametrize("text, level", [
    (b"hai-a100-3:376586:377441 [2] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed\n", "any level"),
    (b"2018-05-16 09:22:38.466424: W tensorflow/core/framework/op_kernel.cc:1192] Invalid argument: ConcatOp : x\n",
     "TF's W"),
])
def test_a_convention_line_counts_at_a_lower_level(text, level):
    from diagnose.engine import diagnose_text

    assert diagnose_text(text).family != "none", level


def test_a_lexicon_line_at_warning_level_does_not_count():
    from diagnose.engine import diagnose_text

    assert diagnose_text(b"WARNING: CUDA memory allocation failed; attempting to free up memory...\n").family == "none"
    assert diagnose_text(b"[W socket.cpp:663] Health check failed.\n").family == "none"
    assert diagnose_text(b"[2026-04-27 03:18:18] Health check failed. Server couldn't get a response\n").family != "none"


# -- s12: a request against the device's limit counts at any level; a connection retry only when the
# log never gets past it; a warning class raised in pytest's E column fails the test but names no family

def test_a_limit_line_counts_at_warning_level():
    from diagnose.engine import diagnose_text

    line = (b"Warp UserWarning: Failed to configure kernel dynamic shared memory for this device, tried to configure "
            b"k_cuda_kernel_forward kernel for 101120 bytes, but maximum available is 101376\n")
    assert diagnose_text(line).family != "none"
    assert diagnose_text(b"Warp UserWarning: kernel k uses 4096 bytes of shared memory\n").family == "none"


RETRY = b"worker:1:2 [0] NCCL INFO Call to connect returned Connection timed out, retrying\n"


def test_retries_the_log_never_gets_past_count():
    from diagnose.engine import diagnose_text

    assert diagnose_text(b"worker:1:2 [0] NCCL INFO Using network Socket\n" + RETRY * 2).family != "none"


@pytest.mark.parametrize("text, why", [
    (RETRY, "a single retry"),
    (RETRY * 2 + b"worker:1:2 [0] NCCL INFO comm 0x55 rank 0 nranks 2 - Init COMPLETE\n", "a completed step after the retries"),
])
def test_retries_the_log_gets_past_do_not_count(text, why):
    from diagnose.engine import diagnose_text

    assert diagnose_text(text).family == "none", why


def test_a_warning_raised_in_pytests_e_column_is_unknown():
    from diagnose.engine import diagnose_text

    text = (b">               warn(NumbaPerformanceWarning(msg))\n"
            b"E               numba.core.errors.NumbaPerformanceWarning: Grid size (1) < 2 * SM count (80) will likely "
            b"result in GPU under utilization due to low occupancy.\n")
    assert diagnose_text(text).family == "unknown"
    assert diagnose_text(b"E       AssertionError: Tensor-likes are not close!\n").family != "none"
