"""The device peak table (diagnose/devices/devices.toml): every number has a source, lookups are exact."""
import json
from pathlib import Path

import pytest

from diagnose.devices import (DTYPES, SOURCE_GROUPS, DeviceError, all_devices, from_snapshot, lookup,
                              normalise_dtype)

FIX = Path(__file__).parent / "fixtures"

# The list: each must be in the table (by a name a reviewer would type).
REQUIRED = ["H100 SXM", "H100 PCIe", "H200", "B200", "A100 40GB", "A100 80GB", "L40S", "L4", "A10", "T4", "V100",
            "RTX 3090", "RTX 4090", "RTX 5090", "MI250X", "MI300X", "TPU v4", "TPU v5e", "TPU v5p", "TPU v6e",
            "Trainium1", "Trainium2", "Inferentia2"]


@pytest.mark.parametrize("name", REQUIRED)
def test_required_devices_are_known(name):
    assert lookup(name).bandwidth_gbs > 0


def test_every_number_has_a_source():
    missing = []
    for dev in all_devices():
        for group, fields in SOURCE_GROUPS.items():
            present = [f for f in fields if getattr(dev, f) not in (None, {}, ())]
            if present and group not in dev.sources:
                missing.append(f"{dev.id}: {present} without sources.{group}")
        for dt in dev.peak_tflops:
            src = dev.source(dt)
            assert src.url.startswith("https://"), (dev.id, dt, src)
    assert not missing, "\n".join(missing)


def test_peaks_are_dense_and_plausible():
    for dev in all_devices():
        assert set(dev.peak_tflops) <= set(DTYPES)
        assert all(v > 0 for v in dev.peak_tflops.values()), dev.id
        # low precision is never slower than fp32 where both exist: a sparse/dense mix-up shows here
        for lo in ("bf16", "fp16", "fp8", "int8"):
            if lo in dev.peak_tflops and "fp32" in dev.peak_tflops:
                assert dev.peak_tflops[lo] >= dev.peak_tflops["fp32"], (dev.id, lo)
        # fp8 is at most twice bf16/fp16 (the L40S datasheet prints 733 vs 362.05: 2.02x)
        if "fp8" in dev.peak_tflops and "bf16" in dev.peak_tflops:
            assert dev.peak_tflops["fp8"] <= 2.05 * max(dev.peak_tflops["bf16"], dev.peak_tflops.get("fp16", 0))


def test_known_figures():
    h100 = lookup("NVIDIA H100 80GB HBM3")        # the driver's name for the SXM part
    assert h100.id == "h100-sxm" and h100.peak("bfloat16") == 989.4 and h100.peak("torch.float8_e4m3fn") == 1978.9
    assert lookup("h200").bandwidth_gbs == 4800 and lookup("h200").peak("bf16") == h100.peak("bf16")
    assert lookup("A100-SXM4-40GB").bandwidth_gbs == 1555 and lookup("A100-SXM4-80GB").bandwidth_gbs == 2039
    assert lookup("T4").peak("bf16") is None and lookup("T4").peak("fp16") == 65
    assert lookup("TPU v5e").peak("fp32") is None


def test_unknown_names_are_errors_not_guesses():
    with pytest.raises(DeviceError, match="closest"):
        lookup("H100 NVL")                 # a different part (3.9 TB/s): must not fall back to the SXM entry
    with pytest.raises(DeviceError):
        normalise_dtype("fp4")


def test_from_snapshot_matches_the_recorded_gpu():
    snap = json.loads((FIX / "snapshots" / "h100-healthy.madeup.json").read_text())
    dev, notes = from_snapshot(snap)
    assert dev.id == "h100-sxm" and notes == []
    snap["gpus"][0]["sm_count"] = 114
    snap["gpus"][0]["mig"] = {"enabled": True}
    _, notes = from_snapshot(snap)
    assert any("SM count" in n for n in notes) and any("MIG" in n for n in notes)
    with pytest.raises(DeviceError, match="no GPU"):
        from_snapshot({"gpus": []})


def test_docs_table_matches_the_data():
    doc = (Path(__file__).parent.parent / "docs" / "roofline.md").read_text()
    for dev in all_devices():
        row = next((ln for ln in doc.splitlines() if ln.startswith(f"| `{dev.id}` |")), None)
        assert row is not None, f"docs/roofline.md has no row for {dev.id}"
        cells = [c.strip() for c in row.strip("|").split("|")]
        for i, dt in enumerate(DTYPES, start=1):
            want = f"{dev.peak_tflops[dt]:g}" if dt in dev.peak_tflops else "–"
            assert cells[i] == want, (dev.id, dt, cells[i], want)
        assert cells[8] == f"{dev.bandwidth_gbs:g}", dev.id
