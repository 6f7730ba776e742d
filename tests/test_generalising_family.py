"""The mechanisms that give a failure its family on wordings no round has shown (docs/trust.md,
"Why a family was wrong"). Each input here is written for the test, in another framework's or
version's words than the labelled rounds that motivated the mechanism."""
from diagnose.engine import confidence_of, diagnose_text


def _d(text: str):
    return diagnose_text(text)


# -- the taxonomy's tie-break: a compiler error about an on-chip memory limit ---------------------

def test_compiler_allocation_over_on_chip_bound_is_shared_memory_not_compile_error():
    log = (
        "loc(\"attn.mlir\":88:7): error: total allocation size 299008 bytes exceeds the limit of 232448 bytes "
        "in memory space 3\n"
        "RuntimeError: PassManager::run failed\n"
    )
    d = _d(log)
    assert d.family == "shared-memory-exceeded"
    assert d.root.line == 1
    assert d.facts.get("memory_space") == "3"


def test_allocation_in_global_memory_or_hbm_is_not_on_chip():
    d = _d("error: allocation of 4096 bytes exceeds the limit in memory space 0\nRuntimeError: PassManager::run failed\n")
    assert d.family == "compile-error"


# -- the build driver's own error line -----------------------------------------------------------

def test_compiler_driver_error_is_a_build_failure_not_a_missing_library():
    log = (
        "building 'fused_adam' extension\n"
        "  c++: error: build/temp.linux-x86_64-cpython-312/csrc/multi_tensor_adam.o: No such file or directory\n"
        "  error: command '/usr/bin/c++' failed with exit code 1\n"
    )
    d = _d(log)
    assert d.family == "compile-error"
    assert d.signature == "compile-error.compiler-driver-error"


def test_a_loader_line_still_outranks_the_driver_line():
    log = (
        "clang++: error: linker command failed with exit code 1 (use -v to see invocation)\n"
        "ImportError: libcudart.so.13: cannot open shared object file: No such file or directory\n"
    )
    assert _d(log).family == "missing-library"


# -- a verification harness's element report ------------------------------------------------------

def test_verify_report_mismatch_at_is_numerical():
    log = "Running conv3d verify\nFAILED: 0.0412\nMax diff: 7\nMismatch at 3: 12.5 != 19.5\n"
    d = _d(log)
    assert d.family == "numerical-mismatch"
    assert d.root.line == 2          # the harness's FAILED head, not the detail under it


def test_a_crash_outranks_the_mismatch_report():
    log = "Mismatch at 0: 1 != 2\nCUDA error: an illegal memory access was encountered\n"
    assert _d(log).family == "illegal-memory-access"


def test_a_passing_summary_is_not_a_verify_failure():
    d = _d("Tests run: 40 PASSED: 40 FAILED: 0\n")
    assert d.family != "numerical-mismatch" and d.signature != "numerical-mismatch.verify-mismatch-at"


# -- the allocator's own OOM report failing -------------------------------------------------------

def test_nvml_assert_in_the_allocator_oom_report_is_oom():
    log = ('Traceback (most recent call last):\n  File "serve.py", line 9, in <module>\n'
           'torch.OutOfMemoryError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/build/c10/cuda/CUDACachingAllocator.cpp":1210\n')
    assert _d(log).family == "oom"


# -- traceback frames as evidence, in every traceback form ---------------------------------------

def test_triton_language_frame_is_compile_time_and_the_root_is_the_exception_line():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.11/site-packages/triton/language/semantic.py", line 1502, in dot\n'
        "    assert lhs.shape[-1] == rhs.shape[0]\n"
        "AssertionError: First input shape (['constexpr[16]']) and second input shape ['constexpr[32]'] are not compatible\n"
    )
    d = _d(log)
    assert d.family == "compile-error"
    assert d.signature == "compile-error.frame.kernel-compiler"
    assert d.root.line == 4                    # the exception that ends the traceback, not the frame
    assert [(c.line, c.role) for c in d.chain[:2]] == [(4, "root"), (2, "detail")]   # the cascade agrees
    assert d.confidence == round(confidence_of("support"), 2)


