"""Why a kernel's numbers differ from a reference: measures, ULPs, tolerances, error patterns, verdict.

Pure functions of arrays (numpy only; torch and safetensors are used when present, never required).
The CLI (`diagnose numerics`), the pytest plugin and `annotate_diagnosis` (assert_close text in a log)
all read through the same code, so a reviewer gets one reading whatever the entry point.

Formats narrower than numpy knows (bfloat16, float8 e4m3fn / e5m2) travel as their bit patterns
(uint16 / uint8) and are decoded and rounded here with plain integer arithmetic.
"""
from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import re2

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


FORMATS = {
    "float64": Format("float64", 52, -1022, float(np.finfo(np.float64).max), 64),
    "float32": Format("float32", 23, -126, float(np.finfo(np.float32).max), 32),
    "tf32": Format("tf32", 10, -126, float(np.finfo(np.float32).max), 32),
    "float16": Format("float16", 10, -14, 65504.0, 16),
    "bfloat16": Format("bfloat16", 7, -126, float.fromhex("0x1.fep127"), 16),
    "float8_e4m3fn": Format("float8_e4m3fn", 3, -6, 448.0, 8, has_inf=False),
    "float8_e5m2": Format("float8_e5m2", 2, -14, 57344.0, 8),
}

_ALIASES = {
    "fp64": "float64", "f64": "float64", "double": "float64",
    "fp32": "float32", "f32": "float32", "float": "float32",
    "fp16": "float16", "f16": "float16", "half": "float16",
    "bf16": "bfloat16",
    "fp8": "float8_e4m3fn", "e4m3": "float8_e4m3fn", "fp8e4m3": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn",
    "float8_e4m3": "float8_e4m3fn", "f8e4m3fn": "float8_e4m3fn", "fp8e4nv": "float8_e4m3fn",
    "e5m2": "float8_e5m2", "fp8e5m2": "float8_e5m2", "fp8_e5m2": "float8_e5m2", "fp8e5": "float8_e5m2",
    "f8e5m2": "float8_e5m2",
}


class NumericsError(ValueError):
    """Input a user can fix (a file, a key, a dtype): the message names it and says what to do."""


def fmt(name: str) -> Format:
    key = str(name).strip().lower()
    for prefix in ("torch.", "np.", "numpy.", "jnp."):
        if key.startswith(prefix):
            key = key[len(prefix):]
    key = _ALIASES.get(key, key)
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


# -- loading -------------------------------------------------------------------------------------

@dataclass
class Loaded:
    values: np.ndarray        # float64
    dtype: str                # the format the file carried (or --dtype said)
    path: str
    key: str | None = None


_ST_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
              "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
              "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "U16": "uint16",
              "BOOL": "bool"}


def _pick(container: dict | list, key: str | None, path: str):
    names = list(container.keys()) if isinstance(container, dict) else list(range(len(container)))
    if not names:
        raise NumericsError(f"{path}: holds no tensors")
    if key is None:
        if len(names) == 1:
            return names[0], container[names[0]]
        raise NumericsError(f"{path}: holds {len(names)} tensors ({_names(names)}): pick one with --key NAME or --key INDEX")
    if isinstance(container, dict) and key in container:
        return key, container[key]
    if re.fullmatch(r"-?\d+", str(key)):
        i = int(key)
        if -len(names) <= i < len(names):
            return names[i], container[names[i]]
    raise NumericsError(f"{path}: no tensor {key!r}; it holds {_names(names)}")


def _names(names) -> str:
    shown = ", ".join(str(n) for n in names[:12])
    return shown + (f", ... ({len(names)} in all)" if len(names) > 12 else "")


def _read_safetensors(path: Path, key: str | None):
    """safetensors is 8 bytes of header length, a JSON header, then raw little-endian data: read it with numpy."""
    try:
        with open(path, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            if n > 100_000_000:
                raise ValueError("header too large")
            header = json.loads(fh.read(n))
            base = 8 + n
            header.pop("__metadata__", None)
            name, meta = _pick(header, key, str(path))
            start, end = meta["data_offsets"]
            fh.seek(base + start)
            raw = fh.read(end - start)
    except (struct.error, ValueError, KeyError, UnicodeDecodeError) as e:
        if isinstance(e, NumericsError):
            raise
        raise NumericsError(f"{path}: not a readable safetensors file ({e}); re-save it with safetensors") from None
    dtype = _ST_DTYPES.get(meta["dtype"])
    if dtype is None:
        raise NumericsError(f"{path}: tensor {name!r} has dtype {meta['dtype']}, which numerics cannot compare")
    shape = tuple(meta["shape"])
    if dtype == "bfloat16":
        vals = decode_bits(np.frombuffer(raw, "<u2").reshape(shape), "bfloat16")
    elif dtype.startswith("float8"):
        vals = decode_bits(np.frombuffer(raw, np.uint8).reshape(shape), dtype)
    else:
        arr = np.frombuffer(raw, np.dtype(dtype).newbyteorder("<")).reshape(shape)
        vals = arr.astype(np.float64)
    return name, vals, dtype


def _from_torch(t, path: str):
    import torch

    dtype = str(t.dtype).replace("torch.", "")
    if dtype not in FORMATS and not t.dtype.is_floating_point and t.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool):
        raise NumericsError(f"{path}: dtype {t.dtype} cannot be compared")
    return t.detach().to("cpu").to(torch.float64).numpy(), dtype


