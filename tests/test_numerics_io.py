"""Loading tensors, parsing real assert_close / assert_allclose messages, annotate_diagnosis, and the CLI."""
import json

import numpy as np
import pytest

from diagnose import numerics as nm
from cli.main import main
from diagnose.model import Diagnosis, Line


def torch_or_skip():
    return pytest.importorskip("torch", reason="torch not installed: torch-specific path not exercised")


# -- parse_mismatch_text on messages produced by really calling the comparison functions -----------

def message(fn, *args, **kwargs) -> str:
    try:
        fn(*args, **kwargs)
    except AssertionError as e:
        return str(e)
    raise AssertionError("the comparison passed; the test needs a failing one")


def test_parse_numpy_assert_allclose_message():
    ref = np.linspace(1.0, 2.0, 40).reshape(4, 10)
    out = ref.copy()
    out[3, 7] += 0.25
    out[1, 2] -= 0.125
    text = message(np.testing.assert_allclose, out, ref, rtol=1e-6, atol=1e-9)
    p = nm.parse_mismatch_text(text)
    assert p["kind"] == "numpy"
    assert (p["mismatched_count"], p["total_count"]) == (2, 40)
    assert p["mismatch_fraction"] == pytest.approx(0.05)
    assert p["max_abs_diff"] == pytest.approx(0.25)
    assert p["max_rel_diff"] == pytest.approx(np.max(np.abs(out - ref) / np.abs(ref)))
    assert p["rtol"] == 1e-6 and p["atol"] == 1e-9


def test_parse_torch_assert_close_message():
    torch = torch_or_skip()
    ref = torch.linspace(1.0, 2.0, 60, dtype=torch.float64).reshape(6, 10)
    out = ref.clone()
    out[4, 9] += 0.5
    text = message(torch.testing.assert_close, out, ref)
    p = nm.parse_mismatch_text(text)
    assert p["kind"] == "torch"
    assert (p["mismatched_count"], p["total_count"]) == (1, 60)
    assert p["max_abs_diff"] == pytest.approx(0.5)
    assert p["max_abs_index"] == [4, 9]
    assert (p["rtol"], p["atol"]) == (1e-7, 1e-7)               # torch's float64 defaults, as printed
    bf = message(torch.testing.assert_close, out.to(torch.bfloat16) * 2, ref.to(torch.bfloat16))
    q = nm.parse_mismatch_text(bf)
    assert q["total_count"] == 60 and q["rtol"] == 0.016 and q["atol"] == 1e-5
    scalar = nm.parse_mismatch_text(message(torch.testing.assert_close, torch.tensor(1.0), torch.tensor(1.5)))
    assert scalar["max_abs_diff"] == 0.5 and scalar["mismatched_count"] == 1


def test_annotate_diagnosis_adds_facts_and_reading():
    ref = np.linspace(1.0, 2.0, 100)
    out = ref * (1 + 2.0 ** -9)                                   # within a bf16 ULP, far past fp32 rtol
    text = message(np.testing.assert_allclose, out, ref, rtol=1e-7)
    # facts as a signature would capture them: ints for *_count, strings otherwise
    parsed = nm.parse_mismatch_text(text)
    d = Diagnosis(path="log", family="numerical-mismatch", root=Line(3, text.splitlines()[1]),
                  facts={"mismatched_count": parsed["mismatched_count"], "total_count": parsed["total_count"],
                         "max_rel_diff": str(parsed["max_rel_diff"]), "rtol": "1e-07", "dtype": "bfloat16"},
                  notes=["earlier line"], explanation="kept")
    nm.annotate_diagnosis(d)
    assert d.facts["mismatch_fraction"] == 1.0
    assert d.facts["rtol"] == 1e-7 and isinstance(d.facts["max_rel_diff"], float)
    assert d.notes[0] == "earlier line" and d.explanation == "kept"       # appended, not replaced
    reading = d.notes[1]
    assert reading.startswith("numerics: 100 of 100 elements (100.000%) mismatch")
    assert "rtol in use (1e-07) is below one bfloat16 rounding (0.00391)" in reading
    assert "within a few bfloat16 ULPs" in reading
    other = Diagnosis(path="log", family="oom", facts={"mismatched_count": 1})
    nm.annotate_diagnosis(other)
    assert other.env == [] and "mismatch_fraction" not in other.facts


