"""Formats and ULPs: checked against numpy.spacing / numpy.nextafter, exhaustive bit tables, and torch when present."""
import numpy as np
import pytest

from diagnose import numerics as nm

IEEE = {"float16": np.float16, "float32": np.float32, "float64": np.float64}


def edge_values(t):
    fi = np.finfo(t)
    tiny, sub = fi.smallest_normal, fi.smallest_subnormal
    vals = [0.0, sub, 2 * sub, 3 * sub, tiny - sub, tiny, tiny + np.spacing(t(tiny)), 1.0, 2.0, 0.5, 3.0,
            1024.0, float(np.nextafter(t(2.0), t(0))), float(np.nextafter(t(1024.0), t(0))),
            float(np.nextafter(t(fi.max), t(0))), float(fi.max) / 2]
    return np.array(vals, dtype=t)


@pytest.mark.parametrize("name", list(IEEE))
def test_ulp_matches_numpy_spacing_on_edge_values(name):
    t = IEEE[name]
    v = edge_values(t)
    got = nm.ulp(v, name)
    want = np.spacing(v).astype(np.float64)
    assert np.array_equal(got, want), (v, got, want)
    # negative values and -0 have the same spacing in magnitude
    assert np.array_equal(nm.ulp(-v, name), got)
    assert nm.ulp(np.array(-0.0), name) == np.finfo(t).smallest_subnormal


@pytest.mark.parametrize("name", list(IEEE))
def test_ulp_at_max_finite_is_the_last_gap(name):
    t = IEEE[name]
    mx = np.finfo(t).max
    assert nm.ulp(mx, name) == float(mx) - float(np.nextafter(mx, t(0)))
    assert nm.FORMATS[name].max == float(mx)


@pytest.mark.parametrize("name", list(IEEE))
def test_ulp_distance_counts_nextafter_steps(name):
    t = IEEE[name]
    for x in edge_values(t):
        up = np.nextafter(x, t(np.inf))
        assert nm.ulp_distance(x, up, name) == 1
        down3 = np.nextafter(np.nextafter(np.nextafter(x, t(-np.inf)), t(-np.inf)), t(-np.inf))
        assert nm.ulp_distance(down3, x, name) == 3
    # across zero: -smallest subnormal, -0, +0, +smallest subnormal
    sub = np.finfo(t).smallest_subnormal
    assert nm.ulp_distance(t(-0.0), t(0.0), name) == 0
    assert nm.ulp_distance(t(-sub), t(sub), name) == 2
    assert nm.ulp_distance(np.nextafter(t(0), t(-1)), t(0.0), name) == 1


def test_ulp_error_is_error_over_spacing_at_reference():
    ref = np.array([1.0, 2.0, 2.0 ** -130])
    out = ref + np.array([2.0 ** -23, 2.0 ** -21, 2.0 ** -149])
    assert list(nm.ulp_error(out, ref, "fp32")) == [1.0, 2.0, 1.0]


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_narrow_format_tables_are_consistent(name):
    f = nm.FORMATS[name]
    n = 1 << f.bits
    codes = np.arange(n // 2, dtype=np.uint16 if f.bits == 16 else np.uint8)   # non-negative half
    vals = nm.decode_bits(codes, name)
    finite = np.isfinite(vals)
    fv = vals[finite]
    assert np.all(np.diff(fv) > 0)                              # monotone in the code
    assert fv.max() == f.max and fv[1] == f.min_subnormal and fv[0] == 0.0
    assert vals[1 << f.mant] == f.tiny                          # first normal
    # ulp() of every finite value but the last equals the gap to the next code
    gaps = np.diff(fv)
    assert np.array_equal(nm.ulp(fv[:-1], name), gaps)
    # rounding every value returns it, and encode/decode round-trips every code
    assert np.array_equal(nm.round_to(fv, name), fv)
    assert np.array_equal(nm.decode_bits(nm.encode_bits(fv, name), name), fv)
    neg = nm.decode_bits(codes | (1 << (f.bits - 1)), name)
    assert np.array_equal(neg[finite], -fv)
    assert np.signbit(neg[0]) and neg[0] == 0                  # -0
    # ULP distance: adjacent codes are 1 apart, +-smallest subnormal 2 apart
    assert np.all(nm.ulp_distance(fv[:-1], fv[1:], name) == 1)
    assert nm.ulp_distance(-f.min_subnormal, f.min_subnormal, name) == 2


def test_fp8_specials():
    e4 = nm.decode_bits(np.arange(256, dtype=np.uint8), "fp8e4m3")
    assert np.isnan(e4).sum() == 2 and not np.isinf(e4).any()  # 0x7F, 0xFF; no inf in e4m3fn
    assert np.nanmax(e4) == 448.0
    e5 = nm.decode_bits(np.arange(256, dtype=np.uint8), "fp8e5m2")
    assert np.isinf(e5).sum() == 2 and np.isnan(e5).sum() == 6 and np.nanmax(e5[np.isfinite(e5)]) == 57344.0
    assert np.isnan(nm.round_to(500.0, "fp8e4m3")) and np.isinf(nm.round_to(70000.0, "fp8e5m2"))


def test_round_to_ties_to_even():
    # halfway between 1 and the next bf16 (1 + 2^-7): rounds down to even 1.0; next halfway rounds up
    assert nm.round_to(1 + 2.0 ** -8, "bf16") == 1.0
    assert nm.round_to(1 + 3 * 2.0 ** -8, "bf16") == 1 + 2 * 2.0 ** -7
    assert nm.round_to(1 + 2.0 ** -8 + 2.0 ** -20, "bf16") == 1 + 2.0 ** -7


def test_bf16_bit_rounding_matches_value_rounding():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-40, 38, 20000),
                        [0.0, -0.0, 1 + 2.0 ** -8, 3.3895314e38]]).astype(np.float32)
    via_bits = nm.decode_bits(nm.bf16_round_bits(x), "bf16")
    assert np.array_equal(via_bits, nm.round_to(x.astype(np.float64), "bf16"))
    assert np.isnan(nm.decode_bits(nm.bf16_round_bits(np.array([np.nan], np.float32)), "bf16")[0])


def test_decoding_matches_torch():
    torch = pytest.importorskip("torch", reason="torch not installed: bf16/fp8 decoding checked on tables only")
    for name, tdt in (("bfloat16", torch.bfloat16), ("float8_e4m3fn", torch.float8_e4m3fn),
                      ("float8_e5m2", torch.float8_e5m2)):
        bits = 16 if name == "bfloat16" else 8
        codes = np.arange(1 << bits, dtype=np.int64)
        t = torch.from_numpy(codes.astype(np.int16 if bits == 16 else np.uint8).copy()).view(tdt).to(torch.float64).numpy()
        ours = nm.decode_bits(codes.astype(np.uint16 if bits == 16 else np.uint8), name)
        assert np.array_equal(np.isnan(t), np.isnan(ours)), name
        ok = ~np.isnan(t)
        assert np.array_equal(t[ok], ours[ok]), name
        # and our rounding matches torch's cast for random values in range
        x = np.random.default_rng(1).standard_normal(5000) * (100 if bits == 8 else 1e3)
        tr = torch.from_numpy(x).to(tdt).to(torch.float64).numpy()
        assert np.array_equal(nm.round_to(x, name), tr), name


def test_unknown_dtype_is_a_clear_error():
    with pytest.raises(nm.NumericsError, match="unknown dtype 'fp7'.*bf16"):
        nm.fmt("fp7")