def load_tensor(path, key: str | None = None, dtype: str | None = None) -> Loaded:
    """One tensor from .npy / .npz / .pt / .pth / .safetensors; `key` is a name or an index.

    `dtype` says what the values are: integer arrays (uint16 / uint8) with dtype bf16 / fp8 are bit
    patterns and are decoded; float arrays keep their values and are measured in that format."""
    p = Path(path)
    if not p.exists():
        raise NumericsError(f"{path}: no such file")
    suffix = p.suffix.lower()
    name = None
    try:
        if suffix == ".npy":
            arr = np.load(p, allow_pickle=False)
        elif suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                name, arr = _pick({k: z[k] for k in z.files}, key, str(path))
        elif suffix in (".pt", ".pth"):
            try:
                import torch
            except ImportError:
                raise NumericsError(f"{path}: reading .pt files needs torch; install it, or save the tensor "
                                    "with numpy.save (.npy) or safetensors") from None
            obj = torch.load(p, map_location="cpu", weights_only=True)
            if isinstance(obj, torch.Tensor):
                if key is not None:
                    obj = obj[int(key)] if re.fullmatch(r"-?\d+", str(key)) else _pick({}, key, str(path))
                vals, file_dtype = _from_torch(obj, str(path))
                return _finish(vals, file_dtype, dtype, str(path), key)
            if isinstance(obj, (dict, list, tuple)):
                container = dict(obj) if isinstance(obj, dict) else list(obj)
                name, t = _pick(container, key, str(path))
                if not isinstance(t, torch.Tensor):
                    raise NumericsError(f"{path}: entry {name!r} is a {type(t).__name__}, not a tensor")
                vals, file_dtype = _from_torch(t, str(path))
                return _finish(vals, file_dtype, dtype, str(path), str(name))
            raise NumericsError(f"{path}: holds a {type(obj).__name__}; save a tensor or a dict of tensors")
        elif suffix == ".safetensors":
            name, vals, file_dtype = _read_safetensors(p, key)
            return _finish(vals, file_dtype, dtype, str(path), name, decoded=True)
        else:
            raise NumericsError(f"{path}: unknown file type {suffix or '(none)'}; use .npy, .npz, .pt or .safetensors")
    except NumericsError:
        raise
    except Exception as e:  # a corrupt or foreign file: name it, no traceback
        raise NumericsError(f"{path}: cannot read ({type(e).__name__}: {e})") from None
    if arr.dtype == object or arr.dtype.kind not in "fiub":
        raise NumericsError(f"{path}: dtype {arr.dtype} cannot be compared; save a float array")
    return _finish(arr, arr.dtype.name, dtype, str(path), None if name is None else str(name))


def _finish(arr, file_dtype: str, dtype: str | None, path: str, key, decoded: bool = False) -> Loaded:
    arr = np.asarray(arr)
    if dtype is not None:
        f = fmt(dtype)
        if not decoded and arr.dtype.kind in "ui" and f.bits in (8, 16) and arr.dtype.itemsize * 8 == f.bits:
            return Loaded(decode_bits(arr, f), f.name, path, key)       # bit patterns
        if arr.dtype.kind in "ui" and f.name in ("bfloat16",) + tuple(n for n in FORMATS if n.startswith("float8")):
            raise NumericsError(f"{path}: {arr.dtype} array given as {f.name}; bit patterns must be "
                                f"{'uint16' if f.bits == 16 else 'uint8'}")
        return Loaded(arr.astype(np.float64), f.name, path, key)
    name = file_dtype if file_dtype in FORMATS else ("float64" if arr.dtype.kind in "iub" else file_dtype)
    if name not in FORMATS:
        name = "float64"
    return Loaded(arr.astype(np.float64), name, path, key)


# -- tolerances ----------------------------------------------------------------------------------

# torch.testing.assert_close defaults (rtol, atol) per dtype; float8 dtypes are not in its table: exact.
TORCH_DEFAULTS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                  "float64": (1e-7, 1e-7)}


@dataclass
class Tolerance:
    rtol: float
    atol: float
    source: str                 # "given" | "recommended"
    explanation: str
    torch_default: str = ""


def torch_default_reading(out_dtype: str, ref_dtype: str) -> str:
    """What torch.testing.assert_close(out, ref) would compare for these dtypes, in words."""
    tol = [TORCH_DEFAULTS.get(d, (0.0, 0.0)) for d in (out_dtype, ref_dtype)]
    rtol, atol = max(t[0] for t in tol), max(t[1] for t in tol)
    head = ""
    if out_dtype != ref_dtype:
        head = (f"torch.testing.assert_close(out, ref) fails on dtype ({out_dtype} vs {ref_dtype}) unless "
                f"check_dtype=False; then it takes the looser of the two dtypes' defaults: ")
    else:
        head = "torch.testing.assert_close(out, ref) by default uses "
    text = head + f"rtol={rtol:g}, atol={atol:g}"
    if any(d.startswith("float8") for d in (out_dtype, ref_dtype)) and rtol == 0:
        text += " (float8 has no default tolerance in torch: an exact comparison)"
    return text