def test_engine_numerical_mismatch_gets_reading_when_a_signature_matches():
    from diagnose.engine import diagnose_text

    ref = np.linspace(1.0, 2.0, 100)
    text = message(np.testing.assert_allclose, ref * 1.5, ref, rtol=1e-7)
    d = diagnose_text("Traceback (most recent call last):\nAssertionError: " + text)
    if d.family != "numerical-mismatch":
        pytest.skip(f"no numerical-mismatch signature matches numpy's message yet (got {d.family})")
    assert any(e.startswith("numerics: 100 of 100 elements") for e in d.notes)


# -- loading -------------------------------------------------------------------------------------

def test_load_npy_npz_key_and_index(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "a.npy", a)
    np.savez(tmp_path / "z.npz", out=a, ref=a * 2)
    got = nm.load_tensor(tmp_path / "a.npy")
    assert got.dtype == "float32" and np.array_equal(got.values, a)
    assert np.array_equal(nm.load_tensor(tmp_path / "z.npz", "ref").values, a * 2)
    assert np.array_equal(nm.load_tensor(tmp_path / "z.npz", "1").values, a * 2)
    with pytest.raises(nm.NumericsError, match=r"z.npz: holds 2 tensors \(out, ref\): pick one with --key"):
        nm.load_tensor(tmp_path / "z.npz")
    with pytest.raises(nm.NumericsError, match=r"z.npz: no tensor 'nope'; it holds out, ref"):
        nm.load_tensor(tmp_path / "z.npz", "nope")
    (tmp_path / "x.csv").write_text("1,2")
    with pytest.raises(nm.NumericsError, match=r"x.csv: unknown file type .csv; use .npy"):
        nm.load_tensor(tmp_path / "x.csv")
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    with pytest.raises(nm.NumericsError, match=r"bad.npy: cannot read"):
        nm.load_tensor(tmp_path / "bad.npy")


def test_bit_patterns_with_dtype(tmp_path):
    x = np.array([1.0, -2.5, 3.140625, 448.0])
    np.save(tmp_path / "bf.npy", nm.encode_bits(x, "bf16"))
    np.save(tmp_path / "f8.npy", nm.encode_bits(x, "fp8e4m3"))
    bf = nm.load_tensor(tmp_path / "bf.npy", dtype="bf16")
    assert bf.dtype == "bfloat16" and np.array_equal(bf.values, nm.round_to(x, "bf16"))
    f8 = nm.load_tensor(tmp_path / "f8.npy", dtype="fp8e4m3")
    assert f8.dtype == "float8_e4m3fn" and np.array_equal(f8.values, nm.round_to(x, "fp8e4m3"))
    with pytest.raises(nm.NumericsError, match="bit patterns must be uint16"):
        nm.load_tensor(tmp_path / "f8.npy", dtype="bf16")


def test_safetensors_read_with_numpy_only(tmp_path):
    st = pytest.importorskip("safetensors.numpy", reason="safetensors not installed: cannot write a test file")
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float16)
    st.save_file({"w": a, "b": a[0].astype(np.float32)}, str(tmp_path / "t.safetensors"))
    got = nm.load_tensor(tmp_path / "t.safetensors", "w")
    assert got.dtype == "float16" and np.array_equal(got.values, a.astype(np.float64))


def test_torch_files_bf16_and_fp8(tmp_path):
    torch = torch_or_skip()
    t = torch.randn(5, 7).to(torch.bfloat16)
    torch.save({"out": t, "meta": torch.tensor([1])}, tmp_path / "o.pt")
    got = nm.load_tensor(tmp_path / "o.pt", "out")
    assert got.dtype == "bfloat16" and np.array_equal(got.values, t.double().numpy())
    from safetensors.torch import save_file
    f8 = torch.randn(16).to(torch.float8_e5m2)
    save_file({"x": f8, "y": t}, str(tmp_path / "t.safetensors"))
    got = nm.load_tensor(tmp_path / "t.safetensors", "x")        # decoded by our own reader
    assert got.dtype == "float8_e5m2" and np.array_equal(got.values, f8.double().numpy())
    got = nm.load_tensor(tmp_path / "t.safetensors", "y")
    assert got.dtype == "bfloat16" and np.array_equal(got.values, t.double().numpy())


