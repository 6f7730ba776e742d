"""Evidence that names a family only beside one kind of failure (`context_when`), and the late
wordings of g28/g29: a warning that no GPU backend can be used, a device array allocator failing."""
from pathlib import Path

import pytest

from diagnose.engine import decide
from signatures.loader import SignatureError, _build
from signatures.matcher import default_matcher

CUPY = b"""CUDADriverError                           Traceback (most recent call last)
<ipython-input-38-a21f3e428b68> in <module>()
----> 1 add_kernel((5,), (5,), (x1, x2, y, 25), shared_mem=98304)

/home/u/cupy/cuda/function.pyx in cupy.cuda.function._launch()

/home/u/cupy/cuda/driver.pyx in cupy.cuda.driver.launchKernel()

/home/u/cupy/cuda/driver.pyx in cupy.cuda.driver.check_status()

CUDADriverError: %s
"""


def test_invalid_value_beside_a_launch_frame_is_launch_config():
    d = decide(default_matcher().scan_bytes(CUPY % b"CUDA_ERROR_INVALID_VALUE: invalid argument"), "<t>")
    assert d.family == "launch-config" and d.signature == "launch-config.invalid-value-at-launch"
    assert d.root.text.startswith("CUDADriverError: CUDA_ERROR_INVALID_VALUE")
    # the runtime API's name for the same code, one frame away
    log = b"  File \"k.py\", line 9, in run\n    cudaFuncSetAttribute(k, attr, smem)\nRuntimeError: cudaErrorInvalidValue\n"
    assert decide(default_matcher().scan_bytes(log), "<t>").family == "launch-config"


def test_a_launch_frame_beside_another_failure_does_not_name_it():
    # an unknown error surfacing at a launch is an earlier kernel's asynchronous fault, not the launch
    d = decide(default_matcher().scan_bytes(CUPY % b"CUDA_ERROR_UNKNOWN: unknown error"), "<t>")
    assert d.signature != "launch-config.invalid-value-at-launch"
    # the same code on a copy, far from any launch, stays unexplained
    log = b"Traceback (most recent call last):\n  File \"m.py\", line 3, in copy\nCUDADriverError: CUDA_ERROR_INVALID_VALUE: invalid argument\n"
    assert decide(default_matcher().scan_bytes(log), "<t>").signature != "launch-config.invalid-value-at-launch"
    # a launch frame alone (no failure) decides nothing
    assert decide(default_matcher().scan_bytes(b"/u/cupy/cuda/driver.pyx in cupy.cuda.driver.launchKernel()\n"),
                  "<t>").family == "none"


def _raw(**extra):
    raw = {"id": "launch-config.t", "origin": "runtime-assumption", "frameworks": ["cuda"], "role": "root",
           "priority": 50, "title": "t", "patterns": ["cuLaunchKernel"], "explanation": "e", "fix": "f",
           "next_step": "n", "no_match": ["x"], "match": [{"line": "cuLaunchKernel"}], "family": "launch-config"}
    raw.update(extra)
    return raw


def test_context_when_is_checked_when_loaded():
    ok = _build(_raw(tier="context", context_when={"pattern": "INVALID", "probe": "E: INVALID"}), "launch-config", Path("t.toml"))
    assert ok.context_when == "INVALID" and ok.context_probe == "E: INVALID"
    with pytest.raises(SignatureError, match="does not match its pattern"):
        _build(_raw(tier="context", context_when={"pattern": "INVALID", "probe": "E: other"}), "launch-config", Path("t.toml"))
    with pytest.raises(SignatureError, match="context"):       # not tier = context
        _build(_raw(context_when={"pattern": "INVALID", "probe": "E: INVALID"}), "launch-config", Path("t.toml"))
    with pytest.raises(SignatureError, match="context"):       # not a table
        _build(_raw(tier="context", context_when="INVALID"), "launch-config", Path("t.toml"))


@pytest.mark.parametrize("line", [
    b"2022-11-30 12:50:08,211 - jax._src.lib.xla_bridge - WARNING - No GPU/TPU found, falling back to CPU.",
    b"UserWarning: CUDA not available, falling back to CPU",
    b"[W] no CUDA devices found, GPU will not be used",
])
def test_a_warning_that_no_gpu_backend_works_is_missing_library(line):
    d = decide(default_matcher().scan_bytes(b"loading model\n" + line + b"\nstep 1 loss 2.3\n"), "<t>")
    assert d.family == "missing-library" and d.signature == "missing-library.no-gpu-backend-warning"


def test_an_operator_falling_back_keeps_the_gpu_path():
    line = (b"UserWarning: The operator 'aten::_linalg_solve_ex.result' is not currently supported on the MPS "
            b"backend and will fall back to run on the CPU. This may have performance implications.\n")
    assert decide(default_matcher().scan_bytes(line + b"step 1 loss 2.3\n"), "<t>").family == "none"


def test_a_device_array_allocator_failing_is_oom():
    m = default_matcher()
    d = decide(m.scan_bytes(b"RuntimeError: CudaNdarray_ZEROS: allocation failed.\n"), "<t>")
    assert d.family == "oom" and d.facts.get("allocator") == "CudaNdarray_ZEROS"
    # host memory, in numpy's words, is not this signature
    d = decide(m.scan_bytes(b"numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.00 GiB for an array\n"), "<t>")
    assert d.signature != "oom.device-array-allocation-failed"