def test_jax_backend_compile_frame_in_ipython_form():
    log = (
        "XlaRuntimeError                           Traceback (most recent call last)\n"
        "File /srv/conda/lib/python3.12/site-packages/jax/_src/compiler.py:267, in backend_compile(backend, module, options)\n"
        "XlaRuntimeError: UNKNOWN: <unknown>:0: error: failed to legalize operation 'mhlo.triangular_solve'\n"
    )
    assert _d(log).family == "compile-error"


def test_numba_launcher_frames_are_not_compiler_frames():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/numba/cuda/compiler.py", line 512, in __call__\n'
        '  File "/usr/lib/python3/site-packages/numba/cuda/cudadrv/driver.py", line 2301, in launch_kernel\n'
        "numba.cuda.cudadrv.driver.CudaAPIError: [701] Call to cuLaunchKernel resul\n"
    )
    d = _d(log)
    assert d.family == "launch-config"
    assert d.signature == "launch-config.frame.launch-call"


def test_a_named_error_at_the_launch_call_decides_over_the_launch_frame():
    log = ("numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuLaunchKernel results in "
           "CUDA_ERROR_ILLEGAL_ADDRESS\n")
    assert _d(log).family == "illegal-memory-access"


def test_inductor_compile_logger_location_at_error_level():
    log = "".join(
        f"E1102 09:15:0{i}.120300 4242 /venv/torch/_inductor/runtime/triton_heuristics.py:702]     tmp{i} = tl.load(in_ptr0 + x0)\n"
        for i in range(3))
    assert _d(log).family == "compile-error"
    warn = log.replace("E1102", "W1102")
    assert _d(warn).family == "none"


# -- a known failure logged as a warning, beside a failure nothing else explains ------------------

WARNED = (
    "  [WARNING]  gds_io requires the dev libcufile .so object and headers but these were not found.\n"
    "Traceback (most recent call last):\n"
    '  File "setup.py", line 80, in <module>\n'
    "RuntimeError: Unable to pre-compile gds_io\n"
)


def test_warned_prerequisite_explains_the_failure_beside_it():
    d = _d(WARNED)
    assert d.family == "missing-library"
    assert d.root.line == 1
    assert d.facts.get("library") == "libcufile"
    assert d.confidence == round(confidence_of("support"), 2)
    assert any("explained beside the failure" in n for n in d.notes)
    assert [link.line for link in d.chain if link.role == "symptom"] == [4]


def test_a_known_failure_logged_as_a_warning_explains_the_failure_beside_it():
    log = ("[W 12:00:01] cache alloc: CUDA out of memory. Tried to allocate 512.00 MiB\n"
           "Traceback (most recent call last):\n"
           '  File "serve.py", line 12, in <module>\n'
           "RuntimeError: engine step failed\n")
    d = _d(log)
    assert d.family == "oom", (d.signature, d.notes)
    assert any("logged at warning level" in n for n in d.notes)
    assert _d(log.splitlines(keepends=True)[0] + "step 1 ok\n").family == "none"


def test_a_plain_prerequisite_line_is_not_a_failure_either():
    assert _d("-- nvshmem_transport requires library libibverbs, which was not found\n-- Configuring done\n").family == "none"


def test_the_warning_alone_is_not_a_failure():
    d = _d(WARNED.splitlines(keepends=True)[0] + "ds_report: done\n")
    assert d.family == "none"


def test_a_warning_far_from_the_failure_does_not_explain_it():
    far = WARNED.splitlines(keepends=True)
    log = far[0] + "".join(f"step {i} ok\n" for i in range(40)) + "".join(far[1:])
    assert _d(log).family != "missing-library"


def test_the_warned_rule_never_overrides_a_named_failure():
    log = WARNED + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert _d(log).family == "oom"


# -- every frame signature reads the frame in every traceback form ---------------------------------

