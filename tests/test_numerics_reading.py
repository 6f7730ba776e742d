"""The layered reading on real computations, with no flags: correct kernels in every dtype are expected
variation; each structural bug, alone (fp64, no noise) and under each dtype's rounding noise, is found,
named and located; --baseline both ways; the task's tolerance reviewed.

The kernels are numpy emulations of a tiled GPU matmul (inputs in the kernel's dtype, fp32 accumulation
per K chunk, output rounded to its dtype); each bug is a change to the kernel's code (its grid, an
offset, a store), not an edited error array. The reference is the fp64 product of the same inputs."""
import math

import numpy as np
import pytest

from diagnose import numerics as nm

BM = BN = 32
BK = 64
DTYPES = ("float64", "float32", "tf32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")


def rnd(x, dtype):
    return nm.round_to(x, dtype) if dtype != "float64" else np.asarray(x, np.float64)


def inputs(m, n, k, dtype, seed=0):
    rng = np.random.default_rng(seed)
    store = "float32" if dtype == "tf32" else dtype       # a TF32 matmul takes fp32 tensors
    a = rnd(rng.standard_normal((m, k)), store)
    b = rnd(rng.standard_normal((k, n)), store)
    return a, b, a @ b


def kernel(a, b, dtype, out=None, *, grid_n=None, skip_program=None, row_from=None, half_offset=False,
           transpose_store=False, scale=1.0, bias=None, bias_twice=False):
    """C = scale * A @ B (+ bias), one (BM, BN) tile per program."""
    m, k = a.shape
    n = b.shape[1]
    acc_t = np.float64 if dtype == "float64" else np.float32
    ain, bin_ = (rnd(a, "tf32"), rnd(b, "tf32")) if dtype == "tf32" else (a, b)
    ain, bin_ = ain.astype(acc_t), bin_.astype(acc_t)
    out = np.zeros((m, n)) if out is None else out
    gm, gn = -(-m // BM), (grid_n if grid_n is not None else -(-n // BN))
    store = "float32" if dtype == "tf32" else dtype
    for pid in range(gm * gn):
        if pid == skip_program:
            continue
        pm, pn = pid // gn, pid % gn
        rows = np.arange(pm * BM, pm * BM + BM)
        cols = np.arange(pn * BN, pn * BN + BN)
        cols_load = np.concatenate([cols[:BN // 2], cols[:BN // 2]]) if half_offset else cols
        rows_load = rows.copy()
        if row_from is not None:
            rows_load[rows_load == row_from[0]] = row_from[1]            # a wrong row index
        rmask, cmask = rows_load < m, cols_load < n
        acc = np.zeros((BM, BN), acc_t)
        for k0 in range(0, k, BK):
            ks = np.arange(k0, min(k, k0 + BK))
            at = np.zeros((BM, ks.size), acc_t)
            bt = np.zeros((ks.size, BN), acc_t)
            at[rmask] = ain[np.ix_(rows_load[rmask], ks)]
            bt[:, cmask] = bin_[np.ix_(ks, cols_load[cmask])]
            acc += at @ bt
        acc *= acc_t(scale)
        if bias is not None:
            bb = np.zeros(BN, acc_t)
            bb[cols < n] = bias[cols[cols < n]]
            acc += bb * (2 if bias_twice else 1)
        tile = rnd(acc, store)
        smask = (rows < m)[:, None] & (cols < n)[None, :]
        r, c = np.nonzero(smask)
        if transpose_store:
            out[cols[c], rows[r]] = tile[r, c]
        else:
            out[rows[r], cols[c]] = tile[r, c]
    return out


# -- correct kernels: expected variation with no flags ----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [300, 4096])
def test_correct_matmul_no_flags_is_expected_variation(dtype, k):
    a, b, ref = inputs(64, 96, k, dtype)
    out = kernel(a, b, dtype)
    r = nm.analyse(out, ref, "float32" if dtype == "tf32" else dtype)
    assert r.verdict == "expected variation", r.decided_by
    assert r.measures["above_floor"] == 0
    assert r.assumed and "pin with --acc" in r.assumed[0]            # says what it assumed


def test_issue_fp32_matmul_k300_no_flags():
    """The issue's first case: a correct fp32 matmul (K=300) against fp64, no flags."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 300)), rng.standard_normal((300, 200))
    out = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float64)
    r = nm.analyse(out, a @ b, "fp32")
    assert r.verdict == "expected variation", r.decided_by
    ik = r.model.to_json()["models"][0]["implied_k"]
    assert 100 <= ik <= 900, ik                              # the implied K is of the order of the real 300
    assert r.recommended.rtol > 1.3e-6 or r.measures["mismatched"] == 0


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_correct_reductions_no_flags(dtype):
    rng = np.random.default_rng(3)
    x = rnd(rng.standard_normal((512, 2048)), dtype)
    sums = rnd(x.astype(np.float32).sum(axis=1), dtype)                   # a row reduction
    assert nm.analyse(sums, x.sum(axis=1), dtype).verdict == "expected variation"
    e = np.exp(x - x.max(axis=1, keepdims=True))                          # softmax, fp32 math
    e32 = np.exp((x - x.max(axis=1, keepdims=True)).astype(np.float32))
    soft = rnd(e32 / e32.sum(axis=1, keepdims=True), dtype)
    r = nm.analyse(soft, e / e.sum(axis=1, keepdims=True), dtype)
    assert r.verdict == "expected variation", r.decided_by


def test_correct_bf16_matmul_with_torch_no_flags():
    torch = pytest.importorskip("torch", reason="torch not installed: torch's own bf16 matmul not compared")
    rng = np.random.default_rng(1)
    a = torch.from_numpy(rng.standard_normal((64, 2048))).to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal((2048, 96))).to(torch.bfloat16)
    out = (a @ b).to(torch.float64).numpy()
    ref = a.double().numpy() @ b.double().numpy()
    assert nm.analyse(out, ref, "bf16").verdict == "expected variation"
    assert nm.analyse(out, ref, "bf16", acc="fp32", k=2048).verdict == "expected variation"
    # our bit-manipulation rounding agrees with torch's cast
    x = torch.from_numpy(rng.standard_normal(10000).astype(np.float32))
    assert np.array_equal(nm.decode_bits(nm.bf16_round_bits(x.numpy()), "bf16"),
                          x.to(torch.bfloat16).to(torch.float64).numpy())
    h = (a.half() @ b.half()).double().numpy()
    assert nm.analyse(h, a.half().double().numpy() @ b.half().double().numpy(), "fp16").verdict == "expected variation"


# -- structural bugs, alone and under each dtype's noise ----------------------------------------

def _read(out, ref, dtype):
    r = nm.analyse(out, ref, "float32" if dtype == "tf32" else dtype)
    assert r.verdict == "likely defect", (dtype, r.decided_by)
    return r, r.findings[0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tail_tile_never_written(dtype):
    a, b, ref = inputs(96, 100, 256, dtype)
    r, f = _read(kernel(a, b, dtype, grid_n=100 // BN), ref, dtype)
    assert nm.pattern(f) == "tail-tile" and f.origin == "kernel-logic"
    assert (f.facts["axis"], f.facts["start"], f.facts["size"]) == (1, 96, 100) and 32 in f.facts["tiles_consistent"]
    assert "zeros" in r.patterns and "96..99" in f.title


@pytest.mark.parametrize("dtype", DTYPES)
def test_tail_tile_left_stale(dtype):
    a, b, ref = inputs(96, 100, 256, dtype)
    a2, b2, _ = inputs(96, 100, 256, dtype, seed=7)
    stale = kernel(a2, b2, dtype)                                 # the buffer holds an earlier result
    r, f = _read(kernel(a, b, dtype, stale, grid_n=100 // BN), ref, dtype)
    assert nm.pattern(f) == "tail-tile" and f.facts["start"] == 96 and "zeros" not in r.patterns


@pytest.mark.parametrize("dtype", DTYPES)
def test_last_48_columns_zero_is_a_tail_region(dtype):
    """The issue's third case: an output whose last 48 columns were never written."""
    a, b, ref = inputs(64, 200, 256, dtype)
    out = kernel(a, b, dtype)
    out[:, :152] = kernel(a[:, :], b[:, :152], dtype)             # the launch covered 152 columns only
    out[:, 152:] = 0
    r, f = _read(out, ref, dtype)
    assert nm.pattern(f) == "tail-region" and (f.facts["start"], f.facts["remainder"]) == (152, 48)
    assert "zeros" in r.patterns
    assert not any(nm.pattern(x) in ("precision-noise", "grows-with-magnitude") for x in r.findings)


@pytest.mark.parametrize("dtype", DTYPES)
def test_wrong_row_index_is_whole_rows(dtype):
    a, b, ref = inputs(64, 96, 256, dtype)
    r, f = _read(kernel(a, b, dtype, row_from=(37, 12)), ref, dtype)
    assert nm.pattern(f) == "whole-rows" and f.facts["indices"] == [37]


@pytest.mark.parametrize("dtype", DTYPES)
def test_skipped_program_is_whole_block(dtype):
    a, b, ref = inputs(128, 128, 256, dtype)
    r, f = _read(kernel(a, b, dtype, skip_program=5), ref, dtype)          # tile (1, 1) of 4 x 4
    assert nm.pattern(f) == "whole-blocks" and f.facts["block"] == 32 and f.facts["blocks"] == [[1, 1]]
    assert "rows 32..63, cols 32..63" in f.facts["region"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_wrong_block_offset_is_periodic(dtype):
    a, b, ref = inputs(64, 128, 256, dtype)
    r, f = _read(kernel(a, b, dtype, half_offset=True), ref, dtype)
    assert nm.pattern(f) == "periodic" and (f.facts["axis"], f.facts["period"]) == (1, 32)
    assert f.facts["bad_residues"] == list(range(16, 32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_store(dtype):
    a, b, ref = inputs(64, 64, 128, dtype)
    r, f = _read(kernel(a, b, dtype, transpose_store=True), ref, dtype)
    assert nm.pattern(f) == "transposed"


@pytest.mark.parametrize("dtype", DTYPES)
def test_missing_softmax_scale_is_constant_factor(dtype):
    a, b, _ = inputs(64, 64, 512, dtype)
    r, f = _read(kernel(a, b, dtype), (a @ b) / 8.0, dtype)                # the reference scales by 1/sqrt(64)
    assert nm.pattern(f) == "constant-factor" and abs(f.facts["factor"] - 8.0) < 0.02
    assert "sqrt(64)" in f.facts["factor_name"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_added_twice_is_column_offset(dtype):
    a, b, ref = inputs(64, 96, 256, dtype)
    bias = rnd(np.random.default_rng(9).standard_normal(96) * 4, "float32")
    r, f = _read(kernel(a, b, dtype, bias=bias, bias_twice=True), ref + bias, dtype)
    assert nm.pattern(f) == "column-offset"


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_bias_the_reference_lacks_is_constant_offset(dtype):
    a, b, ref = inputs(64, 96, 256, dtype)
    r, f = _read(kernel(a, b, dtype, bias=np.full(96, 6.0)), ref, dtype)
    assert nm.pattern(f) == "constant-offset" and abs(f.facts["offset"] - 6.0) < 0.1


@pytest.mark.parametrize("dtype", DTYPES)
def test_uninitialised_tile_poisoned_with_nan(dtype):
    a, b, ref = inputs(128, 128, 256, dtype)
    out = kernel(a, b, dtype, np.full((128, 128), np.nan), skip_program=15)
    r, f = _read(out, ref, dtype)
    assert r.patterns[:2] == ["uninitialised", "whole-blocks"] and r.findings[1].facts["blocks"] == [[3, 3]]
    assert r.measures["nonfinite_out_only"] == 32 * 32


def test_nan_spreading_through_a_row_reduction():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((64, 512))
    x32 = x.astype(np.float32)
    x32[[5, 40], 17] = np.inf                                      # two bad inputs reach the kernel only
    with np.errstate(invalid="ignore"):
        e = np.exp(x32 - x32.max(axis=1, keepdims=True))           # inf - inf = nan in those rows
    out = (e / e.sum(axis=1, keepdims=True)).astype(np.float64)
    ref = np.exp(x - x.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    r = nm.analyse(out, ref, "fp32")
    f = r.findings[0]
    assert r.verdict == "likely defect" and nm.pattern(f) == "nonfinite-spread"
    assert "5, 40" in f.title


def test_fp16_overflow():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 256)) * 100
    b = rng.standard_normal((256, 32)) * 100
    out = nm.round_to(np.float32(a) @ np.float32(b), "fp16")
    r = nm.analyse(out, a @ b, "fp16")
    assert nm.pattern(r.findings[0]) == "overflow" and r.findings[0].facts["ref_beyond_dtype_max"] > 0


# -- unstructured error beyond every plausible computation ----------------------------------------

def test_bf16_accumulation_claimed_fp32_is_precision_noise_and_named():
    a, b, ref = inputs(64, 64, 4096, "bfloat16")
    acc = np.zeros((64, 64))
    for k0 in range(0, 4096, 64):                                   # rounds the running sum to bf16
        acc = nm.round_to(acc + a[:, k0:k0 + 64] @ b[k0:k0 + 64, :], "bf16")
    r = nm.analyse(acc, ref, "bf16", "float64", acc="fp32", k=4096)
    assert r.verdict == "likely defect" and r.patterns[0] == "precision-noise"
    assert nm.analyse(acc, ref, "bf16", "float64", acc="bf16", k=4096).verdict == "expected variation"


def test_hidden_bf16_temporary_in_an_fp32_kernel_names_bf16():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((128, 128)) * np.exp(rng.uniform(-4, 4, (128, 128)))
    y = rng.standard_normal((128, 128))
    out = nm.round_to(np.float32(x) * np.float32(y), "bf16")
    r = nm.analyse(out, x * y, "fp32")
    f = r.findings[0]
    assert r.verdict == "likely defect" and nm.pattern(f) == "grows-with-magnitude"
    assert 7 <= f.facts["effective_bits"] <= 9.5 and "bfloat16 rounding" in f.facts["consistent_with"]


def test_effective_precision_names_tf32_and_bf16_inputs():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((64, 1024)), rng.standard_normal((1024, 64))
    tf = nm.round_to(a, "tf32") @ nm.round_to(b, "tf32")
    e = nm.explain(np.linalg.norm(tf - a @ b) / np.linalg.norm(a @ b), "float32")
    assert 9.5 <= e.bits <= 11.5 and any("TF32" in c for c in e.consistent)
    bi = nm.round_to(a, "bf16") @ nm.round_to(b, "bf16")
    e = nm.explain(np.linalg.norm(bi - a @ b) / np.linalg.norm(a @ b), "float32")
    assert any("bfloat16 inputs" in c for c in e.consistent) and e.explained_by is None


# -- baseline: FlashAttention's test, both ways ---------------------------------------------------

def test_baseline_within_2x_is_expected_variation():
    a, b, ref = inputs(64, 96, 2048, "bfloat16")
    out = kernel(a, b, "bfloat16")                                    # the kernel: tiles of fp32 sums
    base = nm.round_to(a.astype(np.float32) @ b.astype(np.float32), "bf16")   # the framework's op
    r = nm.analyse(out, ref, "bf16", baseline=base)
    f = next(x for x in r.findings if nm.pattern(x).startswith("baseline"))
    assert r.verdict == "expected variation" and nm.pattern(f) == "baseline-within"
    assert f.facts["ratio_max"] <= 2 and f.facts["baseline_max_error"] > 0


def test_baseline_far_above_is_defect():
    a, b, ref = inputs(64, 96, 2048, "bfloat16")
    acc = np.zeros((64, 96))
    for k0 in range(0, 2048, 64):                                    # the kernel rounds partial sums to bf16
        acc = nm.round_to(acc + a[:, k0:k0 + 64] @ b[k0:k0 + 64, :], "bf16")
    base = nm.round_to(a.astype(np.float32) @ b.astype(np.float32), "bf16")
    r = nm.analyse(acc, ref, "bf16", baseline=base)
    f = next(x for x in r.findings if nm.pattern(x).startswith("baseline"))
    assert r.verdict == "likely defect" and nm.pattern(f) == "baseline-exceeded"
    assert f.facts["ratio_rms"] > 2 and "baseline vs reference" in f.title


# -- the task's own tolerance -----------------------------------------------------------------------

def test_loose_tolerance_that_zeros_pass():
    a, b, ref = inputs(64, 96, 256, "float32")
    out = kernel(a, b, "float32")
    r = nm.analyse(out, ref, "fp32", rtol=1.0, atol=1.0)
    f = next(x for x in r.findings if nm.pattern(x) == "tolerance-too-loose")
    assert "an all-zeros output" in f.facts["would_pass"] and f.severity == "warning"
    assert "torch assert_close rtol=1.3e-06" in f.fix
    # the identity kernel passes too when its input is this close to the output
    r = nm.analyse(out, ref, "fp32", rtol=1.0, atol=1.0, inp=ref * 0.5)
    assert "the kernel's unmodified input" in next(x for x in r.findings
                                                   if nm.pattern(x) == "tolerance-too-loose").facts["would_pass"]
    ok = nm.analyse(out, ref, "fp32", rtol=1e-4, atol=1e-4)
    assert "tolerance-too-loose" not in ok.patterns and "tolerance-too-tight" not in ok.patterns


def test_tight_tolerance_for_bf16():
    a, b, ref = inputs(64, 96, 1024, "bfloat16")
    out = kernel(a, b, "bfloat16")
    r = nm.analyse(out, ref, "bf16", rtol=1e-5, atol=1e-6)
    assert r.verdict == "expected variation" and r.measures["mismatched"] > 0
    f = next(x for x in r.findings if nm.pattern(x) == "tolerance-too-tight")
    assert "below one bfloat16 rounding" in f.title
    assert "torch assert_close rtol=0.016" in f.fix and "JAX tests rtol=0.01" in f.fix \
        and "numpy assert_allclose rtol=1e-07" in f.fix


# -- scale: the chunked pass gives the same reading as one block ------------------------------------

def test_chunked_pass_matches_single_block(monkeypatch, tmp_path):
    from diagnose.numerics import measures

    a, b, ref = inputs(600, 100, 256, "float16")
    out = kernel(a, b, "float16", grid_n=100 // BN)
    np.save(tmp_path / "o.npy", out.astype(np.float16))
    np.save(tmp_path / "r.npy", ref)
    whole = nm.analyse(nm.load_tensor(tmp_path / "o.npy"), nm.load_tensor(tmp_path / "r.npy"), "fp16")
    monkeypatch.setattr(measures, "CHUNK_ELEMS", 512 * 100)       # blocks of 512 rows: two blocks
    monkeypatch.setattr(measures, "SAMPLE_ELEMS", 100 * 100)      # and a sampled floor
    parts = nm.analyse(nm.load_tensor(tmp_path / "o.npy"), nm.load_tensor(tmp_path / "r.npy"), "fp16")
    assert whole.patterns == parts.patterns and whole.patterns[0] == "tail-tile"
    for key in ("mismatched", "abs_max", "abs_max_index", "ulp_max", "above_floor", "out_nan"):
        assert whole.measures[key] == parts.measures[key], key
    assert math.isclose(whole.measures["norm_ratio"], parts.measures["norm_ratio"], rel_tol=1e-9)
    assert parts.measures["percentiles_from"] < parts.measures["size"]


def test_one_dtype_table_for_facts_and_numerics():
    from findings.dtypes import ALIASES, FLOAT_LAYOUTS
    from signatures.facts import parse_dtype

    for spelling, name in ALIASES.items():
        assert parse_dtype(spelling) == name
        if name in FLOAT_LAYOUTS:
            assert nm.fmt(spelling).name == name
    assert parse_dtype("c10::BFloat16") == nm.fmt("torch.bfloat16").name == "bfloat16"


@pytest.mark.parametrize("shape", [(6000,), (3, 2000)])
def test_rows_wider_than_a_block_are_cut(monkeypatch, tmp_path, shape):
    """A 1-D tensor (or very wide rows) is read in column blocks too: same reading as one block."""
    from diagnose.numerics import measures

    rng = np.random.default_rng(12)
    x = rnd(rng.standard_normal(shape + (64,)), "float16")
    out = rnd(x.astype(np.float32).sum(axis=-1), "float16")            # a row reduction in fp32
    ref = x.sum(axis=-1)
    out[..., -40:] = 0                                                 # its last 40 results never written
    np.save(tmp_path / "o.npy", out.astype(np.float16))
    np.save(tmp_path / "r.npy", ref)
    whole = nm.analyse(nm.load_tensor(tmp_path / "o.npy"), nm.load_tensor(tmp_path / "r.npy"), "fp16")
    monkeypatch.setattr(measures, "CHUNK_ELEMS", 512)
    monkeypatch.setattr(measures, "SAMPLE_ELEMS", 64 * 64)
    parts = nm.analyse(nm.load_tensor(tmp_path / "o.npy"), nm.load_tensor(tmp_path / "r.npy"), "fp16")
    assert whole.patterns == parts.patterns and parts.patterns[0] == "tail-region", parts.decided_by
    assert parts.findings[0].facts["remainder"] == 40
    for key in ("mismatched", "abs_max", "abs_max_index", "above_floor"):
        assert whole.measures[key] == parts.measures[key], key


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_two_bugs_at_once_are_both_reported_ranked(dtype):
    """A tail tile never written and a wrong row index in the same launch: two regions, largest first."""
    a, b, ref = inputs(96, 100, 256, dtype)
    r, f = _read(kernel(a, b, dtype, grid_n=100 // BN, row_from=(37, 12)), ref, dtype)
    assert r.patterns[:2] == ["tail-tile", "whole-rows"], r.patterns
    assert f.facts["start"] == 96 and r.findings[1].facts["indices"] == [37]
    assert f.facts["explains"] >= r.findings[1].facts["explains"]


def test_reference_in_the_same_dtype_many_exact_matches_no_false_floor():
    """A reference stored in fp32 too: most errors are exactly 0 and the rest an ULP or two. The floor
    must not collapse to zero (which would put every rounding difference above it)."""
    rng = np.random.default_rng(0)
    t = rng.standard_normal((4, 512, 512), dtype=np.float32)
    out = t.sum(axis=0).astype(np.float64)
    ref = t.astype(np.float64).sum(axis=0).astype(np.float32).astype(np.float64)
    r = nm.analyse(out, ref, "fp32", "fp32")
    assert r.verdict == "expected variation" and r.measures["above_floor"] == 0
    out[:, 480:] = 0
    r = nm.analyse(out, ref, "fp32", "fp32")
    assert r.patterns[:2] == ["tail-region", "zeros"] and r.measures["above_floor"] == 512 * 32


def test_rtol_zero_beside_an_atol_that_covers_the_values_is_not_too_tight():
    # assert_close(out, ref, rtol=0, atol=1e-3) on values near 1: a deliberate absolute tolerance, every element
    # passes: no "too tight" finding (a false alarm), and an rtol of 0 with no atol at all still gets one
    from diagnose.numerics import analyse

    rng = np.random.default_rng(0)
    ref = rng.random(4096)
    out = (ref.astype(np.float32)).astype(np.float32)
    ids = {f.id for f in analyse(out, ref, "float32", "float64", atol=1e-3, rtol=0.0, tol_source="test").findings}
    assert "numerics.tolerance-too-tight" not in ids
    ids0 = {f.id for f in analyse(out, ref, "float32", "float64", atol=0.0, rtol=0.0, tol_source="test").findings}
    assert "numerics.tolerance-too-tight" in ids0
