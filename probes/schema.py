"""The environment snapshot's shape (`diagnose env --json`, schema diagnose.env/1), documented in docs/env-schema.md."""
from __future__ import annotations

SCHEMA = "diagnose.env/1"

# Top-level keys every snapshot has; each section is a dict (gpus and toolkits are lists).
TOP_KEYS = {
    "schema": str, "created": str, "gpus": list, "driver": dict, "cuda": dict, "frameworks": dict,
    "packages": dict, "toolkits": list, "host": dict, "env": dict, "probes": dict, "findings": list,
}
# Added later (additive, schema still diagnose.env/1): absent in older snapshots, read as empty.
OPTIONAL_KEYS = {"libraries": dict, "tool": dict}

# Per-GPU keys (absent when the probe could not learn them).
GPU_KEYS = (
    "index", "name", "uuid", "pci_bus_id", "compute_capability", "sm_count", "memory_total_bytes",
    "memory_free_bytes", "memory_used_bytes", "shared_memory_per_block_bytes",
    "shared_memory_per_block_optin_bytes", "shared_memory_per_sm_bytes", "registers_per_block",
    "max_threads_per_block", "l2_cache_bytes", "ecc", "mig", "persistence_mode", "compute_mode", "clocks_mhz",
    "throttle_reasons", "pcie", "retired_pages", "remapped_rows", "temperature_c", "power_w", "fabric", "nvlink",
)


def empty_snapshot() -> dict:
    return {"schema": SCHEMA, "created": "", "gpus": [], "driver": {}, "cuda": {}, "frameworks": {},
            "packages": {}, "toolkits": [], "host": {}, "env": {}, "probes": {}, "findings": [], "libraries": {}}


class SnapshotError(ValueError):
    """A snapshot file that cannot be judged; the message names the file and what to do."""


def validate(snap, source: str = "snapshot") -> dict:
    """The snapshot with missing sections filled in, or SnapshotError naming what is wrong."""
    if not isinstance(snap, dict):
        raise SnapshotError(f"{source}: a snapshot is a JSON object, got {type(snap).__name__}; "
                            "write one with `diagnose env --json`")
    schema = snap.get("schema")
    if schema is None or not str(schema).startswith("diagnose.env/"):
        raise SnapshotError(f"{source}: no \"schema\": \"{SCHEMA}\" key: not a `diagnose env --json` snapshot")
    tail = str(schema).split("/", 1)[1]
    if not tail.isdigit():
        raise SnapshotError(f"{source}: schema {schema!r} is not diagnose.env/<number>: record it again with "
                            "`diagnose env --json`")
    # Additive changes keep diagnose.env/1; a newer number is read as far as its keys are known
    # (the env.probe.schema-newer finding says so).
    out = empty_snapshot()
    out.update(snap)
    for key, kind in {**TOP_KEYS, **OPTIONAL_KEYS}.items():
        if not isinstance(out.get(key), kind):
            if out.get(key) is None:
                out[key] = kind()
            else:
                raise SnapshotError(f"{source}: key {key!r} should be a {kind.__name__}, "
                                    f"got {type(out[key]).__name__}")
    out["gpus"] = [g for g in out["gpus"] if isinstance(g, dict)]
    return out
