"""Roofline readings against figures computed by hand, one per device kind (NVIDIA, AMD, TPU, Trainium,
Inferentia), and the command line's verdicts and exit codes."""
import json

import pytest

from cli.main import main
from diagnose.devices import lookup
from diagnose.roofline import RooflineError, judge, op_cost


def test_h100_matmul_floor_by_hand():
    c = op_cost("matmul", "4096,4096,4096", "bf16")
    assert c.flops == 2 * 4096 ** 3 == 137_438_953_472
    assert c.bytes == 3 * 4096 * 4096 * 2 == 100_663_296
    h100 = lookup("h100")
    # 137.44 GFLOP / 989.4 TFLOP/s = 138.91 us
    r = judge(c.flops, c.bytes, 0.2e-3, h100, "bf16")
    assert r.floor_s == pytest.approx(138.911e-6, rel=1e-4)
    assert r.bound == "compute" and r.verdict == "plausible"
    assert r.achieved_tflops == pytest.approx(687.19, rel=1e-4)        # 137.44e9 / 0.2e-3 / 1e12
    assert r.share_compute == pytest.approx(0.6946, rel=1e-3)
    assert r.achieved_gbs == pytest.approx(503.3, rel=1e-3)
    assert judge(c.flops, c.bytes, 0.15e-3, h100, "bf16").verdict == "suspicious"     # 92.6%
    imp = judge(c.flops, c.bytes, 0.1e-3, h100, "bf16")
    assert imp.verdict == "impossible" and imp.findings[0].id == "roofline.impossible"
    assert imp.findings[0].severity == "error" and "faster than the hardware allows" in imp.reason


def test_mi300x_fp16():
    c = op_cost("matmul", "8192x8192x8192", "fp16")
    r = judge(c.flops, c.bytes, 1.0e-3, lookup("MI300X"), "float16")
    # 1.0995 TFLOP / 1307.4 TFLOP/s = 0.8410 ms -> 84% of the ceiling
    assert r.floor_s == pytest.approx(1.0995116e12 / 1307.4e12, rel=1e-6)
    assert r.verdict == "plausible" and r.share_compute == pytest.approx(0.841, rel=1e-3)


def test_tpu_v5e_bmm():
    c = op_cost("bmm", "8,1024,1024,1024", "bf16")
    assert c.flops == 2 * 8 * 1024 ** 3
    r = judge(c.flops, c.bytes, 50e-6, lookup("TPU v5e"), "bf16")
    assert r.floor_s == pytest.approx(17_179_869_184 / 197e12, rel=1e-6)      # 87.2 us
    assert r.verdict == "impossible"
    # no fp32 figure for a TPU: the compute floor is left out and said so
    r32 = judge(c.flops, c.bytes, 1e-3, lookup("TPU v5e"), "fp32")
    assert "compute" not in r32.floors_s and any("no published fp32 peak" in n for n in r32.notes)


def test_trainium2_fp8():
    c = op_cost("matmul", "4096,4096,4096", "fp8")
    r = judge(c.flops, c.bytes, 0.2e-3, lookup("trn2"), "fp8")
    assert r.floor_s == pytest.approx(137_438_953_472 / 1299e12, rel=1e-6)    # 105.8 us
    assert r.verdict == "plausible"


def test_inferentia2_memory_bound():
    c = op_cost("elementwise", "67108864", "fp16", inputs=2, outputs=1)
    assert c.bytes == 67_108_864 * 3 * 2
    r = judge(c.flops, c.bytes, 0.3e-3, lookup("Inferentia2"), "fp16")
    assert r.bound == "memory" and r.floor_s == pytest.approx(402_653_184 / 880e9, rel=1e-6)   # 457.6 us
    assert r.verdict == "impossible"          # no L2 figure: cannot be a cache effect


def test_small_working_set_is_cache_not_impossible():
    c = op_cost("elementwise", "1048576", "fp32", inputs=2)
    r = judge(c.flops, c.bytes, 2e-6, lookup("L4"), "fp32")        # 12.6 MB < 48 MB L2, 6.3 TB/s claimed
    assert r.verdict == "suspicious" and r.findings[0].id == "roofline.cache-resident"


def test_launch_floor_and_attention():
    c = op_cost("attention", "1,1,16,16", "bf16")
    r = judge(c.flops, c.bytes, 0.5e-6, lookup("a100"), "bf16")
    assert r.bound == "launch" and r.verdict == "impossible"
    full = op_cost("attention", "2,8,1024,64", "bf16")
    causal = op_cost("attention", "2,8,1024,64,causal", "bf16")
    assert full.flops == 4 * 2 * 8 * 1024 * 1024 * 64 and causal.flops == full.flops / 2


def test_conv2d_cost():
    c = op_cost("conv2d", "32,64,56,56,64,3,3,1,1", "fp16")      # P = Q = 56
    assert c.flops == 2 * 32 * 64 * 56 * 56 * 64 * 3 * 3


@pytest.mark.parametrize("bad", [("matmul", "4096,4096"), ("nope", "1,2,3"), ("matmul", "4096,-1,2")])
def test_bad_shapes(bad):
    with pytest.raises(RooflineError):
        op_cost(bad[0], bad[1], "bf16")


def test_cli_exit_codes_and_json(capsys, tmp_path):
    assert main(["roofline", "--op", "matmul", "--shape", "4096,4096,4096", "--dtype", "bf16", "--time-ms", "0.1",
                 "--device", "h100"]) == 1
    out = capsys.readouterr().out
    assert "impossible" in out and all(len(l) <= 80 for l in out.splitlines())
    assert main(["roofline", "--flops", "1e12", "--bytes", "1e9", "--time-ms", "2", "--device", "h200",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "plausible" and doc["achieved_tflops"] == pytest.approx(500.0)
    assert main(["roofline", "--op", "matmul", "--shape", "1,2,3", "--time-ms", "1", "--device", "H100 NVL"]) == 2
    assert "unknown device" in capsys.readouterr().err
    snap = tmp_path / "env.json"
    snap.write_text(json.dumps({"gpus": [{"name": "NVIDIA H100 80GB HBM3", "sm_count": 132}]}))
    assert main(["roofline", "--env", str(snap), "--op", "matmul", "--shape", "8192,8192,8192", "--time-ms", "1.5",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["device"] == "h100-sxm"
    assert main(["roofline", "--env", str(tmp_path / "missing.json"), "--flops", "1", "--time-ms", "1"]) == 2
    assert "missing.json" in capsys.readouterr().err
