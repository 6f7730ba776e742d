"""`none` needs evidence of no failure: failure evidence no signature explains makes a log `unknown`.

Each case is a class of evidence (signatures/evidence.toml), read with no signature that knows the
wording (a matcher of the benign signatures only), so what is tested is the generic rule, not a
signature. The negatives are what must stay `none`: the same words at warning level, a clean summary,
a handled fallback.
"""
import pytest

from diagnose.engine import confidence_of, decide, diagnose_file
from signatures.loader import load_all
from signatures.matcher import Matcher

BENIGN_ONLY = Matcher([s for s in load_all() if s.role == "benign"])

FAILURES = {
    "exception glued to CJK text": "训练时报错RuntimeError: expected scalar type Float but found BFloat16\n",
    "exception in backticks": "I get ```RuntimeError: something broke``` when I run it\n",
    "exception after a fullwidth colon": "【BUG】：RuntimeError: NPU out of memory. Tried to allocate 3.47 GiB\n",
    "CUDA error enum": "for_each: failed to synchronize: cudaErrorIllegalAddress: an illegal memory access was encountered\n",
    "cuBLAS status": "CUBLAS_STATUS_EXECUTION_FAILED when calling cublasSgemm\n",
    "CUDA runtime message": "kernel.cu:87 GPUassert: too many resources requested for launch\n",
    "driver Xid": "[ 402.30] NVRM: Xid (PCI:0000:07:00): 79, pid=1, GPU has fallen off the bus.\n",
    "sanitizer finding": "========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 bytes\n",
    "NaN loss at info level": "2023-01-25 00:21:34.569 | INFO | trainer:256 - iter[14/15] | [Loss] nan | lr 1e-4\n",
    "NaN grad norm": "{'loss': 0.21, 'grad_norm': nan, 'learning_rate': 0.00026, 'epoch': 5.38}\n",
    "failing pytest": "collected 3 items\n\ntests/test_k.py .F.\n=========== 1 failed, 2 passed in 0.50s ===========\n",
    "tolerance check": "Tensor-likes are not close!\n\nMismatched elements: 23 / 4096 (0.6%)\n",
    "faulthandler timeout": "step 1 ok\nTimeout (0:00:05)!\nThread 0x1 (most recent call first):\n",
    "watchdog": "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST)\n",
    "toolchain fatal": "nvcc fatal   : Unsupported gpu architecture 'compute_60'\n",
    "failed to, with a reason": "Failed to initialize NVML: Driver/library version mismatch\n",
    "call failed: reason": "allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory\n",
    "CI-timestamped glog E line": "2025-04-24T06:46:09.0392577Z E0424 06:38:03.231041 431206 heuristics.py:616] r0_0 = r0_index\n",
    "C++ backtrace": "Exception raised from checkTimeout at ProcessGroupNCCL.cpp:563 (most recent call first):\n",
    "ONNX Runtime error level": "2022-06-22 14:55:38.75 [E:onnxruntime:Default, provider_bridge_ort.cc:1022 Create] Failed to create\n",
}

NEGATIVES = {
    "a warning quoted in backticks": "`WARNING: failed to allocate 4096.02 MB of pinned memory: out of memory`\n",
    "a clean sanitizer summary": "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n",
    "finite loss and norm": "{'loss': 0.21, 'grad_norm': 1.53, 'learning_rate': 0.00026, 'epoch': 5.38}\n",
    "passing tests": "=========== 12 passed in 3.21s ===========\n0 tests failed out of 10\n",
    "a tolerance check that held": "Mismatched elements: 0 / 1024 (0.0%)\n",
    "the cudaError_t type and cudaSuccess": "cudaError_t err = cudaGetLastError(); if (err != cudaSuccess) return;\n",
    "ptxas info": "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.\n",
    "a retry": "Failed to connect, retrying in 5 s\nconnected\n",
}


def _run(text: str):
    data = text.encode()
    return decide(BENIGN_ONLY.scan_bytes(data), "<t>")


@pytest.mark.parametrize("name", FAILURES)
def test_failure_evidence_is_never_none(name):
    d = _run(FAILURES[name])
    assert d.family != "none", f"{name}: {d.title}"
    # no signature: a low-confidence answer (`unknown`, or a wording guess), never a signature's
    assert d.signature is None or d.signature.startswith("fallback."), d.signature
    assert d.confidence <= max(confidence_of("unknown"), confidence_of("fallback"))
    assert d.root is not None


@pytest.mark.parametrize("name", NEGATIVES)
def test_no_failure_stays_none(name):
    d = _run(NEGATIVES[name])
    assert d.family == "none", f"{name}: {d.family} from {d.root}"


def test_empty_blank_and_binary_logs_say_what_they_are(tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "blank.log").write_bytes(b"\n  \n\n")
    (tmp_path / "bin.log").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00binary")
    titles = {}
    for name in ("empty", "blank", "bin"):
        d = diagnose_file(tmp_path / f"{name}.log")
        assert d.family == "unknown" and d.confidence == 0.0, name
        titles[name] = d.title
    assert "empty" in titles["empty"] and "blank lines (3)" in titles["blank"] and "binary" in titles["bin"]
