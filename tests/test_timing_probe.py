"""`diagnose timing --probe-check`: a task's own check run against trivial candidates, in a subprocess.
The CPU harnesses here: a torch softmax task whose tolerance lets zeros pass, numpy ReLU tasks, fixed inputs."""
import json
from pathlib import Path

import pytest

from cli.main import main
from diagnose.timing.probe import ProbeError, probe

PROBE = Path(__file__).parent / "fixtures" / "timing" / "probe"
torch = pytest.importorskip("torch")


def _accepted(res):
    return {p["candidate"] for p in res.probes if p.get("accepted")}


def test_loose_tolerance_lets_zeros_pass(capsys):
    res = probe(PROBE / "softmax_loose.py")
    assert {"reference", "zeros", "stale"} <= _accepted(res)
    assert "passthrough" not in _accepted(res)
    zeros = next(f for f in res.findings if f.facts.get("candidate") == "zeros")
    assert zeros.id == "timing.check-accepts-trivial" and zeros.severity == "error"
    assert zeros.facts["max_abs"] < 1e-2          # why: the outputs are smaller than the tolerance
    assert main(["timing", "--probe-check", str(PROBE / "softmax_loose.py"), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert any(f["id"] == "timing.check-accepts-trivial" for f in doc["findings"])


def test_tight_tolerance_rejects_every_trivial_candidate():
    res = probe(PROBE / "softmax_tight.py")
    assert _accepted(res) == {"reference"}
    assert [f.id for f in res.findings] == ["timing.check-rejects-trivial"]


def test_numpy_harness_identity_inputs():
    bad, fair = probe(PROBE / "relu_positive_numpy.py"), probe(PROBE / "relu_signed_numpy.py")
    assert "passthrough" in _accepted(bad) and _accepted(fair) == {"reference"}
    assert any("ATOL" in n for n in bad.notes)


def test_fixed_inputs_let_a_cached_output_pass():
    res = probe(PROBE / "fixed_inputs.py")
    assert "stale" in _accepted(res) and any("same data" in n for n in res.notes)


def test_no_check_and_timeout_are_usage_errors(tmp_path, capsys):
    with pytest.raises(ProbeError, match="no check"):
        probe(PROBE / "no_check.py")
    hang = tmp_path / "hang.py"
    hang.write_text("def get_inputs():\n    while True:\n        pass\n\ndef reference(x):\n    return x\n\n"
                    "ATOL = 1e-3\n")
    with pytest.raises(ProbeError, match="did not finish within 2 s"):
        probe(hang, timeout=2)
    assert main(["timing", "--probe-check", str(tmp_path / "absent.py")]) == 2
    assert "absent.py" in capsys.readouterr().err
