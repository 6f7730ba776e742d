"""Traceback frames as support evidence: a traceback cut before its exception line still says where it failed."""
import pytest

from diagnose.engine import confidence_of, diagnose_text

HEAD = 'Traceback (most recent call last):\n  File "/work/train.py", line 88, in <module>\n    main()\n'


@pytest.mark.parametrize("frame,family", [
    ('  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2050, in all_reduce', "collective-comm"),
    ('[rank2]:   File "/home/pytorch/torch/distributed/distributed_c10d.py", line 2144, in broadcast', "collective-comm"),
    ('  File "/usr/local/lib/python3.12/site-packages/triton/backends/nvidia/compiler.py", line 401, in make_cubin', "compile-error"),
    ('File d:\\Miniconda3\\envs\\usad\\lib\\site-packages\\numba\\cuda\\cudadrv\\nvvm.py:126, in NVVM.__new__(cls)', "compile-error"),
    ('  File "/usr/local/lib/python3.10/site-packages/jax/_src/pallas/mosaic/lowering.py", line 812, in lower_jaxpr_to_module', "compile-error"),
    ('  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/cache_engine.py", line 89, in _allocate_kv_cache', "oom"),
    ('  File "/opt/conda/lib/python3.10/site-packages/triton/runtime/autotuner.py", line 114, in run', "autotune-failure"),
])
def test_a_traceback_cut_before_its_exception_gets_the_family_of_its_deepest_frame(frame, family):
    d = diagnose_text(HEAD + frame + "\n    return fn(*args)\n")
    assert d.family == family, (d.signature, d.title)
    assert d.confidence < confidence_of("root")     # where it failed, not what: never as sure as a message


def test_the_deepest_frame_wins():
    log = (HEAD + '  File "/x/torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n'
           '  File "/x/triton/compiler/compiler.py", line 297, in compile\n')
    assert diagnose_text(log).family == "compile-error"


def test_a_frame_never_outranks_a_named_failure_and_stays_out_of_the_chain():
    log = (HEAD + '  File "/x/torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n'
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity)\n")
    d = diagnose_text(log)
    assert d.family == "oom" and d.confidence > confidence_of("support")
    assert [c.line for c in d.chain] == [5], d.chain


def test_frames_of_harmless_functions_are_not_evidence():
    d = diagnose_text('  File "/x/torch/distributed/distributed_c10d.py", line 1210, in get_rank\nstep 10 done\n')
    assert "frame" not in (d.signature or "")


def test_a_wrapper_on_a_frame_line_moves_the_root_to_the_exception_ending_its_traceback():
    """A wrapper signature that names a compiler's lowering frame (Pallas' triton/lowering.py) says where
    the failure passed; the exception below it is the failure (the root line), unless that exception's
    text is only the header of a C++ stack (TVM's "ValueError: Traceback (most recent call last):")."""
    from diagnose.engine import diagnose_text

    frame = '  File "/site-packages/jax/_src/pallas/triton/lowering.py", line 336, in lower_jaxpr_to_triton_ir\n'
    d = diagnose_text(frame + "    raise TritonLoweringException(\n"
                      "jax._src.pallas.triton.lowering.TritonLoweringException: Exception while lowering eqn:\n")
    assert d.family == "compile-error" and d.root.line == 3
