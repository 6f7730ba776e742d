"""Real computations, diagnosed: a tiled bf16 matmul emulated in numpy, correct and with planted bugs.

Each kernel below computes its output the way a GPU kernel would (tiles, fp32 accumulation, a bf16
store by bit manipulation); the bugs are in the kernel code, not in a hand-written error array."""
import numpy as np
import pytest

from diagnose import numerics as nm

BM = BN = 32
BK = 64


def bf16(x):
    """fp32 -> bf16 -> value, through the bit-pattern rounding a kernel's store does."""
    return nm.decode_bits(nm.bf16_round_bits(np.asarray(x, np.float32)), "bfloat16")


def inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    a = bf16(rng.standard_normal((m, k)))
    b = bf16(rng.standard_normal((k, n)))
    return a, b, a @ b            # the fp64 reference of the same (bf16) inputs


def tiled_matmul(a, b, out, *, scale=1.0, grid_m=None, grid_n=None, programs=None, wrong_half_offset=False):
    """C = scale * A @ B, one (BM, BN) tile per program, fp32 accumulation over BK chunks, bf16 store.

    `out` is the output buffer as allocated by the caller (its old contents stay where no tile writes).
    grid_m / grid_n: how many tiles the launch covers (a correct launch uses cdiv). programs: launch
    fewer programs than tiles. wrong_half_offset: the second 16-wide half of each B tile load reuses
    the first half's column offset (a wrong block offset)."""
    m, k = a.shape
    n = b.shape[1]
    gm = grid_m if grid_m is not None else -(-m // BM)
    gn = grid_n if grid_n is not None else -(-n // BN)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    total = gm * gn if programs is None else programs
    for pid in range(total):
        pm, pn = pid // gn, pid % gn
        rows = np.arange(pm * BM, pm * BM + BM)
        cols = np.arange(pn * BN, pn * BN + BN)
        if wrong_half_offset:
            cols_load = np.concatenate([cols[:BN // 2], cols[:BN // 2]])
        else:
            cols_load = cols
        rmask, cmask = rows < m, cols_load < n
        acc = np.zeros((BM, BN), np.float32)
        for k0 in range(0, k, BK):
            ks = np.arange(k0, k0 + BK)
            kmask = ks < k
            at = np.zeros((BM, BK), np.float32)
            bt = np.zeros((BK, BN), np.float32)
            at[np.ix_(rmask, kmask)] = a32[np.ix_(rows[rmask], ks[kmask])]
            bt[np.ix_(kmask, cmask)] = b32[np.ix_(ks[kmask], cols_load[cmask])]
            acc += at @ bt
        acc *= np.float32(scale)
        smask = (rows < m)[:, None] & (cols < n)[None, :]
        tile = bf16(acc)
        r, c = np.nonzero(smask)
        out[rows[r], cols[c]] = tile[r, c]
    return out


def test_correct_bf16_matmul_is_expected_variation():
    a, b, ref = inputs(96, 100, 1024)
    out = tiled_matmul(a, b, np.zeros((96, 100)))
    r = nm.analyse(out, ref, "bf16", "float64", acc="fp32", k=1024)
    assert r.verdict == "expected variation", r.decided_by
    assert nm.pattern(r.findings[0]) == "within-tolerance"
    assert 0 < r.measures["ulp_max"] <= 1.0 + 1e-9       # one bf16 rounding of an fp32 sum: at most 1/2 ULP + fp32 noise
    assert r.measures["mismatched"] == 0
    # the same output fails torch's float32 defaults: the kernel is right, the tolerance is too tight
    strict = nm.analyse(out, ref, "bf16", "float64", rtol=1.3e-6, atol=1e-5)
    assert strict.verdict == "expected variation" and strict.measures["mismatched"] > 0
    tight = [f for f in strict.findings if nm.pattern(f) == "tolerance-too-tight"]
    assert tight and "below one bfloat16 rounding" in tight[0].title and "rtol=0.016" in tight[0].fix


def test_tail_tile_left_stale_is_diagnosed_as_tail_tile():
    a, b, ref = inputs(96, 100, 256)
    a2, b2, _ = inputs(96, 100, 256, seed=7)
    stale = tiled_matmul(a2, b2, np.zeros((96, 100)))           # the buffer holds an earlier result
    out = tiled_matmul(a, b, stale, grid_n=100 // BN)            # no mask, so only full tiles launched
    r = nm.analyse(out, ref, "bf16", "float64", acc="fp32", k=256)
    assert r.verdict == "likely defect"
    f = r.findings[0]
    assert (nm.pattern(f), f.family, f.origin) == ("tail-tile", "numerical-mismatch", "kernel-logic")
    assert f.facts["axis"] == 1 and f.facts["start"] == 96 and f.facts["tile"] == 32
    assert "96" in r.decided_by and str(r.measures["mismatched"]) in r.decided_by


def test_wrong_block_offset_is_periodic():
    a, b, ref = inputs(64, 128, 256)
    out = tiled_matmul(a, b, np.zeros((64, 128)), wrong_half_offset=True)
    r = nm.analyse(out, ref, "bf16", "float64", acc="fp32", k=256)
    f = r.findings[0]
    assert nm.pattern(f) == "periodic", [x.title for x in r.findings]
    assert f.facts["axis"] == 1 and f.facts["period"] == 32
    assert f.facts["bad_residues"] == list(range(16, 32))


def test_missing_scale_is_constant_factor():
    a, b, _ = inputs(64, 64, 512)
    ref = (a @ b) / np.sqrt(64)                                # the reference applies 1/sqrt(d)
    out = tiled_matmul(a, b, np.zeros((64, 64)))               # the kernel forgot it
    r = nm.analyse(out, ref, "bf16", "float64", acc="fp32", k=512)
    f = r.findings[0]
    assert nm.pattern(f) == "constant-factor", [x.title for x in r.findings]
    assert abs(f.facts["factor"] - 8.0) < 1e-2
    assert "sqrt(64)" in f.facts["factor_name"]


def test_uninitialised_output_poisoned_with_nan():
    a, b, ref = inputs(128, 128, 256)
    poisoned = np.full((128, 128), np.nan)
    out = tiled_matmul(a, b, poisoned, programs=15)            # launch one program short of 4 x 4 tiles
    r = nm.analyse(out, ref, "bf16", "float64", acc="fp32", k=256)
    assert r.verdict == "likely defect"
    assert [nm.pattern(f) for f in r.findings] == ["uninitialised", "whole-blocks"]
    assert r.findings[1].facts["blocks"] == [[3, 3]]
    assert r.measures["out_nan"] == 32 * 32 and r.measures["nonfinite_out_only"] == 32 * 32


def test_transposed_store():
    a, b, ref = inputs(64, 64, 128)
    out = tiled_matmul(a, b, np.zeros((64, 64))).T.copy()
    r = nm.analyse(out, ref, "bf16", "float64", acc="fp32", k=128)
    assert nm.pattern(r.findings[0]) == "transposed"


def test_fp16_overflow():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 256)) * 100
    b = rng.standard_normal((256, 32)) * 100
    ref = a @ b
    out = nm.round_to(np.float32(a) @ np.float32(b), "fp16")        # values past 65504 become inf
    r = nm.analyse(out, ref, "fp16", "float64", acc="fp32", k=256)
    assert nm.pattern(r.findings[0]) == "overflow"
    assert r.findings[0].facts["ref_beyond_dtype_max"] > 0


def test_bf16_accumulation_is_precision_noise():
    a, b, ref = inputs(64, 64, 4096)
    acc = np.zeros((64, 64))
    for k0 in range(0, 4096, 64):                                   # accumulate in bf16: round after every chunk
        acc = bf16(acc + a[:, k0:k0 + 64] @ b[k0:k0 + 64, :])
    r = nm.analyse(acc, ref, "bf16", "float64", acc="fp32", k=4096)   # the test claims fp32 accumulation
    assert r.verdict == "likely defect"
    f = r.findings[0]
    assert (nm.pattern(f), f.origin) == ("precision-noise", "numerics"), [x.title for x in r.findings]
    assert f.facts["norm_ratio"] == r.measures["norm_ratio"] > r.recommended.rtol
    # told the truth (bf16 accumulation over 4096 terms), the recommended tolerance accepts it
    honest = nm.analyse(acc, ref, "bf16", "float64", acc="bf16", k=4096)
    assert honest.verdict == "expected variation", honest.decided_by


def test_hidden_downcast_errors_grow_with_magnitude():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((128, 128)) * np.exp(rng.uniform(-4, 4, (128, 128)))
    y = rng.standard_normal((128, 128))
    ref = x * y
    out = bf16(np.float32(x) * np.float32(y)).astype(np.float32)     # fp32 kernel with a bf16 temporary
    r = nm.analyse(out, ref, "fp32", "float64")
    f = r.findings[0]
    assert (nm.pattern(f), f.origin) == ("grows-with-magnitude", "numerics"), [x.title for x in r.findings]
    assert 7 <= f.facts["effective_bits"] <= 11                    # bf16 keeps 8 bits, not fp32's 24
