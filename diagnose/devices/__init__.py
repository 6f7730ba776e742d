"""Accelerator peak figures (devices.toml): dense peak TFLOP/s per dtype, bandwidth, L2, units, shared memory.

The table is data with a source for every number (`Device.source(group)`); this module only reads it.

    from diagnose.devices import lookup, from_snapshot, all_devices, normalise_dtype
    h100 = lookup("H100 SXM")                 # by id, name or alias; case and punctuation ignored
    h100.peak("bf16")                         # 989.4 (TFLOP/s, dense) or None where no figure exists
    h100.bandwidth_gbs, h100.l2_mb, h100.compute_units, h100.smem_per_block_kb, h100.launch_floor_us
    h100.source("compute").url                # where the peak rates come from
    dev, notes = from_snapshot(json.load(open("env.json")))   # a `diagnose env --json` snapshot's GPU

Unknown names raise `DeviceError` naming the closest known ones: a guessed device would give a
confident-looking wrong ceiling.
"""
from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).with_name("devices.toml")

DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")

_DTYPE_ALIASES = {
    "fp64": "fp64", "float64": "fp64", "f64": "fp64", "double": "fp64",
    "fp32": "fp32", "float32": "fp32", "f32": "fp32", "float": "fp32", "single": "fp32",
    "tf32": "tf32", "tensorfloat32": "tf32",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "f16": "fp16", "half": "fp16",
    "fp8": "fp8", "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "fp8e4m3": "fp8", "fp8e5m2": "fp8",
    "float8e4m3fn": "fp8", "float8e5m2": "fp8", "float8e4m3fnuz": "fp8", "float8e5m2fnuz": "fp8",
    "int8": "int8", "i8": "int8", "s8": "int8", "uint8": "int8", "u8": "int8",
}

# Field groups of `sources` and the numbers each one covers (tests hold every number to a source).
SOURCE_GROUPS = {
    "compute": ("peak_tflops",),
    "memory": ("bandwidth_gbs", "memory_gb"),
    "l2": ("l2_mb",),
    "units": ("compute_units",),
    "smem": ("smem_per_sm_kb", "smem_per_block_kb"),
    "launch": ("launch_floor_us",),
}


class DeviceError(ValueError):
    """An unknown device or dtype, or a table that breaks its own rules."""


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    url: str
    checked: str = ""


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    vendor: str
    kind: str                       # gpu | tpu | trainium | inferentia
    arch: str
    peak_tflops: dict               # dtype -> dense TFLOP/s (TOP/s for int8); absent = no figure
    bandwidth_gbs: float
    memory_gb: float | None = None
    l2_mb: float | None = None
    compute_units: int | None = None
    compute_unit: str = ""
    smem_per_sm_kb: float | None = None
    smem_per_block_kb: float | None = None
    launch_floor_us: float | None = None
    compute_capability: str | None = None
    aliases: tuple = ()
    notes: str = ""
    sources: dict = field(default_factory=dict)     # group (or dtype) -> Source

    def peak(self, dtype: str) -> float | None:
        """Dense peak TFLOP/s for a dtype (any spelling normalise_dtype knows), None where none exists."""
        return self.peak_tflops.get(normalise_dtype(dtype))

    def source(self, group: str) -> Source:
        """The source of a field group (compute, memory, l2, units, smem, launch) or of one dtype's peak."""
        if group in self.sources:
            return self.sources[group]
        if group in DTYPES:
            return self.sources["compute"]
        raise DeviceError(f"device {self.id}: no source for {group!r}")

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "vendor": self.vendor, "kind": self.kind, "arch": self.arch,
                "compute_capability": self.compute_capability, "peak_tflops_dense": dict(self.peak_tflops),
                "bandwidth_gbs": self.bandwidth_gbs, "memory_gb": self.memory_gb, "l2_mb": self.l2_mb,
                "compute_units": self.compute_units, "compute_unit": self.compute_unit,
                "smem_per_sm_kb": self.smem_per_sm_kb, "smem_per_block_kb": self.smem_per_block_kb,
                "launch_floor_us": self.launch_floor_us, "notes": self.notes,
                "sources": {g: {"title": s.title, "url": s.url} for g, s in self.sources.items()}}


def normalise_dtype(name: str) -> str:
    """'bfloat16', 'torch.float16', 'half', 'e4m3' ... -> one of DTYPES; DeviceError otherwise."""
    key = re.sub(r"[^a-z0-9]", "", str(name).lower().removeprefix("torch.").removeprefix("jnp.")
                 .removeprefix("np."))
    if key in _DTYPE_ALIASES:
        return _DTYPE_ALIASES[key]
    raise DeviceError(f"unknown dtype {name!r}: use one of {', '.join(DTYPES)}")


def _norm(name: str) -> str:
    s = str(name).lower()
    for word in ("nvidia", "geforce", "tesla", "amd", "instinct", "google", "aws"):
        s = re.sub(rf"\b{word}\b", " ", s)
    return re.sub(r"[^a-z0-9]", "", s)