# -- tolerances ----------------------------------------------------------------------------------

def test_recommended_tolerances_match_the_rules_of_thumb():
    bf = nm.recommend_tolerance("bf16", acc="fp32", k=4096)
    assert 5e-3 <= bf.rtol <= 2e-2 and "K=4096" in bf.explanation
    tf = nm.recommend_tolerance("fp32", acc="tf32", k=4096)
    assert 1e-4 <= tf.rtol <= 3e-3 and "TF32" in tf.explanation
    assert "rtol=0.016, atol=1e-05" in nm.recommend_tolerance("bf16").torch_default
    assert "exact" in nm.recommend_tolerance("fp8e4m3").torch_default
    assert "fails on dtype (float32 vs float64)" in nm.torch_default_reading("float32", "float64")


def test_tf32_matmul_is_expected_variation_and_fp32_defaults_too_tight():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((64, 2048)), rng.standard_normal((2048, 64))
    out = (nm.round_to(a, "tf32").astype(np.float32) @ nm.round_to(b, "tf32").astype(np.float32)).astype(np.float64)
    ref = a @ b
    assert nm.analyse(out, ref, "fp32", "float64", acc="tf32", k=2048).verdict == "expected variation"
    # torch's fp32 defaults fail it: the kernel is right (TF32 is a plausible fp32 matmul), the test too tight
    strict = nm.analyse(out, ref, "fp32", "float64", rtol=1.3e-6, atol=1e-5)
    assert strict.verdict == "expected variation" and strict.measures["mismatched"] > 0
    assert "tolerance-too-tight" in strict.patterns
    # pinned to true fp32 accumulation, TF32's error is more than that computation gives
    pinned = nm.analyse(out, ref, "fp32", "float64", acc="fp32", k=2048)
    assert pinned.verdict == "likely defect" and pinned.patterns[0] == "precision-noise"
    assert "a TF32 matmul" in pinned.findings[0].title


# -- CLI -----------------------------------------------------------------------------------------

