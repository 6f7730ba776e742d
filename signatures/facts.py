"""Typed facts: turn the text a named group captured into a normalised value.

The type comes from the group's name (a suffix convention), so signature files stay short:

    *_bytes, bytes          byte size -> int     ("2.00 GiB", "0x10000 bytes", "262144", "48KB")
    *_cc, cc, arch          compute capability   ("sm_90a", "compute_86", "90", "8.6") -> "9.0a", "8.6"
    shape*, *_shape         shape -> list[int]   ("[2, 3]", "(2x3)", "2 x 3", "torch.Size([4, 5])")
    dtype*, *_dtype         dtype -> canonical   ("Half", "c10::BFloat16", "torch.float32", "f16") -> "float16"
    device*, *_device       device -> "cuda:0" / "cpu" / "tpu:0"
    line, *_line, *_count, *_int, rank, errno, pid, code, *_code, xid, *_num, *_ms, *_s,
    *_words (an amount counted in words, as Mosaic/SparseCore print it)
                            int (hex accepted)
    anything else           str, whitespace-trimmed
"""
from __future__ import annotations

import re2

from findings.dtypes import canonical

_UNITS = {
    "": 1, "b": 1, "byte": 1, "bytes": 1,
    # a bare K/M/G/T is XLA's HumanReadableNumBytes ("Used 21.95G of 15.48G hbm"): binary
    "k": 1024, "kb": 1000, "m": 1024**2, "mb": 1000**2, "g": 1024**3, "gb": 1000**3, "t": 1024**4, "tb": 1000**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
}
_SIZE = re2.compile(r"^\s*(?P<num>0x[0-9a-fA-F]+|\d+(?:\.\d+)?)\s*(?P<unit>[kKmMgGtT]?i?[bB](?:ytes?)?|[kKmMgGtT])?\s*$")


def parse_bytes(text: str) -> int | None:
    """'2.00 GiB' -> 2147483648; '0x10000 bytes' -> 65536; '48KB' -> 48000 (KB is decimal, KiB binary).

    torch prints binary sizes as "GiB"; older torch prints "GB" meaning GiB as well, but we keep SI
    meaning for SI units. A bare "G"/"M"/"K" (XLA's "Used 21.95G of 15.48G") is binary, as XLA means it.
    """
    m = _SIZE.match(text.replace(",", ""))
    if not m:
        return None
    num = m["num"]
    value = int(num, 16) if num.lower().startswith("0x") else float(num)
    unit = (m["unit"] or "").lower()
    if unit not in _UNITS:
        unit = unit.rstrip("s")
    if unit.endswith("byte"):
        unit = unit[: -len("byte")] + "b"
    return int(round(value * _UNITS.get(unit, 1)))


def format_bytes(n: int) -> str:
    """262144 -> '256 KiB'; 2426656522 -> '2.26 GiB'; 512 -> '512 B': a size as a reader says it
    (binary units, at most two decimals; the exact count is in the log and in the JSON facts)."""
    if n < 1024:
        return f"{n} B"
    for unit, size in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            shown = f"{n / size:.2f}".rstrip("0").rstrip(".")
            return f"{shown} {unit}"
    return f"{n} B"


_CC = re2.compile(r"(?i)(?:sm_|compute_|sm|cc\s*)?(?P<major>\d{1,2}?)\.?(?P<minor>\d)(?P<suffix>[af]?)$")
_CC_DOTTED = re2.compile(r"(\d{1,2})\.(\d)([af]?)")


def parse_cc(text: str) -> str | None:
    """'sm_90a' -> '9.0a'; 'compute_86' -> '8.6'; '8.0' -> '8.0'; '120' -> '12.0'."""
    t = text.strip().strip("'\"")
    if t.lower().startswith("gfx"):
        return t.lower()             # an AMD target (gfx90a) is its own name
    m = _CC_DOTTED.fullmatch(t)
    if m:
        return f"{int(m[1])}.{m[2]}{m[3]}"
    m = _CC.search(t)
    if not m or not m["major"]:
        return None
    return f"{int(m['major'])}.{m['minor']}{m['suffix'].lower()}"


