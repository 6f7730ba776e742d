"""The wording fallback: a low-confidence family for failures no signature explains."""
from diagnose.clusters import cluster
from diagnose.engine import confidence_of, decide
from signatures.fallback import guess
from signatures.loader import load_all
from signatures.matcher import Matcher


def test_guess_scores_words_and_prefers_specific_families():
    assert guess([("RuntimeError: kernel ran out of GPU memory while allocating", 2.0)]).family == "oom"
    assert guess([("ptxas error: entry uses too much shared data", 2.0)]).family == "shared-memory-exceeded"
    g = guess([("ValueError: operands could not be broadcast together with shapes (3,) (4,)", 2.0)])
    assert g.family == "shape-stride-mismatch" and "shapes" in g.words
    assert guess([("KeyError: 'model.layers.3'", 2.0)]) is None


def test_unexplained_failure_gets_a_guess_not_a_claim():
    m = Matcher([s for s in load_all() if s.family == "oom"])      # no signature for this wording
    log = (b"Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
           b"RuntimeError: NCCL communicator was aborted on rank 3 (collective all_reduce)\n")
    d = decide(m.scan_bytes(log), "<t>")
    assert d.family == "collective-comm" and d.signature == "fallback.collective-comm"
    assert d.confidence == confidence_of("fallback") < confidence_of("root") and "guess" in d.explanation and d.root.line == 3
    # still listed as a log a signature should be written for
    assert cluster([d])[0].count == 1


def test_no_failure_evidence_no_guess():
    m = Matcher([s for s in load_all() if s.family == "oom"])
    d = decide(m.scan_bytes(b"all_reduce bandwidth 180 GB/s, shapes (4096, 4096), nan count 0\n"), "<t>")
    assert d.family == "none"