def test_cli_json_and_exit_codes(tmp_path, capsys):
    rng = np.random.default_rng(2)
    ref = rng.standard_normal((64, 100))
    out = ref.astype(np.float32)
    out[:, 96:] = 0
    np.savez(tmp_path / "r.npz", out=out, ref=ref)
    rc = main(["numerics", str(tmp_path / "r.npz"), str(tmp_path / "r.npz"), "--key", "out", "--ref-key", "ref", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["verdict"] == "likely defect" and doc["family"] == "numerical-mismatch"
    assert doc["findings"][0]["pattern"] == "tail-tile" and doc["measures"]["mismatched"] == 64 * 4
    assert doc["out"]["dtype"] == "float32" and doc["origin"] == "kernel-logic"
    np.save(tmp_path / "ok.npy", ref.astype(np.float32))
    np.save(tmp_path / "ref.npy", ref)
    assert main(["numerics", str(tmp_path / "ok.npy"), str(tmp_path / "ref.npy")]) == 0
    text = capsys.readouterr().out
    assert "expected variation" in text and "ULP of float32" in text and "torch.testing.assert_close" in text


def test_cli_user_errors_exit_2(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.zeros((2, 3)))
    np.save(tmp_path / "b.npy", np.zeros((3, 2)))
    assert main(["numerics", str(tmp_path / "a.npy"), str(tmp_path / "missing.npy")]) == 2
    assert "missing.npy: no such file" in capsys.readouterr().err
    assert main(["numerics", str(tmp_path / "a.npy"), str(tmp_path / "b.npy")]) == 2
    assert "shapes differ: out [2, 3] vs ref [3, 2] (out has the transposed shape" in capsys.readouterr().err
    assert main(["numerics", str(tmp_path / "a.npy"), str(tmp_path / "a.npy"), "--dtype", "fp7"]) == 2
    assert "unknown dtype 'fp7'" in capsys.readouterr().err


def test_cli_baseline_assert_log_and_80_columns(tmp_path, capsys):
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((64, 512)).astype(np.float16), rng.standard_normal((512, 96)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    out = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)      # the kernel
    base = np.matmul(a, b)                                                       # numpy's own fp16 matmul
    for name, arr in (("o", out), ("r", ref), ("b", base)):
        np.save(tmp_path / f"{name}.npy", arr)
    log = tmp_path / "run.log"
    torch = pytest.importorskip("torch", reason="torch not installed: a real assert_close message is needed")
    log.write_text(message(torch.testing.assert_close, torch.from_numpy(out.astype(np.float64)),
                           torch.from_numpy(ref), rtol=1e-6, atol=1e-6))
    rc = main(["numerics", str(tmp_path / "o.npy"), str(tmp_path / "r.npy"), "--baseline", str(tmp_path / "b.npy"),
               "--assert-log", str(log), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["schema"] == "diagnose.numerics/2" and doc["verdict"] == "expected variation"
    pats = [f["pattern"] for f in doc["findings"]]
    assert "baseline-within" in pats and "tolerance-too-tight" in pats
    assert doc["tolerance"]["source"] == "the log's" and doc["tolerance"]["rtol"] == 1e-6
    assert doc["error_model"]["explained_by"] and doc["assumed"]
    f = next(f for f in doc["findings"] if f["pattern"] == "baseline-within")
    assert f["reader"] == "numerics" and f["family"] == "numerical-mismatch" and f["facts"]["ratio_max"] <= 2
    # text at 80 columns
    assert main(["numerics", str(tmp_path / "o.npy"), str(tmp_path / "r.npy"), "--baseline", str(tmp_path / "b.npy")]) == 0
    text = capsys.readouterr().out
    assert "numerics.baseline-within" in text and max(len(line) for line in text.splitlines()) <= 80
    # a log without a tolerance, a missing log: exit 2 naming the file
    (tmp_path / "plain.log").write_text("RuntimeError: something else\n")
    assert main(["numerics", str(tmp_path / "o.npy"), str(tmp_path / "r.npy"), "--assert-log",
                 str(tmp_path / "plain.log")]) == 2
    assert "plain.log: no assert_close/assert_allclose tolerance found" in capsys.readouterr().err
    assert main(["numerics", str(tmp_path / "o.npy"), str(tmp_path / "r.npy"), "--assert-log",
                 str(tmp_path / "nope.log")]) == 2
    assert "nope.log: cannot read" in capsys.readouterr().err
    np.save(tmp_path / "short.npy", base[:10])
    assert main(["numerics", str(tmp_path / "o.npy"), str(tmp_path / "r.npy"), "--baseline",
                 str(tmp_path / "short.npy")]) == 2
    assert "baseline has shape [10, 96], out has [64, 96]" in capsys.readouterr().err


def test_npy_rows_read_by_pread_match_memory_map(tmp_path):
    x = np.arange(7 * 33, dtype=np.float32).reshape(7, 33)
    np.save(tmp_path / "x.npy", x)
    t = nm.load_tensor(tmp_path / "x.npy")
    assert isinstance(t.raw, np.memmap)
    assert np.array_equal(t.rows(2, 5, 33), x[2:5].astype(np.float64))
    np.save(tmp_path / "f.npy", np.asfortranarray(x))
    assert np.array_equal(nm.load_tensor(tmp_path / "f.npy").rows(2, 5, 33), x[2:5])
    np.save(tmp_path / "bf.npy", nm.encode_bits(x, "bf16"))
    assert np.array_equal(nm.load_tensor(tmp_path / "bf.npy", dtype="bf16").rows(0, 7, 33), nm.round_to(x, "bf16"))


def test_tolerance_reading_from_text_alone_flags_rtol_of_one_and_quotes_defaults():
    ref = np.linspace(1.0, 2.0, 50)
    text = message(np.testing.assert_allclose, ref * 3, ref, rtol=1.0)       # a test zeros would pass
    facts = nm.parse_mismatch_text(text)
    facts["dtype"] = "float16"
    reading = nm.tolerance_reading(facts)
    assert "rtol=1 is at least 1" in reading and "all-zeros output passes" in reading
    assert "JAX tests rtol=0.001" in reading and "numpy assert_allclose rtol=1e-07" in reading
    assert np.all(np.abs(0 - ref) <= 1.0 * np.abs(ref))                     # the claim, checked
