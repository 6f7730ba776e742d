"""The project's one dtype table: every spelling of an element type and the bit layout of the float formats.

The log matcher's typed facts (`signatures.facts.parse_dtype`) and the numerics reader
(`diagnose.numerics.formats`) both read it, so "Half", "torch.float16" and "fp16" mean one thing
everywhere. Plain data; imports nothing.
"""
from __future__ import annotations

# name -> (stored mantissa bits, exponent of the smallest normal, largest finite value, storage bits, has inf)
# tf32 is stored in 32 bits but keeps 10 mantissa bits (the matmul inputs' rounding on NVIDIA tensor cores).
FLOAT_LAYOUTS: dict[str, tuple[int, int, float, int, bool]] = {
    "float64": (52, -1022, 1.7976931348623157e308, 64, True),
    "float32": (23, -126, 3.4028234663852886e38, 32, True),
    "tf32": (10, -126, 3.4028234663852886e38, 32, True),
    "float16": (10, -14, 65504.0, 16, True),
    "bfloat16": (7, -126, 3.3895313892515355e38, 16, True),
    "float8_e4m3fn": (3, -6, 448.0, 8, False),
    "float8_e5m2": (2, -14, 57344.0, 8, True),
}

# every spelling seen in logs, frameworks and on the command line -> the canonical name
ALIASES: dict[str, str] = {
    "float": "float32", "float32": "float32", "fp32": "float32", "f32": "float32", "single": "float32",
    "double": "float64", "float64": "float64", "fp64": "float64", "f64": "float64",
    "half": "float16", "float16": "float16", "fp16": "float16", "f16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "tf32": "tf32", "tensorfloat32": "tf32",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e4m3": "float8_e4m3fn", "fp8": "float8_e4m3fn",
    "e4m3": "float8_e4m3fn", "fp8e4m3": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn",
    "f8e4m3fn": "float8_e4m3fn", "fp8e4nv": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2", "e5m2": "float8_e5m2", "fp8e5m2": "float8_e5m2", "fp8_e5m2": "float8_e5m2",
    "fp8e5": "float8_e5m2", "f8e5m2": "float8_e5m2",
    "long": "int64", "int64": "int64", "i64": "int64", "s64": "int64",
    "int": "int32", "int32": "int32", "i32": "int32", "s32": "int32",
    "short": "int16", "int16": "int16", "i16": "int16", "char": "int8", "int8": "int8", "i8": "int8", "s8": "int8",
    "byte": "uint8", "uint8": "uint8", "u8": "uint8", "uint16": "uint16", "u16": "uint16",
    "bool": "bool", "i1": "bool", "pred": "bool",
    "complexfloat": "complex64", "complex64": "complex64", "complexdouble": "complex128", "complex128": "complex128",
    # cudaDataType_t, as cuBLAS/cuDNN calls print it (https://docs.nvidia.com/cuda/cublas/index.html#cudadatatype-t)
    "cuda_r_16bf": "bfloat16", "cuda_r_16f": "float16", "cuda_r_32f": "float32", "cuda_r_64f": "float64",
    "cuda_r_8f_e4m3": "float8_e4m3fn", "cuda_r_8f_e5m2": "float8_e5m2", "cuda_r_8i": "int8", "cuda_r_32i": "int32",
}

_PREFIXES = ("torch.", "c10::", "tl.", "jnp.", "np.", "numpy.", "at::", "scalartype::")


def canonical(text: str) -> str:
    """'Half', 'c10::BFloat16', 'torch.float32', 'tl.fp8e4nv', 'f16' -> the canonical name; unknown text
    comes back lower-cased and stripped of framework prefixes."""
    t = str(text).strip().strip("'\"`").lower()
    for prefix in _PREFIXES:
        if t.startswith(prefix):
            t = t[len(prefix):]
    t = t.replace("<", "").replace(">", "")
    return ALIASES.get(t, t)