_INT = re2.compile(r"-?\d+")


def parse_shape(text: str) -> list[int] | None:
    nums = _INT.findall(text.replace("torch.Size", ""))
    return [int(n) for n in nums] if nums else None


def parse_dtype(text: str) -> str:
    """The canonical dtype name, from the project's one table (findings/dtypes.py)."""
    return canonical(text)


_DEVICE = re2.compile(r"device\(type='(\w+)'(?:,\s*index=(\d+))?\)")


def parse_device(text: str) -> str:
    t = text.strip().strip("'\"").lower()
    m = _DEVICE.fullmatch(t)
    if m:
        t = m[1] + (f":{m[2]}" if m[2] is not None else "")
    return t


def parse_int(text: str) -> int | str:
    t = text.strip().replace(",", "")
    try:
        return int(t, 16) if t.lower().startswith("0x") else int(t)
    except ValueError:
        return text.strip()


_INT_NAMES = {"line", "rank", "errno", "pid", "code", "xid", "world_size", "seq", "timeout_ms", "limit"}
_INT_SUFFIXES = ("_line", "_count", "_int", "_code", "_num", "_ms", "_s", "_rank", "_size_int", "_words")


def fact_kind(name: str) -> str:
    """The type a group name asks for: bytes, cc, shape, dtype, device, int or str."""
    if name == "bytes" or name.endswith("_bytes"):
        return "bytes"
    if name in ("cc", "arch") or name.endswith("_cc") or name.endswith("_arch"):
        return "cc"
    if name.startswith("shape") or name.endswith("_shape"):
        return "shape"
    if name.startswith("dtype") or name.endswith("_dtype"):
        return "dtype"
    if name.startswith("device") or name.endswith("_device"):
        return "device"
    if name in _INT_NAMES or name.endswith(_INT_SUFFIXES):
        return "int"
    return "str"


def normalise(name: str, text: str):
    """Normalise one captured group; falls back to the trimmed text when it cannot be parsed."""
    kind = fact_kind(name)
    if kind == "bytes":
        value = parse_bytes(text)
    elif kind == "cc":
        value = parse_cc(text)
    elif kind == "shape":
        value = parse_shape(text)
    elif kind == "dtype":
        value = parse_dtype(text)
    elif kind == "device":
        value = parse_device(text)
    elif kind == "int":
        value = parse_int(text)
    else:
        value = text.strip()
    return text.strip() if value is None else value


def spelled(text: str, value: int | None = None) -> str:
    """A size as the log wrote it, for a reader: '2.26 GiB' and '21.90G' as they are, a bare count
    with its unit ('131072' -> '131072 bytes', '0xc000' -> '0xc000 bytes'), and a count of a MiB or
    more with its binary size after it ('68852648264 bytes (64.12 GiB)')."""
    t = " ".join(text.split())
    if t and (t[-1].isdigit() or t.lower().startswith("0x") and t[-1] not in "bBsS"):
        t += " bytes"
    if value is not None and value >= 1024**2 and t.lower().endswith(("bytes", "byte")):
        t += f" ({format_bytes(value)})"
    return t


def render(name: str, value, text: str | None = None) -> str:
    """How a fact reads inside fix text and reports. `text` is how the log wrote it (Diagnosis.fact_text):
    a size is shown in the log's own unit when the log wrote it, in binary units when it did not."""
    if fact_kind(name) == "bytes" and isinstance(value, int):
        if text and parse_bytes(text) == value:
            return spelled(text, value)
        return format_bytes(value)
    if fact_kind(name) == "cc" and isinstance(value, str) and value[:1].isdigit():
        return f"sm_{value.replace('.', '')}"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)
