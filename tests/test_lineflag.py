"""The learned failure-line detector (signatures/lineflag.py) and where the engine reads it."""
from __future__ import annotations

import json

import pytest

from diagnose.engine import SILENT_TITLE, diagnose_text
from signatures import lineflag
from signatures.lineflag import Detector, words


def test_words_are_runs_parts_pairs_and_the_level():
    w = words("2024-01-01 10:00:00 WARNING cudnnConvolution failed to run on sm80")
    assert {"cudnnconvolution", "cudnn", "convolution", "failed", "failed_to", "to_run", "sm", "_level_warning"} <= w
    assert not any(t.isdigit() for t in w)
    assert "_level_warning" not in words("cudnnConvolution failed to run")


def test_a_long_line_is_read_only_to_its_cap():
    assert words("word " * 100_000) == words("word " * (lineflag.LINE_MAX // 5))


def _toy(threshold=0.9):
    return Detector(-2.0, {"failed": 2.5, "failed_to": 2.5, "falling": -6.0}, threshold)


def test_a_line_flags_at_the_threshold_only():
    det = _toy()
    assert det.score("it failed to find an algorithm") > 0.9
    assert det.score("failed, falling back to the slow path") < 0.5
    assert det.flag(b"loading\nit failed to find an algorithm\ndone\n")[:2] == (2, "it failed to find an algorithm")
    assert det.flag(b"loading\nfailed, falling back\ndone\n") is None
    # a redrawn line is read as the terminal shows it; the line number counts every newline before it
    assert det.flag(b"a\n\nb\nstep 1\rit FAILED to find it\n")[:2] == (4, "it FAILED to find it")


def test_only_the_lines_holding_a_gate_word_are_scored():
    from signatures.lineflag import gated

    data = b"hello\nAn ERROR here\nok\nnot there\nxxfail\nFail"
    assert gated(data) == [6, 23, 33, 40]
    assert gated(b"") == []
    assert Detector(10.0, {}, 0.5).flag(b"everything went fine\nwell done\n") is None


def _with(monkeypatch, det):
    monkeypatch.setattr(lineflag, "_detector", det)
    monkeypatch.setattr(lineflag, "_loaded", True)


def test_a_silent_log_with_a_flagged_line_is_kept_out_of_none(monkeypatch):
    _with(monkeypatch, _toy())
    d = diagnose_text("loading the model\nthe kernel failed to find an algorithm for conv3\n")
    assert d.family != "none"
    assert d.root.line == 2 and "failed to find" in d.root.text
    assert any("failure-line detector" in n for n in d.notes)


def test_without_the_detector_the_same_log_is_a_silent_none(monkeypatch):
    _with(monkeypatch, None)
    d = diagnose_text("loading the model\nthe kernel failed to find an algorithm for conv3\n")
    assert (d.family, d.title) == ("none", SILENT_TITLE)


def test_a_log_with_progress_or_a_handled_failure_is_not_read(monkeypatch):
    _with(monkeypatch, Detector(10.0, {}, 0.5))       # flags every line
    assert diagnose_text("step 1\nthe kernel failed to find an algorithm\n").family != "none"
    progress = diagnose_text("the kernel failed to find an algorithm\nTraining completed successfully.\n")
    assert progress.family != "none" or progress.title != SILENT_TITLE
    if progress.family == "none":
        assert not any("failure-line detector" in n for n in progress.notes)


@pytest.mark.parametrize("line", [
    "Failed to find any forward convolution algorithm.",
    "call to cuStreamSynchronize returned error 700: Illegal address during kernel execution",
])
def test_the_shipped_detector_reads_failure_wordings(line):
    det = lineflag.load()
    assert det is not None
    assert det.score(line) > 0.5, line


@pytest.mark.parametrize("line", [
    "Epoch 3/10 loss=0.2310 lr=3e-4",
    "Saving checkpoint to /out/ckpt-100",
    "Using device: cuda:0",
])
def test_the_shipped_detector_leaves_progress_lines(line):
    assert lineflag.load().score(line) < lineflag.load().threshold


def test_the_shipped_detector_is_built_from_todays_labels():
    from bench.wordmodel import SHARED, labels_digest

    if not (SHARED / "realworld" / "manifest.tsv").exists():
        pytest.skip("the shared dev set (../shared/realworld) is one of the detector's labelled sets and is not beside this checkout")
    data = json.loads(lineflag.TABLE.read_text(encoding="utf-8"))
    assert data["trained_on"]["labels"] == labels_digest(), (
        "a labelled set changed since signatures/lineflag.json was built: run `python -m bench.lineflag --write`")
    assert 0.5 <= data["threshold"] < 1


def test_the_gate_gives_the_same_lines_without_hyperscan(monkeypatch):
    import sys

    from signatures.lineflag import gated

    data = ("step 1\nAn ERROR here\n✗ mismatch\nnothing\nCan't open\nval: inf\nINFO ok\n" * 3).encode()
    with_hs = gated(data)
    monkeypatch.setattr(lineflag, "_scanner", None)
    monkeypatch.setitem(sys.modules, "hyperscan", None)      # import hyperscan raises ImportError
    assert gated(data) == with_hs
    assert len(with_hs) == 9                                # 3 of the 7 lines (not "val: inf", no word after it), 3 times
    monkeypatch.setattr(lineflag, "_scanner", None)         # the next test builds the usual one again


@pytest.mark.parametrize("line", [
    "bf16 is not supported on this GPU (sm_75), falling back to fp16",
    "e InstantiationError(\"Skipped because of invalid gpu kernel\")",
    "no errors found in 12 files",
])
def test_a_line_that_states_its_own_recovery_is_not_flagged(line):
    from signatures.lineflag import recovered

    assert recovered(line)
    assert Detector(10.0, {}, 0.5).flag((line + "\n").encode()) is None


def test_a_failure_line_is_not_taken_for_a_recovery():
    from signatures.lineflag import recovered

    assert not recovered("Failed to find any forward convolution algorithm.")
    assert not recovered("call to cuStreamSynchronize returned error 700: Illegal address during kernel execution")