def _frame_examples():
    import re

    from signatures.loader import load_all

    frame = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[\w.<>]+)\s*$')
    for sig in load_all():
        if sig.tier != "support":
            continue
        for ex in sig.examples:
            m = frame.match(ex.line)
            if m:
                yield sig, m["path"], m["line"], m["func"]


def test_frame_signatures_read_ipython_and_rich_forms_too():
    """The same frame as Python, IPython ("File PATH:N, in f(args)") and rich ("│ PATH:N in f │")
    print it: a frame signature written from one form must read the others."""
    import re2

    seen = 0
    for sig, path, line, func in _frame_examples():
        forms = [f"File {path}:{line}, in {func}(self, *args)", f"│ {path}:{line} in {func}                │"]
        for text in forms:
            assert any(re2.search(p, text) for p in sig.patterns), (sig.id, text)
        seen += 1
    assert seen >= 10


# -- context evidence: the source line of the check that raised a bare exception -------------------

def _bare(code: str, exc: str = "AssertionError") -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/u/kernels/test_softmax.py", line 41, in test_softmax\n'
            f"{code}\n{exc}\n")


def test_a_bare_assertion_gets_its_family_from_its_source_line():
    cases = [
        ("    assert jnp.allclose(y_pallas, y_ref, atol=2e-3)", "numerical-mismatch"),
        ("    assert out.shape == (B, H, N, D)", "shape-stride-mismatch"),
        ("    assert N % BLOCK_N == 0", "shape-stride-mismatch"),
        ("    assert k.dtype == torch.bfloat16", "dtype-mismatch"),
    ]
    for code, family in cases:
        d = _d(_bare(code))
        assert d.family == family, (code, d.family, d.signature)
        assert d.root.line == 4                      # the failure, not the line that explains it
        assert d.confidence == round(confidence_of("support"), 2)
        assert any("source line of the check" in n for n in d.notes)


def test_a_check_source_line_alone_is_not_a_failure():
    d = _d("def test():\n    assert torch.allclose(out, ref)\nall 12 tests passed\n")
    assert d.family == "none"


def test_a_source_line_far_above_the_failure_does_not_explain_it():
    log = "    assert torch.allclose(a, b)\n" + "".join(f"step {i}\n" for i in range(10)) + "AssertionError\n"
    assert _d(log).family != "numerical-mismatch"