def recommend_tolerance(out_dtype: str, acc: str | None = None, k: int | None = None,
                        ref_scale: float | None = None, ref_dtype: str | None = None) -> Tolerance:
    """A tolerance that a correct kernel meets, derived from how it computes, with the reasoning.

    Model: the result is rounded once to the output format (u_out), and a sum of K products in the
    accumulation format gathers rounding errors that grow like sqrt(K) * u_acc when they are
    independent (the worst case is K * u_acc). TF32 rounds the inputs to 10 mantissa bits. A factor
    of 2 of margin; atol scales rtol by the reference's RMS, because cancellation can leave results
    near zero whose error is set by the operands' size, not the result's."""
    fo = fmt(out_dtype)
    parts = [f"{fo.name} output rounding: u = 2^-{fo.mant + 1} = {fo.unit_roundoff:.3g}"]
    bound = fo.unit_roundoff
    if acc:
        fa = fmt(acc)
        if fa.name == "tf32":
            bound += 2 * fa.unit_roundoff
            parts.append(f"TF32 matmul rounds both inputs to 10 mantissa bits: 2 x 2^-11 = {2 * fa.unit_roundoff:.3g}")
            fa_acc = FORMATS["float32"]
        else:
            fa_acc = fa
        kk = k or 1
        term = math.sqrt(kk) * fa_acc.unit_roundoff
        bound += term
        worst = kk * fa_acc.unit_roundoff
        parts.append(f"{fa_acc.name} accumulation over K={kk}: sqrt(K) x u = {term:.3g} (worst case K x u = {worst:.3g})")
    elif k:
        term = math.sqrt(k) * fo.unit_roundoff
        bound += term
        parts.append(f"accumulation in the output format ({fo.name}) over K={k}: sqrt(K) x u = {term:.3g}")
    rtol = float(f"{2 * bound:.2g}")
    if ref_scale and ref_scale > 0 and np.isfinite(ref_scale):
        atol = float(f"{rtol * ref_scale:.2g}")
        atol_text = f"atol = rtol x RMS(ref) ({ref_scale:.3g}) = {atol:.2g}"
    else:
        atol = TORCH_DEFAULTS.get(fo.name, (0, 1e-5))[1] or 1e-5
        atol_text = f"atol = {atol:g} (torch's default for {fo.name}; no reference scale known)"
    expl = ("; ".join(parts) + f"; with 2x margin: expect relative error around {rtol:.2g}, so rtol = {rtol:.2g}, "
            + atol_text)
    return Tolerance(rtol, atol, "recommended", expl,
                     torch_default_reading(fo.name, fmt(ref_dtype).name if ref_dtype else fo.name))


# -- measures ------------------------------------------------------------------------------------

def _q(a: np.ndarray, *ps: float) -> list[float]:
    """Several percentiles of `a` from one partition (a 4M-element tensor: one pass, not one each)."""
    return [float(v) for v in np.percentile(a, ps)] if a.size else [0.0] * len(ps)


def _idx(flat: int, shape) -> list[int]:
    return [int(i) for i in np.unravel_index(int(flat), shape)] if shape else []


def measure(out: np.ndarray, ref: np.ndarray, out_dtype: str, tol: Tolerance) -> dict:
    """Every measure of the difference; NaN in both tensors at the same place counts as agreeing."""
    f = fmt(out_dtype)
    out = np.asarray(out, np.float64)
    ref = np.asarray(ref, np.float64)
    fin = np.isfinite(out) & np.isfinite(ref)
    m: dict = {"shape": list(out.shape), "size": int(out.size), "dtype": f.name}
    for label, a in (("out", out), ("ref", ref)):
        m[f"{label}_nan"] = int(np.isnan(a).sum())
        m[f"{label}_posinf"] = int(np.isposinf(a).sum())
        m[f"{label}_neginf"] = int(np.isneginf(a).sum())
    same_nonfinite = (np.isnan(out) & np.isnan(ref)) | (np.isinf(out) & (out == ref))
    nonfinite_disagree = ~fin & ~same_nonfinite
    m["nonfinite_disagree"] = int(nonfinite_disagree.sum())
    m["nonfinite_out_only"] = int((~np.isfinite(out) & np.isfinite(ref)).sum())
    m["nonfinite_ref_only"] = int((np.isfinite(out) & ~np.isfinite(ref)).sum())
    d = np.abs(out - ref, where=fin, out=np.zeros_like(out))
    dfin = d[fin]
    rfin = np.abs(ref[fin])
    ref_max = float(rfin.max()) if rfin.size else 0.0
    floor = max(f.tiny, f.eps * ref_max)
    rel = dfin / np.maximum(rfin, floor)
    ulps = dfin / ulp(ref[fin], f)
    m["abs_max"] = float(dfin.max()) if dfin.size else 0.0
    m["abs_max_index"] = _idx(np.argmax(np.where(fin, d, -1)), out.shape) if out.size else []
    for p, v in zip((50, 90, 99, 99.9), _q(dfin, 50, 90, 99, 99.9)):
        m[f"abs_p{p:g}"] = v
    m["rel_floor"] = floor
    m["rel_max"] = float(rel.max()) if rel.size else 0.0
    m["rel_p50"], m["rel_p99"] = _q(rel, 50, 99)
    m["ulp_max"] = float(ulps.max()) if ulps.size else 0.0
    m["ulp_p50"], m["ulp_p99"] = _q(ulps, 50, 99)
    nref = float(np.linalg.norm(ref[fin]))
    m["norm_ratio"] = float(np.linalg.norm(dfin) / nref) if nref > 0 else (0.0 if not dfin.any() else math.inf)
    m["ref_rms"] = float(np.sqrt(np.mean(ref[fin] ** 2))) if rfin.size else 0.0
    bad = mismatch_mask(out, ref, tol.rtol, tol.atol)
    m["rtol"], m["atol"], m["tolerance"] = tol.rtol, tol.atol, tol.source
    m["mismatched"] = int(bad.sum())
    m["mismatch_fraction"] = float(bad.mean()) if bad.size else 0.0
    return m


