"""Origin from the evidence (diagnose/advice/origin.toml), end to end on small logs written here.

The same failure gets a different origin when the evidence says whose fault it is: a compile error
is kernel-logic when the source is wrong, environment when the toolchain crashed, is missing or
lacks what the source uses, resource-limit when ptxas runs out of a hardware budget; a view error
is kernel-logic in the program's own code and runtime-assumption inside a library (the caller's
input). Each case names the rule that must decide it (its conclusion is in `reasoning`), or None
where the signature's own origin stands; the labelled rounds hold the mechanisms on real logs
(tests/test_labelled_sets.py, known-misses.tsv `origin` lines).
"""
import pytest

from diagnose import advice
from diagnose.advice import AdviceError
from diagnose.advice.origin import origin_rules
from diagnose.engine import diagnose_text

RULES = {r.id: r for r in advice.default_rules()[0]}
_ASSERT = ('Traceback (most recent call last):\n  File "check.py", line 9, in <module>\n'
           "    torch.testing.assert_close(out, ref)\nAssertionError: ")

CASES = [
    # compile errors: the source, the toolchain, a hardware budget
    ("source-error", 'kernel.cu(12): error: identifier "tile_sum" is undefined\n'
     '1 error detected in the compilation of "kernel.cu".\n', "kernel-logic", None),
    ("toolkit-intrinsic", 'kernel.cu(12): error: identifier "__hfma2" is undefined\n'
     '1 error detected in the compilation of "kernel.cu".\n', "environment", "origin.undefined-toolkit-identifier"),
    ("installed-header", "/usr/include/c++/6/tuple:502:1: error: body of constexpr function not a return-statement\n"
     "error: command '/usr/bin/nvcc' failed with exit status 1\n", "environment", None),
    ("compiler-crash", 'Traceback (most recent call last):\n  File "k.py", line 3, in <module>\n    kernel[grid](x)\n'
     "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32\n", "environment", None),
    ("toolchain-missing", "/bin/sh: 1: nvcc: not found\nerror: command 'nvcc' failed with exit status 127\n",
     "environment", None),
    ("register-budget", "RuntimeError: Internal Triton PTX codegen error:\nptxas fatal   : (C7600) Register allocation "
     "failed with register count of '255'. Compile the program with a higher register target\n",
     "resource-limit", "origin.ptxas-over-a-hardware-limit"),
    ("generated-kernel", 'CUDA NVRTC compile error: __tmp_kernel_pointwise_f1_c1_r0_g6.cu(94): error: identifier "i20" '
     "is undefined\n", "environment", "origin.generated-kernel"),
    # the caller's input vs the program's own code
    ("view-in-own-code", 'Traceback (most recent call last):\n  File "attn.py", line 7, in <module>\n'
     "    merged = x.view(2, 8, 1024)\nRuntimeError: view size is not compatible with input tensor's size and "
     "stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.\n",
     "kernel-logic", "origin.view-of-a-non-contiguous-tensor-in-own-code"),
    ("view-in-a-library", 'Traceback (most recent call last):\n  File "/env/lib/python3.10/site-packages/flashlib/'
     'ops.py", line 7, in forward\n    merged = x.view(2, 8, 1024)\nRuntimeError: view size is not compatible '
     "with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). "
     "Use .reshape(...) instead.\n", "runtime-assumption", None),
    # collectives: the system vs the launch
    ("nccl-cuda-failure", "RuntimeError: NCCL Error 1: unhandled cuda error\n", "environment", "origin.nccl-cuda-failure"),
    ("nccl-duplicate-gpu", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:1691, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
     "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
     "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000\n", "runtime-assumption", None),
    # time limits: the scheduler's allotment vs a program killed with nothing else in sight
    ("scheduler-time-limit", "step 100 loss 2.1\nslurmstepd: error: *** JOB 3884617 ON node023 CANCELLED AT "
     "2018-08-19T16:30:21 DUE TO TIME LIMIT ***\n", "runtime-assumption", "origin.batch-scheduler-time-limit"),
    # numbers: far beyond the reference's own error vs within a few times of it
    ("error-100x-the-reference", "E       AssertionError: assert 3.92578125 <= (2 * 0.001953125)\n", "kernel-logic",
     "origin.error-far-beyond-the-references-own"),
    ("error-near-the-reference", "E       AssertionError: assert 0.00244140625 <= ((2 * 0.0009765625) + 1e-05)\n",
     "numerics", None),
    # float32 tolerances: every element off by 10-100 % of itself vs rounding's pictures (torch 2.13's and
    # numpy 2's own messages, produced by bench/origin_numerics.py's cases: a softmax mask lane leaking,
    # a TF32-rounded matmul)
    ("float32-every-element-off", _ASSERT + "Tensor-likes are not close!\n\nMismatched elements: 800 / 800 (100.0%)\n"
     "Greatest absolute difference: 0.023482829332351685 at index (5, 38) (up to 1e-05 allowed)\n"
     "Greatest relative difference: 0.1727038323879242 at index (1, 13) (up to 1.3e-06 allowed)\n",
     "kernel-logic", "origin.float32-comparison-off-beyond-reduced-precision"),
    ("numpy-every-element-off", 'Traceback (most recent call last):\n  File "check.py", line 9, in <module>\n'
     "    np.testing.assert_allclose(out, ref)\nAssertionError: \nNot equal to tolerance rtol=1e-07, atol=0\n\n"
     "Mismatched elements: 800 / 800 (100%)\nFirst 5 mismatches are at indices:\n"
     " [0, 0]: 0.001410931465215981 (ACTUAL), 0.001606598380021751 (DESIRED)\n"
     "Max absolute difference among violations: 0.02348283\nMax relative difference among violations: 0.17270383\n",
     "kernel-logic", "origin.float32-comparison-off-beyond-reduced-precision"),
    ("numpy1-every-element-off", 'Traceback (most recent call last):\n  File "check.py", line 9, in <module>\n'
     "    np.testing.assert_allclose(out, ref)\nAssertionError: \nNot equal to tolerance rtol=1e-07, atol=0\n\n"
     "Mismatched elements: 800 / 800 (100%)\nMax absolute difference: 0.02348283\nMax relative difference: 0.17270383\n"
     " x: array([[0.001411, 0.001374, 0.003386, ..., 0.008478, 0.003044, 0.00146 ],\n",
     "kernel-logic", "origin.float32-comparison-off-beyond-reduced-precision"),
    ("tf32-matmul-some-elements-pass", _ASSERT + "Tensor-likes are not close!\n\nMismatched elements: 4067 / 4096 "
     "(99.3%)\nGreatest absolute difference: 0.0115509033203125 at index (0, 46) (up to 1e-05 allowed)\n"
     "Greatest relative difference: 0.359624445438385 at index (30, 18) (up to 1.3e-06 allowed)\n", "numerics", None),
    ("bf16-named-every-element-off", 'Traceback (most recent call last):\n  File "check.py", line 9, in <module>\n'
     "    torch.testing.assert_close(out.float(), ref)  # out = kernel(x.bfloat16())\n"
     "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 800 / 800 (100.0%)\n"
     "Greatest absolute difference: 0.023482829332351685 at index (5, 38) (up to 1e-05 allowed)\n"
     "Greatest relative difference: 0.1727038323879242 at index (1, 13) (up to 1.3e-06 allowed)\n", "numerics", None),
    ("exact-compare-nothing-off", "AssertionError: Tensor-likes are not equal!\n\nMismatched elements: 0 / 8000 (0.0%)\n"
     "Greatest absolute difference: 0 at index (0,)\nGreatest relative difference: 0.0 at index (0,)\n", "numerics", None),
    ("exact-compare-values-off", "AssertionError: Tensor-likes are not equal!\n\nMismatched elements: 16 / 16 (100.0%)\n"
     "Greatest absolute difference: 274 at index (11,)\nGreatest relative difference: 0.94 at index (11,)\n",
     "kernel-logic", "origin.mismatch-beyond-rounding"),
    # a gloo peer that never answers: ranks started on this host by the program vs a bare timeout
    ("gloo-peer-on-one-host", "torch.multiprocessing.spawn.ProcessRaisedException:\n\n-- Process 0 terminated with the "
     'following error:\nTraceback (most recent call last):\n  File "<site-packages>/torch/multiprocessing/spawn.py", '
     'line 87, in _wrap\n    fn(i, *args)\n  File "train.py", line 16, in worker\n    dist.all_reduce(grad)\n'
     "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out "
     "waiting 5000ms for recv operation to complete\n", "kernel-logic", "origin.gloo-peer-wait-on-one-host"),
    # a view of a whole multiple of its input (a dimension of another size) vs a remainder (the code's own sum)
    ("view-of-a-quarter-of-its-shape", 'Traceback (most recent call last):\n  File "patch.py", line 42, in forward\n'
     "    q = q.view(bsz, q_len, self.num_heads, self.head_dim)\nRuntimeError: shape '[16, 2048, 32, 128]' is invalid "
     "for input of size 33554432\n", "runtime-assumption", "origin.view-of-a-whole-multiple-of-its-input"),
    ("view-off-by-a-remainder", 'Traceback (most recent call last):\n  File "reshape_size.py", line 5, in <module>\n'
     "    y = x.view(2, 3, 16, 16)\nRuntimeError: shape '[2, 3, 16, 16]' is invalid for input of size 1176\n",
     "kernel-logic", None),
    # the operating system's GPU driver: a hang it reset (the stack) vs a reset that failed (the device)
    ("gpu-driver-reset-a-hung-job", "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring comp_1.0.0 timeout, signaled "
     "seq=812, emitted seq=813\namdgpu 0000:03:00.0: amdgpu: GPU reset begin!\n", "environment",
     "origin.gpu-driver-hang-detection"),
    ("gpu-reset-failed", "[drm] stuck on render ring\n[drm] GPU HANG: ecode 9:0:0x85dffffb, reason: Ring hung, action: "
     "reset\n[drm:i915_reset] *ERROR* render ring: reset request timeout\ndrm/i915: Resetting chip after gpu hang\n"
     "[drm:i915_reset] *ERROR* Failed to reset chip: -5\n", "hardware",
     "origin.gpu-reset-failed-after-a-hang"),
    ("gloo-timeout-alone", "[/opt/conda/conda-bld/pytorch/work/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] "
     "Timed out waiting 30000ms for recv operation to complete\n", "runtime-assumption", None),
    # TensorRT with no tactic for a node: its coverage (no memory word) vs tactics skipped for memory
    ("tensorrt-no-tactic-coverage", "[07/12/2023-11:55:50] [TRT] [E] 10: [optimizer.cpp::computeCosts::3869] Error "
     "Code 10: Internal Error (Could not find any implementation for node 002_convolutional.)\n", "environment",
     "origin.tensorrt-no-tactic-without-a-memory-shortage"),
    ("tensorrt-no-tactic-memory", "[TRT] [W] Skipping tactic 0 due to insuficient memory on requested size of "
     "1170309120 detected for tactic 0.\n[TRT] [E] 10: [optimizer.cpp::computeCosts::2011] Error Code 10: Internal "
     "Error (Could not find any implementation for node MatMul_2899.)\n", "resource-limit", None),
    # torch.compile: code inductor generated, and inductor's own Python failing, vs a kernel the user wrote
    ("inductor-generated-triton-source", "triton.compiler.errors.CompilationError: at 16:15:\n"
     "    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n    rbase = tl.arange(0, RBLOCK)[None, :]\n"
     "        tmp6 = tl.load(in_ptr1 + (r1 + (3072*x0)), rmask, eviction_policy='evict_first', other=0.0)\n"
     "               ^\n", "environment", "origin.generated-kernel"),
    ("inductor-python-error", '  File "/env/site-packages/torch/_inductor/scheduler.py", line 859, in '
     "get_estimated_runtime\n    return self.get_read_write_buffers_sizes() / gpu_memory_bandwidth\n"
     "torch._inductor.exc.InductorError: ZeroDivisionError: float division by zero\n", "environment",
     "origin.inductor-wrapping-a-python-error"),
    # device asserts: inductor's generated bounds check (a computed tmpN) vs an eager op's index input
    ("inductor-bounds-assert", "unknown:0: unknown: block: [0,0,0], thread: [213,0,0] Assertion `index out of "
     "bounds: 0 <= tmp4 < 32000` failed.\n", "kernel-logic", "origin.inductor-generated-bounds-assert"),
    ("eager-index-assert", "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], "
     "thread: [64,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\n",
     "runtime-assumption", None),
    # the c10d store: formed, a peer never wrote its key, vs clients that never connected
    ("store-barrier-half-joined", "RuntimeError: Timed out initializing process group in store based barrier on "
     "rank: 7, for key: store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)\n",
     "runtime-assumption", "origin.store-up-but-a-peer-never-reached-the-key"),
    ("store-clients-never-joined", "torch.distributed.DistStoreError: Timed out after 6 seconds waiting for "
     "clients. 1/2 clients joined.\n", "environment", None),
    # a Triton API the installed Triton lacks; an extension build that shows only its exit status
    ("triton-api-missing", '  File "/env/site-packages/triton/compiler/code_generator.py", line 1231, in ast_to_ttir\n'
     "    raise CompilationError(fn.src, node, repr(e)) from e\ntriton.compiler.errors.CompilationError: at 4:31:"
     "def _swiglu_forward_kernel(\n    program_id = tl.program_id(0).cast(tl.int64)\n                               ^\n"
     "AttributeError(\"'tensor' object has no attribute 'cast'\")\n", "environment",
     "origin.triton-api-missing-from-the-installed-triton"),
    ("ninja-exit-status-only", "Building extension module fused_adam...\nTraceback (most recent call last):\n"
     '  File "/env/site-packages/torch/utils/cpp_extension.py", line 2105, in _run_ninja_build\n'
     "    subprocess.run(\nsubprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n",
     "environment", None),
    # a launch over the compiled kernel's own thread limit (its registers), a ptxas entry-function budget
    ("threads-over-kernel-limit", "ERROR: Number of threads per block exceeds kernel limit (640 > 512).\nStacktrace:\n"
     "  [1] error(s::String)\n", "resource-limit", "origin.threads-over-the-compiled-kernels-limit"),
    # TensorRT's calibrator faulting on the buffers get_batch returned vs a fault in one of its kernels
    ("tensorrt-calibrator-access", "[11/08/2022-07:27:56] [I] [TRT] Starting Calibration.\n[11/08/2022-07:27:57] [E] "
     "Error[1]: [calibrator.cpp::add::758] Error Code 1: Cuda Runtime (an illegal memory access was encountered)\n",
     "runtime-assumption", "origin.illegal-access-in-tensorrt-calibration"),
    # autotuners: Ansor measuring nothing but errors; a tuner taking min() over the timings it pruned away
    ("ansor-every-measure-errored", "------------------------------  [ Measure ]\nGet 16 programs to measure:\n"
     "................*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E*E\nTime elapsed for measurement: 14.04 s\n"
     "No valid state found in this search round. Check if it has traversed all of the search space.\n",
     "environment", "origin.ansor-every-measured-program-errored"),
    ("xla-no-valid-config-coverage", "Autotuning failed for HLO: %input_reduce_fusion = pred[] fusion(...), "
     "kind=kInput ... with error: NOT_FOUND: No valid config found!\n", "environment",
     "origin.xla-no-valid-config-without-a-resource-word"),
    # code a framework wrote and compiled itself (Warp's module), a compiler failing after typing (Numba)
    ("warp-generated-module", "Warp NVRTC compilation error 6: NVRTC_ERROR_COMPILATION (/builds/omniverse/warp/warp/"
     "native/warp.cu:3622)\nwp_map_func_d8cae767_c21cf51.cu(27): error: invalid line number\n", "environment",
     "origin.generated-kernel"),
    ("numba-lowering-after-typing", "TypeError: Failed in cuda mode pipeline (step: native lowering) Type of #1 arg "
     "mismatch: i8* != i8 addrspace(4)*\n", "environment", "origin.numba-failed-after-typing"),
    # ptxas: a standard function with no device definition (the source) vs the program's own (the build)
    ("ptxas-unresolved-pow", "ptxas fatal   : Unresolved extern function '_Z3powdi'\nninja: build stopped: "
     "subcommand failed.\n", "kernel-logic", "origin.unresolved-standard-function-in-device-code"),
    ("ptxas-unresolved-own-function", "ptxas fatal   : Unresolved extern function '_Z17getGlobalThreadIDv'\n"
     "make: *** [Makefile:40: main.o] Error 255\n", "environment", None),
]


