"""Reading one tensor from .npy (memory-mapped), .npz, .pt/.pth or .safetensors, with clear errors."""
from __future__ import annotations

import json
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from diagnose.numerics.formats import FORMATS, NumericsError, decode_bits, fmt

# -- loading -------------------------------------------------------------------------------------

@dataclass
class Loaded:
    """One tensor as stored: `raw` is a memory map for .npy files (nothing read until a chunk is asked for),
    holding float values, or bit patterns when `bits` (bf16 as uint16, fp8 as uint8)."""
    raw: np.ndarray
    dtype: str                # the format the file carried (or --dtype said)
    path: str
    key: str | None = None
    bits: bool = False

    @property
    def shape(self) -> tuple:
        return tuple(self.raw.shape)

    def chunk(self, index=...) -> np.ndarray:
        """float64 values of raw[index] (decoded when raw holds bit patterns)."""
        part = self.raw[index]
        return decode_bits(part, self.dtype) if self.bits else np.asarray(part, dtype=np.float64)

    def rows(self, r0: int, r1: int, cols: int, c0: int = 0, c1: int | None = None) -> np.ndarray:
        """float64 block [r0:r1, c0:c1] of the (rows, cols) view. A C-ordered .npy file is read with
        pread, so memory stays at one block however large the file (a memory map's touched pages
        would stay resident)."""
        c1 = cols if c1 is None else c1
        raw = self.raw
        if isinstance(raw, np.memmap) and raw.flags.c_contiguous and raw.filename:
            item = raw.dtype.itemsize
            with open(raw.filename, "rb", buffering=0) as fh:
                if c0 == 0 and c1 == cols:
                    buf = os.pread(fh.fileno(), (r1 - r0) * cols * item, raw.offset + r0 * cols * item)
                else:
                    buf = b"".join(os.pread(fh.fileno(), (c1 - c0) * item, raw.offset + (r * cols + c0) * item)
                                   for r in range(r0, r1))
            part = np.frombuffer(buf, dtype=raw.dtype).reshape(r1 - r0, c1 - c0)
        else:
            part = raw.reshape(-1, cols)[r0:r1, c0:c1]
        return decode_bits(part, self.dtype) if self.bits else np.asarray(part, dtype=np.float64)

    @property
    def values(self) -> np.ndarray:
        """Every value as float64 (reads the whole file: for small tensors and tests)."""
        return self.chunk()


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
            arr = np.load(p, mmap_mode="r", allow_pickle=False)     # bounded memory whatever the size
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
    if not isinstance(arr, np.ndarray):
        arr = np.asarray(arr)
    if dtype is not None:
        f = fmt(dtype)
        if not decoded and arr.dtype.kind in "ui" and f.bits in (8, 16) and arr.dtype.itemsize * 8 == f.bits:
            return Loaded(arr, f.name, path, key, bits=True)          # bit patterns
        if arr.dtype.kind in "ui" and f.name in ("bfloat16",) + tuple(n for n in FORMATS if n.startswith("float8")):
            raise NumericsError(f"{path}: {arr.dtype} array given as {f.name}; bit patterns must be "
                                f"{'uint16' if f.bits == 16 else 'uint8'}")
        return Loaded(arr, f.name, path, key)
    name = file_dtype if file_dtype in FORMATS else ("float64" if arr.dtype.kind in "iub" else file_dtype)
    if name not in FORMATS:
        name = "float64"
    return Loaded(arr, name, path, key)