def mismatch_mask(out, ref, rtol: float, atol: float) -> np.ndarray:
    """assert_close's test |out - ref| > atol + rtol |ref|, with equal NaNs and equal infinities agreeing."""
    out = np.asarray(out, np.float64)
    ref = np.asarray(ref, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(out - ref) <= atol + rtol * np.abs(ref)
    close |= (np.isnan(out) & np.isnan(ref)) | (np.isinf(out) & (out == ref))
    return ~close


# -- patterns ------------------------------------------------------------------------------------

@dataclass
class Finding:
    pattern: str
    family: str
    origin: str
    summary: str
    evidence: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"pattern": self.pattern, "family": self.family, "origin": self.origin,
                "summary": self.summary, "evidence": self.evidence}


FAMILY = "numerical-mismatch"
TILES = (8, 16, 32, 64, 128, 256, 512)


def _f(pattern, origin, summary, **evidence) -> Finding:
    return Finding(pattern, FAMILY, origin, summary, evidence)


def _axis_profile(bad: np.ndarray, axis: int) -> np.ndarray:
    other = tuple(i for i in range(bad.ndim) if i != axis)
    return bad.mean(axis=other) if other else bad.astype(float)


def _tail_tile(bad: np.ndarray) -> Finding | None:
    """Every error in the last partial tile along one axis: start is a multiple of a power of two T >= 8, n - start < T."""
    for axis in range(bad.ndim):
        n = bad.shape[axis]
        prof = _axis_profile(bad, axis)
        hit = np.nonzero(prof > 0)[0]
        if not hit.size:
            return None
        start = int(hit.min())
        if start == 0:
            continue
        tiles = [t for t in TILES if start % t == 0 and n - start < t and n % t != 0]
        if not tiles:
            continue
        inside = float(prof[start:].mean())
        if inside < 0.5:
            continue
        t = tiles[-1]      # the largest tile consistent with the boundary; smaller ones fit too
        return _f("tail-tile", "kernel-logic",
                  f"errors only in the last partial tile along axis {axis}: indices {start}..{n - 1} of {n} "
                  f"(tile {t}: {start // t} full tiles, then {n - start} left over); the boundary mask or the "
                  "tail tile's launch is missing",
                  axis=axis, start=start, size=n, tile=t, tiles_consistent=tiles, remainder=n - start,
                  bad_fraction_in_tail=round(inside, 4), bad_outside_tail=0)
    return None


def _whole_lines(bad: np.ndarray) -> Finding | None:
    if bad.ndim < 2:
        return None
    for axis, word in ((0, "rows"), (1, "columns")):
        prof = _axis_profile(bad, axis)
        hit = np.nonzero(prof > 0)[0]
        if hit.size and (prof[hit] >= 0.9).all() and hit.size < prof.size * 0.5:
            return _f(f"whole-{word}", "kernel-logic",
                      f"errors fill whole {word}: {hit.size} of {prof.size} {word} (indices {_short(hit)}); "
                      "an indexing error or a race at a tile boundary",
                      axis=axis, count=int(hit.size), of=int(prof.size), indices=[int(i) for i in hit[:32]],
                      min_fill=round(float(prof[hit].min()), 4))
    return None


def _short(idx) -> str:
    idx = [int(i) for i in idx]
    return ", ".join(map(str, idx[:8])) + (f", ... ({len(idx)})" if len(idx) > 8 else "")