@pytest.mark.parametrize("name,log,origin,rule", CASES, ids=[c[0] for c in CASES])
def test_origin_from_the_evidence(name, log, origin, rule):
    d = diagnose_text(log.encode())
    assert d.origin == origin, (d.family, d.signature, d.origin, d.reasoning)
    if rule:
        lead = RULES[rule].conclusion.split("{")[0].split(":")[0][:40]     # the conclusion's fixed words
        assert len(lead) >= 15 and lead in " ".join(d.reasoning), (rule, d.reasoning)


def test_the_same_compile_error_changes_origin_only_with_the_evidence():
    """One nvcc diagnostic, three readings: the source's name, a toolkit intrinsic, a budget."""
    base = 'kernel.cu(12): error: identifier "{}" is undefined\n'
    assert {diagnose_text(base.format(n).encode()).family for n in ("tile_sum", "__hmax2")} == {"compile-error"}
    assert diagnose_text(base.format("tile_sum").encode()).origin == "kernel-logic"
    assert diagnose_text(base.format("__hmax2").encode()).origin == "environment"


def test_origin_rules_are_loaded_after_the_reasoning_rules():
    ids = [r.id for r in advice.default_rules()[0]]
    origin_ids = [r.id for r in origin_rules()]
    assert origin_ids and ids[-len(origin_ids):] == origin_ids
    assert all(r.origin for r in origin_rules())


def test_an_origin_rule_without_an_origin_is_refused(tmp_path):
    p = tmp_path / "origin.toml"
    p.write_text('[[rule]]\nid = "origin.x"\nfamilies = ["oom"]\ndocs = "d"\nwhen = "true_value"\n'
                 'conclusion = "c"\n[[rule.example]]\nfacts = {}\nfires = true\n'
                 '[[rule.example]]\nfacts = {}\nfires = false\n')
    with pytest.raises(AdviceError, match="origin.toml.*origin.x"):
        origin_rules(p)


def test_a_later_origin_reading_that_is_overruled_says_nothing():
    """ptxas running out of registers also matches the toolchain-crash rule ("ptxas fatal"); the first
    rule decides and the contradicting conclusion is not shown."""
    d = diagnose_text(CASES[5][1].encode())
    assert d.origin == "resource-limit"
    crash = RULES["origin.compile-toolchain-crash"].conclusion
    assert crash not in d.reasoning and RULES["origin.ptxas-over-a-hardware-limit"].conclusion in d.reasoning