def test_a_named_failure_beats_the_source_line():
    log = _bare("    assert torch.allclose(out, ref)", "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert _d(log).family == "illegal-memory-access"


# -- framework-neutral forms: a named library that will not load, an arch a check refuses ----------

def test_named_library_load_failure_in_any_framework():
    for line in ("2025-03-01 12:00:01 nrt ERROR  Unable to load libnrt.so.1",
                 "RuntimeError: Failed to dlopen libhsa-runtime64.so.1",
                 "Error: could not locate libcuda.so.1"):
        assert _d(line + "\n").family == "missing-library", line


def test_a_loader_naming_the_missing_dependency_reports_the_dependency():
    d = _d("Failed to load library libmy_ext.so with error: libcudnn.so.9: cannot open shared object file\n")
    assert d.facts.get("library") == "libcudnn.so.9"


def test_an_optional_library_probed_at_warning_level_is_not_a_failure():
    assert _d("W0301 12:00:01.5 loader.cc:64] Could not load libnvinfer.so.10\nstep 1 loss 2.1\n").family == "none"


def test_arch_check_in_any_library_words():
    for line in ("RuntimeError: blockwise fp8 scaling requires compute capability 8.9 or higher",
                 "NotImplementedError: warp specialization is only supported on sm_90a",
                 "ValueError: this MoE kernel is not supported on gfx906"):
        assert _d(line + "\n").family == "arch-mismatch", line


def test_the_same_words_in_a_skip_a_note_or_a_fallback_are_not_a_failure():
    for line in ("note: the fused kernel requires sm_90; using the fallback",
                 "SKIPPED [1] tests/test_fp8.py:12: requires sm_90",
                 "bf16 is not supported on this GPU (sm_75), falling back to fp16",
                 "Could not find libtcmalloc.so, using the default allocator",
                 "Loaded libcudart.so.12; could not load libcupti.so (profiling disabled)"):
        assert _d(line + "\nepoch 1 done\n").family == "none", line


def test_a_generic_arch_line_yields_to_a_named_failure_after_it():
    log = ("note: the fused kernel requires sm_90; using the fallback\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB\n")
    assert _d(log).family == "oom"


# -- the taxonomy's tie-break in the wording guess -------------------------------------------------

def test_a_compiler_raised_shape_or_dtype_error_is_guessed_compile_error():
    from signatures.fallback import guess

    assert guess([("NotImplementedError: Mosaic GPU lowering: unsupported shape (3, 5) for wgmma", 2.0)]).family == "compile-error"
    assert guess([("LoweringException: operand dtype mismatch between int8 and bf16", 2.0)]).family == "compile-error"
    # no compiler in sight: the shape words keep their family
    assert guess([("ValueError: unsupported shape (3, 5) for this kernel", 2.0)]).family == "shape-stride-mismatch"
    # shared memory and the target arch are not overruled (the taxonomy's exceptions)
    assert guess([("MLIR lowering: shared memory exceeds the limit for this block", 2.0)]).family == "shared-memory-exceeded"
    assert guess([("codegen: the kernel image requires compute capability 9.0", 2.0)]).family == "arch-mismatch"


def test_the_wording_guess_reads_a_missing_file_as_a_library_only_when_it_names_one():
    from signatures.fallback import guess

    for text in ("FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'",
                 "OSError: checkpoint.pt not found",
                 "KeyError: 'model.layers.0.weight' not found in state dict",
                 "g++: error: build/temp/attn.o: No such file or directory"):
        g = guess([(text, 2.0)])
        assert g is None or g.family != "missing-library", (text, g)
    for text in ("RuntimeError: CUDA_HOME not found",
                 "OSError: No such file or directory: '/opt/rocm/lib/libamdhip64.so'",
                 "RuntimeError: could not load library libcudnn_cnn.so.9"):
        assert guess([(text, 2.0)]).family == "missing-library", text


# -- family5: a wrapper's own words over the named error it carries ------------------------------

def test_julia_kernel_exception_yields_to_the_device_error_it_reports():
    # AMDGPU.jl/CUDA.jl: the device-side launch failed; KernelException is the host's report of it
    log = (
        "ERROR: a CUDA error was thrown during kernel execution: too many resources requested for launch (code 7, cudaErrorLaunchOutOfResources)\n"
        "ERROR: KernelException: exception thrown during kernel execution on device NVIDIA A100-SXM4-40GB\n"
        "Stacktrace:\n  [1] check_exceptions()\n"
    )
    assert _d(log).family == "launch-config"


def test_julia_kernel_exception_alone_is_still_a_device_assert():
    log = ("ERROR: an InexactError was thrown during kernel execution on thread (3, 1, 1) in block (1, 1, 1).\n"
           "ERROR: LoadError: KernelException: exception thrown during kernel execution on device Tesla T4\n")
    assert _d(log).family == "device-assert"


def test_xla_all_algorithms_line_outranks_the_per_algorithm_statuses():
    hlo = "%cudnn-conv.7 = (f16[8,128,28,28]{3,2,1,0}, u8[0]{0}) custom-call(" + "f16[8,64,56,56]{3,2,1,0} %p0, " * 40
    log = (f"jaxlib.xla_extension.XlaRuntimeError: UNKNOWN: All algorithms tried for {hlo}) failed. Falling back to default algorithm.  Per-algorithm errors:\n"
           "  Profiling failure on cuDNN engine 0: INTERNAL: CUDNN_STATUS_EXECUTION_FAILED\n"
           "  Profiling failure on cuDNN engine 3: INTERNAL: CUDNN_STATUS_EXECUTION_FAILED\n")
    d = _d(log)
    assert d.family == "autotune-failure" and d.root.line == 1


def test_xla_conv_picker_warning_is_the_failure_it_returns():
    d = _d("W0311 09:12:01.000000 12 conv_algorithm_picker.cc:1044] Failed to determine best cudnn convolution algorithm for:\n"
           "%cudnn-conv-bw-input.2 = (f32[4,3,32,32]{3,2,1,0}, u8[0]{0}) custom-call(...)\n")
    assert d.family == "autotune-failure"


def test_cudnn_heuristics_fallback_warning_alone_is_not_a_failure():
    d = _d("W0311 09:12:01.000000 12 gpu_conv_algorithm_picker.cc:700] None of the algorithms provided by cuDNN heuristics worked; trying fallback algorithms.\n"
           "step 10 loss 0.31\n")
    assert d.family == "none"


def test_xla_compiler_check_in_the_pipeline_is_a_compile_error():
    d = _d("F0505 11:02:03.456789 4242 external/xla/xla/service/gpu/ir_emitter_unnested.cc:1210] Check failed: slice.allocation() != nullptr\n"
           "*** Check failure stack trace: ***\nAborted (core dumped)\n")
    assert d.family == "compile-error"


def test_nan_reports_in_other_words_are_numerical():
    for line in ("RuntimeError: the decoder output was returned as all NaN after step 3",
                 "FAIL  attention fwd  NaN (12/4096 elements)",
                 "vllm.NanLossError: loss became NaN at step 120"):
        assert _d(line + "\n").family == "numerical-mismatch", line
    assert _d("checked 4096 elements: NaN (0/4096 elements)\n").family != "numerical-mismatch"


def test_a_connection_that_timed_out_is_the_network_not_a_hang():
    log = "".join(f"host-3:7781:7790 [1] NCCL INFO Call to connect returned Connection refused, retrying\n" for _ in range(3))
    assert _d(log).family == "collective-comm"
    log = "".join("gloo connect to 10.1.2.3:29500 has timed out, retrying\n" for _ in range(3)) + "RuntimeError: gloo rendezvous failed\n"
    assert _d(log).family in ("collective-comm", "unknown")


def test_a_collective_that_timed_out_is_still_a_hang():
    d = _d("RuntimeError: NCCL communicator init timed out after 1800 s on rank 3\n")
    assert d.family != "collective-comm"


def test_an_in_kernel_all_to_all_timeout_is_timeout_hang():
    log = ("DeepEP combine NVL receiver timeout, channel: 3, RDMA: 0, nvl: 2, src RDMA: 1\n"
           "DeepEP combine NVL receiver timeout, channel: 4, RDMA: 0, nvl: 2, src RDMA: 1\n")
    assert _d(log).family == "timeout-hang"


def test_an_info_level_loader_error_explains_the_traceback_after_it():
    log = ("INFO:tensorflow:Error reported to Coordinator: libcudnn.so.7: cannot open shared object file: No such file or directory\n"
           "Traceback (most recent call last):\n"
           '  File "/venv/lib/python3.6/site-packages/tensorflow/python/training/coordinator.py", line 297, in stop_on_exception\n'
           "    yield\n")
    d = _d(log)
    assert d.family == "missing-library" and d.root.line == 1


def test_the_gtest_near_line_is_the_root_and_the_failed_verdict_its_symptom():
    log = ("/src/tests/reduce_test.cu:88: Failure\n"
           "The difference between out[i] and ref[i] is 3.5, which exceeds 0.001, where\n"
           "out[i] evaluates to 0,\n"
           "[  FAILED  ] ReduceTest.Sum (3 ms)\n")
    d = _d(log)
    assert d.family == "numerical-mismatch" and d.root.line == 2


def test_cmake_without_a_gpu_package_is_a_missing_library_not_a_compile_error():
    log = ("CMake Error at CMakeLists.txt:12 (find_package):\n"
           "  Could not find a package configuration file provided by \"rocblas\" with any of\n"
           "  the following names:\n"
           "-- Configuring incomplete, errors occurred!\n")
    assert _d(log).family == "missing-library"