def _blocks(bad: np.ndarray) -> Finding | None:
    if bad.ndim != 2:
        return None
    m, n = bad.shape
    for t in reversed(TILES):       # the largest block that explains the errors
        if m < 2 * t or n < 2 * t:
            continue
        gm, gn = -(-m // t), -(-n // t)
        pad = np.zeros((gm * t, gn * t), bool)
        pad[:m, :n] = bad
        frac = pad.reshape(gm, t, gn, t).mean(axis=(1, 3))
        full = np.zeros((gm * t, gn * t))
        full[:m, :n] = 1
        area = full.reshape(gm, t, gn, t).mean(axis=(1, 3))
        frac = np.divide(frac, area, out=np.zeros_like(frac), where=area > 0)
        hit = frac > 0
        if hit.any() and (frac[hit] >= 0.9).all() and hit.sum() < hit.size * 0.5:
            where = [[int(i), int(j)] for i, j in zip(*np.nonzero(hit))][:16]
            return _f("whole-blocks", "kernel-logic",
                      f"errors fill whole {t}x{t} blocks: {int(hit.sum())} of {hit.size} blocks (block row, col: {where[:4]}); "
                      "a tile computed from the wrong data, or a race at a tile boundary",
                      block=t, count=int(hit.sum()), of=int(hit.size), blocks=where)
    return None


def _periodic(bad: np.ndarray) -> Finding | None:
    for axis in range(bad.ndim):
        prof = _axis_profile(bad, axis)
        n = prof.size
        p = 2
        while p <= n // 2:
            full = (n // p) * p
            res = prof[:full].reshape(-1, p).mean(axis=0)
            badres = res >= 0.5
            goodres = res <= 0.02
            if badres.any() and (badres | goodres).all() and goodres.any():
                resid = np.nonzero(badres)[0]
                return _f("periodic", "kernel-logic",
                          f"errors repeat along axis {axis} with period {p} (a power of two): residues "
                          f"{_short(resid)} mod {p} are wrong, the rest right; a wrong stride or block offset",
                          axis=axis, period=p, bad_residues=[int(r) for r in resid[:64]],
                          bad_fraction_on_residues=round(float(res[badres].mean()), 4),
                          bad_fraction_elsewhere=round(float(res[goodres].mean()), 4))
            p *= 2
    return None


_NAMED = [(math.log2(math.e), "log2(e): exp vs exp2"), (math.log(2), "ln(2): exp2 vs exp"), (-1.0, "sign flipped")]


def _name_factor(s: float) -> str:
    for v, name in _NAMED:
        if abs(s - v) <= 1e-3 * abs(v):
            return name
    for base in (2.0,):
        lg = math.log(abs(s), base) if s else 0
        if s > 0 and abs(lg - round(lg)) < 1e-3:
            k = round(lg)
            extra = ""
            if k <= -2 and (-2 * k) <= 20:
                extra = f" = 1/sqrt({2 ** (-2 * k)})"
            elif 2 <= k and 2 * k <= 20:
                extra = f" = sqrt({2 ** (2 * k)})"
            return f"2^{k}{extra}"
        if s > 0:
            inv2 = (1 / s) ** 2
            if abs(inv2 - round(inv2)) < 1e-3 * inv2 and round(inv2) > 1:
                return f"1/sqrt({round(inv2)})"
            sq = s * s
            if abs(sq - round(sq)) < 1e-3 * sq and round(sq) > 1:
                return f"sqrt({round(sq)})"
    return ""


def _scale_offset(out, ref, tol: Tolerance, fin) -> Finding | None:
    o, r = out[fin], ref[fin]
    if o.size < 4:
        return None
    rr = float(r @ r)
    if rr > 0:
        s = float(o @ r) / rr
        resid = np.abs(o - s * r)
        ok = (resid <= tol.atol + tol.rtol * np.abs(s * r)).mean()
        if ok >= 0.999 and abs(s - 1) > 4 * tol.rtol:
            name = _name_factor(s)
            return _f("constant-factor", "kernel-logic",
                      f"out = {s:.6g} x ref{f' ({name})' if name else ''} everywhere: a wrong or missing scale "
                      "(softmax scale, dequantisation factor, exp vs exp2)",
                      factor=s, factor_name=name, fit_within_tolerance=round(float(ok), 6))
    diff = o - r
    c = float(np.median(diff))
    ok = (np.abs(diff - c) <= tol.atol + tol.rtol * np.abs(r)).mean()
    if ok >= 0.999 and abs(c) > tol.atol + tol.rtol * float(np.median(np.abs(r))):
        return _f("constant-offset", "kernel-logic",
                  f"out = ref {'+' if c >= 0 else '-'} {abs(c):.6g} everywhere: a missing or extra bias/offset",
                  offset=c, fit_within_tolerance=round(float(ok), 6))
    if out.ndim == 2 and fin.all():
        d2 = out - ref
        col = np.median(d2, axis=0)
        ok = (np.abs(d2 - col) <= tol.atol + tol.rtol * np.abs(ref)).mean()
        if ok >= 0.999 and (np.abs(col) > tol.atol).mean() > 0.5:
            return _f("column-offset", "kernel-logic",
                      "out - ref is the same down every column (an offset per column): a bias vector "
                      "missing or added twice", fit_within_tolerance=round(float(ok), 6),
                      offset_rms=float(np.sqrt(np.mean(col ** 2))))
    return None


def _transposed(out, ref, tol: Tolerance) -> Finding | None:
    if out.ndim != 2 or out.shape[0] != out.shape[1] or out.shape[0] < 2:
        return None
    bad_t = mismatch_mask(out, ref.T, tol.rtol, tol.atol)
    sym = mismatch_mask(ref, ref.T, tol.rtol, tol.atol).mean()
    if bad_t.mean() <= 0.001 and sym > 0.5:
        return _f("transposed", "kernel-logic",
                  "out matches ref transposed: rows and columns swapped (wrong strides or a transposed store)",
                  mismatch_fraction_vs_transpose=float(bad_t.mean()))
    return None


def _unwritten(out, ref, bad) -> Finding | None:
    vals = out[bad]
    vals = vals[np.isfinite(vals)]
    if vals.size < max(2, 0.9 * bad.sum()):
        return None
    if (vals == 0).mean() >= 0.95 and (ref[bad] != 0).mean() > 0.5:
        return _f("zeros", "kernel-logic",
                  f"{int((vals == 0).sum())} wrong elements are exactly 0 where the reference is not: "
                  "memory the kernel never wrote (a zero-initialised output) or a fully masked store",
                  exact_zeros=int((vals == 0).sum()), wrong=int(bad.sum()))
    uniq = np.unique(vals)
    if uniq.size == 1 and vals.size >= 4:
        return _f("constant-fill", "kernel-logic",
                  f"every wrong element holds the same value {uniq[0]:g}: memory the kernel never wrote",
                  value=float(uniq[0]), wrong=int(bad.sum()))
    return None


def _nonfinite(out, ref, f: Format) -> Finding | None:
    src = ~np.isfinite(out) & np.isfinite(ref)
    n = int(src.sum())
    if not n:
        return None
    nan = int((np.isnan(out) & src).sum())
    inf = n - nan
    big = np.abs(ref[src]) > f.max
    ev = {"nonfinite_where_ref_finite": n, "nan": nan, "inf": inf, "ref_beyond_dtype_max": int(big.sum()),
          "dtype_max": f.max}
    if big.mean() >= 0.5:
        return _f("overflow", "numerics",
                  f"{n} non-finite outputs where the reference exceeds the {f.name} maximum ({f.max:g}): overflow; "
                  "scale down, subtract the max before exp, or accumulate/output in a wider type", **ev)
    if out.ndim == 2:
        for axis, word in ((1, "rows"), (0, "columns")):
            full = src.all(axis=axis)              # rows (axis=1) or columns (axis=0) entirely non-finite
            covered = src[full].sum() if axis == 1 else src[:, full].sum()
            if full.any() and covered >= 0.9 * n and full.sum() < full.size:
                k = int(full.sum())
                return _f("nonfinite-spread", "numerics" if inf else "kernel-logic",
                          f"NaN/Inf fill {k} whole {word} ({_short(np.nonzero(full)[0])}): spreading from a few "
                          "sources through a reduction (an Inf/NaN input, a division by zero, an overflow "
                          "in that row's max/sum, or uninitialised memory read there)",
                          sources=k, **ev)
    if nan and not inf and bad_region_is_box(src):
        return _f("uninitialised", "kernel-logic",
                  f"{nan} NaNs form one solid block where the reference is finite: an output region left "
                  "uninitialised (its poison/garbage shows through)", **ev, box=bounding_box(src))
    return _f("nonfinite", "numerics" if inf else "kernel-logic",
              f"{n} scattered non-finite outputs ({nan} NaN, {inf} Inf) where the reference is finite: "
              "division by zero, log/sqrt of a negative, overflow, or uninitialised memory", **ev)


def bounding_box(mask: np.ndarray) -> list[list[int]]:
    idx = np.nonzero(mask)
    return [[int(i.min()), int(i.max()) + 1] for i in idx]


def bad_region_is_box(mask: np.ndarray) -> bool:
    box = bounding_box(mask)
    sl = tuple(slice(a, b) for a, b in box)
    return bool(mask[sl].all()) and mask.sum() >= 2


def _magnitude(out, ref, bad, m: dict, f: Format) -> Finding | None:
    fin = np.isfinite(out) & np.isfinite(ref)
    r = np.abs(ref[fin])
    d = np.abs(out - ref)[fin]
    if r.size < 16 or bad.mean() < 0.01:
        return None
    hi = r >= np.percentile(r, 75)
    lo = r <= np.percentile(r, 25)
    if not hi.any() or not lo.any():
        return None
    grows = float(np.median(d[hi])) > 4 * float(np.median(d[lo]) + 1e-300)
    rel = m["rel_p50"]
    bits = -math.log2(rel) if rel > 0 else float("inf")
    if grows:
        return _f("grows-with-magnitude", "numerics",
                  f"errors grow with |ref| (median error {np.median(d[hi]):.3g} on the largest quarter vs "
                  f"{np.median(d[lo]):.3g} on the smallest) and are spread over {m['mismatch_fraction']:.1%} of "
                  f"elements: precision, not indexing; median relative error {rel:.3g} is about {bits:.1f} bits, "
                  f"{f.name} keeps {f.mant + 1}: a downcast somewhere, or a tolerance that assumes more precision "
                  "than the kernel has", median_rel=rel, effective_bits=round(bits, 1),
                  median_abs_top_quarter=float(np.median(d[hi])), median_abs_bottom_quarter=float(np.median(d[lo])))
    diff = (out - ref)[fin]
    mean, std = float(diff.mean()), float(diff.std())
    nr = m["norm_ratio"]
    if 0 < nr < 0.25 and abs(mean) < 0.25 * std:
        nbits = -math.log2(nr)
        return _f("precision-noise", "numerics",
                  f"unstructured, zero-mean errors over {m['mismatch_fraction']:.1%} of elements (mean {mean:.3g}, "
                  f"std {std:.3g}), ‖out-ref‖/‖ref‖ = {nr:.3g} (about {nbits:.1f} bits): rounding noise larger "
                  f"than the claimed precision gives (expected rtol {m['rtol']:g}); accumulation in a narrower type "
                  "than claimed, or a tolerance too tight", norm_ratio=nr, effective_bits=round(nbits, 1),
                  mean_error=mean, std_error=std)
    return None


@dataclass
class Reading:
    measures: dict
    tolerance: Tolerance
    recommended: Tolerance
    findings: list[Finding]
    verdict: str                  # "likely defect" | "expected variation"
    decided_by: str

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "decided_by": self.decided_by,
                "findings": [x.to_json() for x in self.findings], "measures": self.measures,
                "tolerance": vars(self.tolerance), "recommended": vars(self.recommended)}

    @property
    def family(self) -> str:
        return FAMILY

    @property
    def origin(self) -> str:
        return self.findings[0].origin if self.findings else "numerics"


def analyse(out, ref, out_dtype: str = "float32", ref_dtype: str = "float64", acc: str | None = None,
            k: int | None = None, atol: float | None = None, rtol: float | None = None,
            tol_source: str = "given") -> Reading:
    """Compare `out` (a kernel's result, values in `out_dtype`) with `ref`: measures, findings, verdict."""
    out = np.asarray(out, np.float64)
    ref = np.asarray(ref, np.float64)
    if out.shape != ref.shape:
        hint = ""
        if out.ndim == 2 and out.shape == ref.shape[::-1]:
            hint = " (out has the transposed shape: a transposed result?)"
        elif out.size == ref.size:
            hint = " (same number of elements: a view/reshape or stride mix-up?)"
        raise NumericsError(f"shapes differ: out {list(out.shape)} vs ref {list(ref.shape)}{hint}")
    f = fmt(out_dtype)
    fin_ref = ref[np.isfinite(ref)]
    scale = float(np.sqrt(np.mean(fin_ref ** 2))) if fin_ref.size else 0.0
    rec = recommend_tolerance(f.name, acc, k, ref_scale=scale, ref_dtype=ref_dtype)
    if (atol is None) != (rtol is None):
        given = Tolerance(rtol if rtol is not None else rec.rtol, atol if atol is not None else rec.atol, "given",
                          "given in part; the rest recommended")
    elif atol is not None:
        given = Tolerance(rtol, atol, tol_source, f"{tol_source}: rtol={rtol:g}, atol={atol:g}")
    else:
        given = rec
    m = measure(out, ref, f.name, given)
    bad = mismatch_mask(out, ref, given.rtol, given.atol)
    findings: list[Finding] = []
    fin = np.isfinite(out) & np.isfinite(ref)
    if bad.any():
        nf = _nonfinite(out, ref, f)
        structural = (_tail_tile(bad) or _transposed(out, ref, given) or _whole_lines(bad) or _blocks(bad)
                      or _periodic(bad))
        if structural and nf and structural.pattern != "transposed":
            structural.evidence.update({"nan_in_region": nf.evidence["nan"], "inf_in_region": nf.evidence["inf"]})
        if (nf and nf.evidence["inf"] == 0 and nf.pattern != "overflow" and structural
                and structural.pattern in ("tail-tile", "whole-blocks")):
            # NaN (a poison or garbage) in tile-shaped regions the kernel never wrote
            nf = _f("uninitialised", "kernel-logic",
                    f"{nf.evidence['nan']} NaNs fill tile-shaped regions ({structural.pattern}) where the "
                    "reference is finite: output memory the kernel never wrote (uninitialised; the poison shows)",
                    **nf.evidence, where=structural.pattern)
            findings += [nf, structural]
        else:
            findings += [x for x in (structural, nf) if x]
        if not nf:
            unw = _unwritten(out, ref, bad)
            if unw:
                findings.append(unw)
        if not findings:
            so = _scale_offset(out, ref, given, fin)
            if so:
                findings.append(so)
        if not findings:
            mg = _magnitude(out, ref, bad, m, f)
            if mg:
                findings.append(mg)
    if bad.any():
        verdict = "likely defect"
        lead = findings[0].summary if findings else "errors without a recognisable pattern"
        decided = (f"{m['mismatched']} of {m['size']} elements ({m['mismatch_fraction']:.3%}) exceed "
                   f"{given.source} rtol={given.rtol:g}, atol={given.atol:g}; max |out-ref| {m['abs_max']:.3g}, "
                   f"max {m['ulp_max']:.3g} ULP of {f.name}; {lead}")
    else:
        verdict = "expected variation"
        findings.append(_f("within-tolerance", "numerics",
                           f"every element within {given.source} rtol={given.rtol:g}, atol={given.atol:g}: "
                           f"rounding differences, max {m['ulp_max']:.3g} ULP, median {m['ulp_p50']:.3g} ULP of {f.name}",
                           ulp_max=m["ulp_max"], ulp_p50=m["ulp_p50"], rel_p99=m["rel_p99"]))
        decided = (f"0 of {m['size']} elements exceed {given.source} rtol={given.rtol:g}, atol={given.atol:g}; "
                   f"max {m['ulp_max']:.3g} ULP (median {m['ulp_p50']:.3g}) of {f.name}, "
                   f"‖out-ref‖/‖ref‖ = {m['norm_ratio']:.3g}")
    if bad.any() and given is rec and not k and findings and findings[0].pattern in ("precision-noise", "grows-with-magnitude"):
        decided += ("; note: no reduction length given, so the recommended tolerance assumes none: for a matmul "
                    "or a sum pass --acc and --k")
    return Reading(m, given, rec, findings, verdict, decided)


# -- assert_close / assert_allclose text ---------------------------------------------------------

_INT = re2.compile(r"-?\d+")
_NUM = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)"
_PATTERNS = [
    ("mismatched_count", "total_count", re2.compile(r"Mismatched elements: (\d+) / (\d+)")),
]
_FIELDS = {
    "max_abs_diff": re2.compile(rf"(?i)(?:Greatest absolute difference|Max absolute difference(?: among violations)?|Absolute difference): ({_NUM})"),
    "max_abs_index": re2.compile(r"(?i)Greatest absolute difference: \S+ at index (\([^)]*\)|\d+)"),
    "max_rel_diff": re2.compile(rf"(?i)(?:Greatest relative difference|Max relative difference(?: among violations)?|Relative difference): ({_NUM})"),
    "max_rel_index": re2.compile(r"(?i)Greatest relative difference: \S+ at index (\([^)]*\)|\d+)"),
    "atol": re2.compile(rf"(?i)(?:absolute difference|Absolute difference): \S+(?: at index \([^)]*\)| at index \d+)? \(up to ({_NUM}) allowed\)|atol=({_NUM})"),
    "rtol": re2.compile(rf"(?i)(?:relative difference|Relative difference): \S+(?: at index \([^)]*\)| at index \d+)? \(up to ({_NUM}) allowed\)|rtol=({_NUM})"),
}


