"""Floating-point formats: their parameters (from the project's one dtype table), bit-pattern decoding
and encoding, rounding to a format, and ULPs.

Formats narrower than numpy knows (bfloat16, float8 e4m3fn / e5m2) travel as their bit patterns
(uint16 / uint8) and are decoded and rounded here with plain integer arithmetic (no ml_dtypes).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from findings.dtypes import FLOAT_LAYOUTS, canonical

# -- floating-point formats ----------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    name: str
    mant: int          # stored mantissa bits (precision p = mant + 1)
    emin: int          # exponent of the smallest normal
    max: float         # largest finite value
    bits: int          # storage width
    has_inf: bool = True

    @property
    def eps(self) -> float:       # spacing at 1.0
        return 2.0 ** -self.mant

    @property
    def unit_roundoff(self) -> float:
        return 2.0 ** -(self.mant + 1)

    @property
    def tiny(self) -> float:      # smallest normal
        return 2.0 ** self.emin

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (self.emin - self.mant)


FORMATS = {name: Format(name, mant, emin, mx, bits, inf) for name, (mant, emin, mx, bits, inf) in FLOAT_LAYOUTS.items()}


class NumericsError(ValueError):
    """Input a user can fix (a file, a key, a dtype): the message names it and says what to do."""


def fmt(name: str) -> Format:
    """The float format a dtype name means (any spelling of findings/dtypes.py)."""
    key = canonical(name)
    if key not in FORMATS:
        raise NumericsError(f"unknown dtype {name!r}: use one of fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2")
    return FORMATS[key]


# -- decoding and rounding (bit patterns, no ml_dtypes) ------------------------------------------

def decode_bits(bits, f: Format | str) -> np.ndarray:
    """Bit patterns (uint16 for bf16, uint8 for fp8, or the IEEE widths) -> float64 values."""
    f = fmt(f) if isinstance(f, str) else f
    b = np.asarray(bits)
    if f.name == "float64":
        return b.astype(np.uint64).view(np.float64)
    if f.name == "float32":
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    if f.name == "float16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if f.name == "bfloat16":      # the top half of a float32
        with np.errstate(invalid="ignore"):
            return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if f.name in ("float8_e4m3fn", "float8_e5m2"):
        return _fp8_table(f.name)[b.astype(np.uint8)]
    raise NumericsError(f"{f.name} has no bit-pattern decoding")


_TABLES: dict[str, np.ndarray] = {}


def _fp8_table(name: str) -> np.ndarray:
    """All 256 values of an fp8 format, built from the bit fields."""
    if name not in _TABLES:
        f = FORMATS[name]
        ebits = 7 - f.mant
        bias = (1 << (ebits - 1)) - 1
        codes = np.arange(256, dtype=np.int64)
        sign = np.where(codes >> 7, -1.0, 1.0)
        e = (codes >> f.mant) & ((1 << ebits) - 1)
        m = codes & ((1 << f.mant) - 1)
        normal = (1.0 + m / (1 << f.mant)) * np.ldexp(1.0, e - bias)
        sub = (m / (1 << f.mant)) * np.ldexp(1.0, 1 - bias)
        v = sign * np.where(e == 0, sub, normal)
        emax_code = (1 << ebits) - 1
        if f.has_inf:                                  # e5m2: IEEE-like
            v = np.where((e == emax_code) & (m == 0), sign * np.inf, v)
            v = np.where((e == emax_code) & (m != 0), np.nan, v)
        else:                                          # e4m3fn: only S.1111.111 is NaN, no inf
            v = np.where((e == emax_code) & (m == (1 << f.mant) - 1), np.nan, v)
        _TABLES[name] = v
    return _TABLES[name]


def round_to(x, f: Format | str) -> np.ndarray:
    """Round float values to the nearest value of format `f` (ties to even), returned as float64.

    Overflow gives inf (or NaN for e4m3fn, which has no inf, as torch's cast does)."""
    f = fmt(f) if isinstance(f, str) else f
    x = np.asarray(x, dtype=np.float64)
    if f.name == "float64":
        return x.copy()
    if f.name in ("float32", "float16"):
        with np.errstate(over="ignore"):
            return x.astype(f.name).astype(np.float64)
    a = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _, e = np.frexp(a)                          # a = m * 2**e, m in [0.5, 1)
        exp = np.maximum(e.astype(np.int64) - 1, f.emin)
        q = np.ldexp(1.0, exp - f.mant)             # the spacing at a
        r = np.round(a / q) * q                     # np.round rounds halves to even
        over = r > f.max
        r = np.where(over, np.nan if not f.has_inf else np.inf, r)
        r = np.where(np.isinf(a), np.inf if f.has_inf else np.nan, r)
        r = np.where(np.isnan(a), np.nan, r)
    return np.copysign(r, x)


def bf16_round_bits(x) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even, by integer arithmetic.

    This is what a kernel's fp32 -> bf16 conversion does: add 0x7FFF plus the lowest kept bit, drop
    the low half. NaNs keep a quiet-NaN pattern."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)


def encode_bits(x, f: Format | str) -> np.ndarray:
    """float values -> bit patterns of `f` after rounding (uint8 for fp8, uint16 for bf16/fp16 ...)."""
    f = fmt(f) if isinstance(f, str) else f
    r = round_to(x, f)
    if f.name == "bfloat16":
        return (r.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if f.name in ("float16", "float32", "float64"):
        return r.astype(f.name).view({"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}[f.name])
    table = _fp8_table(f.name)
    order = np.argsort(table[:128][~np.isnan(table[:128])], kind="stable")
    pos_codes = np.arange(128)[~np.isnan(table[:128])][order]
    pos_vals = table[pos_codes]
    idx = np.searchsorted(pos_vals, np.abs(np.nan_to_num(r, nan=0.0, posinf=0.0)))
    codes = pos_codes[np.clip(idx, 0, len(pos_codes) - 1)].astype(np.uint8)
    codes = np.where(np.signbit(r), codes | 0x80, codes).astype(np.uint8)
    nan_code = 0x7F if not f.has_inf else 0x7E
    codes = np.where(np.isnan(r), nan_code, codes)
    if f.has_inf:
        codes = np.where(np.isposinf(r), 0x7C, np.where(np.isneginf(r), 0xFC, codes))
    return codes.astype(np.uint8)


# -- ULPs ----------------------------------------------------------------------------------------

def ulp(x, f: Format | str) -> np.ndarray:
    """The spacing of format `f` at |x|: the gap from |x| to the next larger value of the format.

    Matches numpy.spacing for finite float32/float16/float64 values below the largest finite one;
    at 0 and among subnormals it is the smallest subnormal."""
    f = fmt(f) if isinstance(f, str) else f
    a = np.abs(np.asarray(x, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        _, e = np.frexp(a)
    exp = np.where(a == 0, f.emin, np.maximum(e.astype(np.int64) - 1, f.emin))
    out = np.ldexp(1.0, exp - f.mant)
    return np.where(np.isfinite(a), out, np.nan)


def ulp_error(out, ref, f: Format | str) -> np.ndarray:
    """|out - ref| in units of the spacing of `f` at the reference value."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(np.asarray(out, np.float64) - np.asarray(ref, np.float64)) / ulp(ref, f)


def ulp_distance(a, b, f: Format | str) -> np.ndarray:
    """How many representable values of `f` lie between a and b (both must be values of `f`); +0 and -0 are 0 apart."""
    f = fmt(f) if isinstance(f, str) else f
    if f.name == "float64":
        ia, ib = (np.asarray(v, np.float64).view(np.int64) for v in (a, b))
        mag = np.int64(0x7FFFFFFFFFFFFFFF)
        oa = np.where(ia < 0, -(ia & mag), ia).astype(object)
        ob = np.where(ib < 0, -(ib & mag), ib).astype(object)
        return np.abs(oa - ob).astype(np.float64)
    ba, bb = (encode_bits(v, f).astype(np.int64) for v in (a, b))
    sign = 1 << (f.bits - 1)
    oa = np.where(ba & sign, -(ba & (sign - 1)), ba)
    ob = np.where(bb & sign, -(bb & (sign - 1)), bb)
    return np.abs(oa - ob).astype(np.float64)