@lru_cache(maxsize=4)
def _load(path: str) -> tuple[Device, ...]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise DeviceError(f"{path}: cannot read the device table: {e}") from None
    sources = {sid: Source(id=sid, title=s["title"], url=s["url"], checked=s.get("checked", ""))
               for sid, s in data.get("sources", {}).items()}
    out = []
    for d in data.get("device", []):
        did = d.get("id", "?")
        bad = set(d.get("peak_tflops", {})) - set(DTYPES)
        if bad:
            raise DeviceError(f"{path}: device {did}: unknown dtype(s) {sorted(bad)} in peak_tflops")
        srcs = {}
        for group, sid in d.get("sources", {}).items():
            if sid not in sources:
                raise DeviceError(f"{path}: device {did}: source {sid!r} is not a [sources.{sid}] table")
            srcs[group] = sources[sid]
        out.append(Device(
            id=did, name=d["name"], vendor=d["vendor"], kind=d["kind"], arch=d["arch"],
            peak_tflops={k: float(v) for k, v in d.get("peak_tflops", {}).items()},
            bandwidth_gbs=float(d["bandwidth_gbs"]), memory_gb=d.get("memory_gb"), l2_mb=d.get("l2_mb"),
            compute_units=d.get("compute_units"), compute_unit=d.get("compute_unit", ""),
            smem_per_sm_kb=d.get("smem_per_sm_kb"), smem_per_block_kb=d.get("smem_per_block_kb"),
            launch_floor_us=d.get("launch_floor_us"), compute_capability=d.get("compute_capability"),
            aliases=tuple(d.get("aliases", ())), notes=d.get("notes", ""), sources=srcs))
    return tuple(out)


def all_devices(path: Path | str = TABLE) -> list[Device]:
    return list(_load(str(path)))


def _index(path: Path | str = TABLE) -> dict[str, Device]:
    idx: dict[str, Device] = {}
    for dev in all_devices(path):
        for n in (dev.id, dev.name, *dev.aliases):
            k = _norm(n)
            if k in idx and idx[k] is not dev:
                raise DeviceError(f"{path}: name {n!r} names both {idx[k].id} and {dev.id}")
            idx[k] = dev
    return idx


def lookup(name: str, path: Path | str = TABLE) -> Device:
    """A device by id, name or alias (case, spaces, punctuation and vendor words ignored)."""
    idx = _index(path)
    dev = idx.get(_norm(name))
    if dev is None:
        near = difflib.get_close_matches(_norm(name), list(idx), n=3, cutoff=0.5)
        hint = f" (closest: {', '.join(sorted({idx[k].id for k in near}))})" if near else ""
        raise DeviceError(f"unknown device {name!r}{hint}; `diagnose roofline --list-devices` lists them")
    return dev


def from_snapshot(snapshot: dict, index: int = 0, path: Path | str = TABLE) -> tuple[Device, list[str]]:
    """The table's entry for GPU `index` of a `diagnose env --json` snapshot, and where they disagree.

    A snapshot names the GPU as the driver does ("NVIDIA H100 80GB HBM3"); the table must know that
    name exactly (no fuzzy matching: an H100 NVL is not an H100 SXM). The notes list facts of the
    snapshot that differ from the table (SM count, L2, shared memory, a MIG slice, clocks below max).
    """
    gpus = snapshot.get("gpus") if isinstance(snapshot, dict) else None
    if not gpus:
        raise DeviceError("the snapshot lists no GPU (its `gpus` is empty): pass --device NAME")
    if not 0 <= index < len(gpus):
        raise DeviceError(f"the snapshot has {len(gpus)} GPU(s); index {index} is out of range")
    gpu = gpus[index]
    name = gpu.get("name") or ""
    dev = lookup(name, path)
    notes = []

    def differs(label, got, want, scale=1.0, tol=0.05):
        if got is None or want is None:
            return
        if abs(got / scale - want) > tol * want:
            notes.append(f"{label}: snapshot {got / scale:g}, table {want:g}")

    differs("SM count", gpu.get("sm_count"), dev.compute_units, tol=0)
    differs("L2 MB", gpu.get("l2_cache_bytes"), dev.l2_mb, scale=1 << 20)
    differs("shared memory per SM KiB", gpu.get("shared_memory_per_sm_bytes"), dev.smem_per_sm_kb, scale=1024, tol=0)
    differs("shared memory per block (opt-in) KiB", gpu.get("shared_memory_per_block_optin_bytes"),
            dev.smem_per_block_kb, scale=1024, tol=0)
    if (gpu.get("mig") or {}).get("enabled"):
        notes.append("MIG is enabled: a MIG slice has a fraction of the device's compute and bandwidth, "
                     "so the table's figures are too high for it")
    clocks = gpu.get("clocks_mhz") or {}
    if clocks.get("sm") and clocks.get("sm_max") and clocks["sm"] < 0.9 * clocks["sm_max"]:
        notes.append(f"SM clock {clocks['sm']} MHz is below its maximum {clocks['sm_max']} MHz when recorded")
    return dev, notes


__all__ = ["DTYPES", "Device", "DeviceError", "Source", "SOURCE_GROUPS", "TABLE", "all_devices", "from_snapshot",
           "lookup", "normalise_dtype"]