def parse_mismatch_text(text: str) -> dict:
    """Numbers from a torch.testing.assert_close or numpy.testing.assert_allclose message.

    Keys (when present): mismatched_count, total_count, mismatch_fraction, max_abs_diff, max_abs_index,
    max_rel_diff, atol, rtol, kind ("torch" | "numpy"), nan_location_mismatch."""
    res: dict = {}
    m = _PATTERNS[0][2].search(text)
    if m:
        res["mismatched_count"], res["total_count"] = int(m[1]), int(m[2])
        res["mismatch_fraction"] = res["mismatched_count"] / res["total_count"] if res["total_count"] else 0.0
    for name, rx in _FIELDS.items():
        mm = rx.search(text)
        if mm:
            val = next(g for g in mm.groups() if g is not None)
            if name.endswith("_index"):
                res[name] = [int(x) for x in _INT.findall(val)]
            else:
                res[name] = float(val)
    if "not close" in text or "Greatest" in text:
        res["kind"] = "torch"
    elif "Not equal to tolerance" in text or "Max absolute difference" in text:
        res["kind"] = "numpy"
    if "nan location mismatch" in text or "inf location mismatch" in text.lower():
        res["nan_location_mismatch"] = True
    if "Scalars are not close" in text:
        res.setdefault("mismatched_count", 1)
        res.setdefault("total_count", 1)
        res.setdefault("mismatch_fraction", 1.0)
    return res


