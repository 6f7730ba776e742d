"""`diagnose timing --results`: the bootstrap on synthetic measurements with a known ratio, and the formats."""
import json

import numpy as np
import pytest

from cli.main import main
from diagnose.timing.results import ResultsError, analyse, load


def _write_long_csv(path, base, cand, names=("torch_ref", "triton_new")):
    rows = ["provider,time_ms"] + [f"{names[0]},{t}" for t in base] + [f"{names[1]},{t}" for t in cand]
    path.write_text("\n".join(rows) + "\n")


def _lognormal(rng, median, sigma, n):
    return median * np.exp(rng.normal(0.0, sigma, n))


def test_known_ratio_is_recovered(tmp_path):
    rng = np.random.default_rng(1)
    base, cand = _lognormal(rng, 1.5, 0.03, 200), _lognormal(rng, 1.0, 0.03, 200)     # true ratio 1.5
    f = tmp_path / "t.csv"
    _write_long_csv(f, base, cand)
    r = analyse(load(f), seed=0)
    assert r.baseline == "torch_ref" and r.candidate == "triton_new"        # guessed from the names
    assert r.ci[0] < 1.5 < r.ci[1] and r.ci[0] > 1.4 and r.supported
    assert r.findings[0].id == "timing.speedup-supported"
    # the same seed gives the same interval; another seed a close one
    assert analyse(load(f), seed=0).ci == r.ci
    assert analyse(load(f), seed=7).ci == pytest.approx(r.ci, rel=0.01)


def test_noise_larger_than_gain_is_not_supported(tmp_path):
    rng = np.random.default_rng(2)
    base, cand = _lognormal(rng, 1.03, 0.15, 30), _lognormal(rng, 1.0, 0.15, 30)    # 3% gain, 15% noise
    f = tmp_path / "t.csv"
    _write_long_csv(f, base, cand)
    r = analyse(load(f))
    assert not r.supported and r.findings[0].id == "timing.speedup-not-supported"
    assert any("holds 1.0" in x for x in r.reasons) and any("spread" in x for x in r.reasons)


def test_claim_outside_interval_and_too_few(tmp_path):
    rng = np.random.default_rng(3)
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"baseline": list(_lognormal(rng, 2.0, 0.02, 100)),
                             "candidate": {"times": list(_lognormal(rng, 1.0, 0.02, 100))}}))
    r = analyse(load(f), claim=10.0)
    assert r.supported and r.speedup == pytest.approx(2.0, rel=0.02)
    assert any(x.id == "timing.claim-outside-interval" and x.severity == "error" for x in r.findings)
    f.write_text(json.dumps({"baseline": [1.0, 1.01, 0.99], "candidate": [0.5, 0.51, 0.49]}))
    r = analyse(load(f))
    assert not r.supported and "too few" in r.reasons[0]


def test_wide_csv_and_records_and_kernelbench(tmp_path):
    rng = np.random.default_rng(4)
    b, c = _lognormal(rng, 3.0, 0.02, 50), _lognormal(rng, 2.0, 0.02, 50)
    wide = tmp_path / "w.csv"
    wide.write_text("ref,new\n" + "\n".join(f"{x},{y}" for x, y in zip(b, c)) + "\n")
    assert analyse(load(wide)).speedup == pytest.approx(1.5, rel=0.03)
    rec = tmp_path / "r.json"
    rec.write_text(json.dumps([{"name": "eager", "ms": float(x)} for x in b] + [{"name": "mine", "ms": float(x)}
                                                                                for x in c]))
    d = load(rec)
    assert (d.baseline.name, d.candidate.name) == ("eager", "mine")
    kb = tmp_path / "kb.json"       # KernelBench-style eval result: summary statistics only
    kb.write_text(json.dumps({"compiled": True, "correctness": True, "runtime": 0.5,
                              "runtime_stats": {"mean": 0.5, "std": 0.01, "min": 0.48, "max": 0.53, "num_trials": 100},
                              "ref_runtime_stats": {"mean": 1.0, "std": 0.02, "min": 0.97, "max": 1.05,
                                                    "num_trials": 100}}))
    r = analyse(load(kb))
    assert r.baseline == "reference" and r.speedup == pytest.approx(2.0, rel=0.02) and r.supported
    assert "normal distribution" in r.assumption


@pytest.mark.parametrize("content,msg", [("", "no measurements"), ("a,b\n1,x\n", "not a number"),
                                         ("{\"only\": [1, 2, 3]}", "1 side"), ("[1, 2]", "item 0"),
                                         ("{\"base\": {\"mean\": 1.0}, \"new\": [1, 2]}", "std")])
def test_bad_files_name_the_problem(tmp_path, content, msg):
    f = tmp_path / "bad.csv"
    f.write_text(content)
    with pytest.raises(ResultsError, match=msg):
        load(f)


def test_cli(tmp_path, capsys):
    rng = np.random.default_rng(5)
    f = tmp_path / "t.csv"
    _write_long_csv(f, _lognormal(rng, 1.02, 0.1, 20), _lognormal(rng, 1.0, 0.1, 20))
    assert main(["timing", "--results", str(f)]) == 1
    out = capsys.readouterr().out
    assert "not supported" in out and all(len(line) <= 80 for line in out.splitlines() if "/" not in line)
    assert main(["timing", "--results", str(f), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["supported"] is False
    assert main(["timing", "--results", str(tmp_path / "none.csv")]) == 2
    assert "none.csv" in capsys.readouterr().err