def _num(v):
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).strip())
    except (TypeError, ValueError):
        return None


def tolerance_reading(facts: dict) -> str:
    """One paragraph on whether the tolerance in a failing assert_close suits its dtype (no tensors needed)."""
    dtype = facts.get("dtype")
    parts = []
    n, total = facts.get("mismatched_count"), facts.get("total_count")
    if isinstance(n, (int, float)) and isinstance(total, (int, float)) and total:
        frac = n / total
        where = "a few elements: look for a pattern (a tail tile, a row) rather than precision" if frac < 0.01 else \
            "most elements: a systematic error (scale, precision, wrong data)" if frac > 0.5 else "a sizeable share"
        parts.append(f"{int(n)} of {int(total)} elements ({frac:.3%}) mismatch: {where}.")
    rtol, atol = _num(facts.get("rtol")), _num(facts.get("atol"))
    rel, ab = _num(facts.get("max_rel_diff")), _num(facts.get("max_abs_diff"))
    if ab is not None and math.isnan(ab) or rel is not None and math.isnan(rel):
        parts.append("The greatest difference is NaN: the output holds NaN where the reference does not "
                     "(overflow, uninitialised memory or a division by zero), not a tolerance question.")
    f = None
    try:
        f = fmt(dtype) if dtype else None
    except NumericsError:
        f = None
    if f is not None:
        rec = recommend_tolerance(f.name)
        parts.append(f"For {f.name}: {rec.torch_default}. One rounding step of {f.name} is a relative error of "
                     f"{f.unit_roundoff:.3g}.")
        if rtol is not None and rtol < f.unit_roundoff:
            parts.append(f"The rtol in use ({rtol:g}) is below one {f.name} rounding ({f.unit_roundoff:.3g}): "
                         "the test demands more precision than the dtype has; derive the tolerance from the dtype "
                         "(`diagnose numerics --dtype ... --acc ... --k ...`).")
    if rel is not None and not math.isnan(rel) and rtol:
        ratio = rel / rtol if rtol else math.inf
        if f is not None and rel <= 8 * f.eps:
            parts.append(f"The greatest relative difference ({rel:.3g}) is within a few {f.name} ULPs "
                         f"({rel / f.eps:.2g} eps): expected variation, the tolerance is too tight.")
        elif ratio > 100:
            parts.append(f"The greatest relative difference ({rel:.3g}) is {ratio:.3g}x the rtol: far beyond "
                         "rounding; likely a defect.")
    return " ".join(parts)


def annotate_diagnosis(d) -> None:
    """Add mismatch facts and a tolerance reading to a numerical-mismatch Diagnosis (appends, never replaces)."""
    if getattr(d, "family", None) != FAMILY:
        return
    facts = d.facts if isinstance(d.facts, dict) else {}
    parsed = {}
    for line in ([d.root.text] if d.root else []) + [e.text for e in d.evidence]:
        for k2, v in parse_mismatch_text(line).items():
            parsed.setdefault(k2, v)
    for k2, v in parsed.items():
        facts.setdefault(k2, v)
    for k2 in ("max_abs_diff", "max_rel_diff", "atol", "rtol"):
        if k2 in facts and not isinstance(facts[k2], float):
            v = _num(facts[k2])
            if v is not None:
                facts[k2] = v
    n, total = _num(facts.get("mismatched_count")), _num(facts.get("total_count"))
    if n is not None and total:
        facts.setdefault("mismatch_fraction", n / total)
    d.facts = facts
    text = tolerance_reading(facts)
    if text:
        d.notes.append("numerics: " + text)
