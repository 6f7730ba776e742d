"""Every line the root explains is a `symptom` in the chain, before the root as well as after it.

Unit logs per mechanism (engine._chain, engine._unexplained_chain)."""
from diagnose.engine import diagnose_text


def roles(d):
    return {(c.line, c.signature): c.role for c in d.chain}


def test_the_frameworks_exception_for_the_root_is_a_symptom_even_in_the_roots_own_words():
    """TensorFlow logs the OOM at its op, then raises ResourceExhaustedError with the same wording
    (one signature knows both): the exception line reports the root again. A line of the same
    message that is no exception (its continuation) stays a detail."""
    d = diagnose_text("2018-06-08 17:26:00.908130: W tensorflow/core/framework/op_kernel.cc:1202] OP_REQUIRES failed at "
                      "tile_ops.cc:123 : Resource exhausted: OOM when allocating tensor with shape[16,1024] and type "
                      "float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
                      "Traceback (most recent call last):\n"
                      '  File "train.py", line 3, in <module>\n'
                      "    sess.run(op)\n"
                      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor "
                      "with shape[16,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n")
    assert d.family == "oom" and d.root.line == 1
    assert [c.role for c in d.chain if c.line == 5] == ["symptom"]
    repeat = diagnose_text("RuntimeError: CUDA error: an illegal memory access was encountered\n" * 2)
    assert [c.role for c in repeat.chain] == ["root", "detail"]


def test_a_watchdog_summary_of_the_roots_family_printed_before_it_is_a_symptom():
    d = diagnose_text("[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. Due to the "
                      "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted data.\n"
                      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                      "ProcessGroupNCCL.cpp:1333, invalid usage (run with NCCL_DEBUG=WARN for details)\n")
    assert d.root.line == 2
    assert roles(d)[(1, "collective-comm.process-group-wrapper")] == "symptom"


def test_around_a_hardware_fault_every_other_failure_is_its_consequence():
    d = diagnose_text("    CUDA Error: no CUDA-capable device is detected\n"
                      "Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot the system\n"
                      "RuntimeError: CUDA error: unknown error\n")
    assert d.family == "hardware-fault" and d.root.line == 2
    assert roles(d)[(1, "missing-library.no-nvidia-driver")] == "symptom"
    assert all(c.role in ("root", "symptom") for c in d.chain)


def test_a_root_of_another_family_before_a_non_hardware_root_still_competes():
    """Only a hardware fault explains the whole log: before an OOM root, a missing-driver line of
    another family that lost on priority is `competing`, not claimed as a symptom."""
    d = diagnose_text("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
                      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    before = [c.role for c in d.chain if c.line < d.root.line]
    assert d.family == "oom" and before == ["competing"], (d.family, [(c.line, c.role) for c in d.chain])


def test_an_unexplained_failure_lists_only_the_consequences_after_its_root():
    """No signature: the root is a guess, so only lines that follow any failure (a GPU reset, an
    abort, an exit status) are listed as its symptoms; another error line is not claimed."""
    d = diagnose_text("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=4, emitted seq=5\n"
                      "some error: foo bar failed\n"
                      "amdgpu 0000:0d:00.0: amdgpu: GPU reset begin!\n")
    assert d.root.line == 1
    assert [(c.line, c.role) for c in d.chain] == [(1, "root"), (3, "symptom")]


def test_the_runtimes_generic_report_printed_before_the_specific_message_is_a_symptom():
    """The async error report (`error=59 : device-side assert triggered`, `ncclInvalidUsage: This
    usually reflects invalid usage`) often reaches the log before the message that says what failed;
    a lower-priority line of the root's family on a status/exception line before it is its symptom."""
    d = diagnose_text("pytorch/aten/src/THC/generated/../THCTensorMathCompare.cuh line=82 error=59 : device-side assert triggered\n"
                      "pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:99: void cunn_SpatialClassNLLCriterion_updateOutput_kernel"
                      "(T *, T *, T *, long *, T *, int, int, int, int, int, long) [with T = float, AccumT = float]: "
                      "block: [1,0,0], thread: [0,0,0] Assertion `t >= 0 && t < n_classes` failed.\n")
    assert d.family == "device-assert" and d.root.line == 2
    assert [c.role for c in d.chain if c.line == 1] == ["symptom"]


def test_a_failure_logged_below_error_level_by_convention_after_the_root_is_a_symptom():
    """TensorFlow logs the failing op at W (`OP_REQUIRES failed at conv_ops.cc`) after the cuDNN load
    error that caused it: a `convention` line after the root is its symptom at any level."""
    d = diagnose_text("2023-06-19 17:03:27.840554: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:417] "
                      "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.6.0.  CuDNN library needs "
                      "to have matching major version and equal or higher minor version.\n"
                      "2023-06-19 17:03:27.841329: W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed "
                      "at conv_ops.cc:1068 : UNIMPLEMENTED: DNN library is not found.\n")
    assert d.family == "missing-library" and d.root.line == 1
    assert [c.role for c in d.chain if c.line == 2] == ["symptom"]


def test_around_a_hardware_fault_the_frameworks_exception_before_it_is_a_symptom():
    """The device failed (NVRM reset required, from dmesg, pasted below the traceback): the exception
    torch raised is its consequence wherever it stands; a generic error line before it is not claimed."""
    d = diagnose_text("Traceback (most recent call last):\n"
                      '  File "<stdin>", line 1, in <module>\n'
                      "torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n"
                      "\n"
                      "[373871.354096] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
                      "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2827\n")
    assert d.family == "hardware-fault" and d.root.line == 5
    assert [c.role for c in d.chain if c.line == 3] == ["symptom"]
    e = diagnose_text("pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer\n"
                      + "pcieport 0000:00:02.0: broadcast error_detected message\n" * 8
                      + "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.\n")
    assert e.family == "hardware-fault" and all(c.line != 1 for c in e.chain if c.role == "symptom")


def test_a_cpu_fallback_after_the_root_is_its_symptom_and_alone_no_failure():
    """A program that gives up on the GPU after the failure ('HOOMD-blue is running on the CPU')
    shows what the root caused; the same line with no failure before it is no failure at all."""
    d = diagnose_text("system has unsupported display driver / cuda driver combination\n"
                      "HOOMD-blue is running on the CPU\n")
    assert d.family == "driver-mismatch" and [c.role for c in d.chain if c.line == 2] == ["symptom"]
    assert diagnose_text("HOOMD-blue is running on the CPU\nstep 1 done\n").family == "none"
    before = diagnose_text("HOOMD-blue is running on the CPU\n"
                           "system has unsupported display driver / cuda driver combination\n")
    assert all(c.line != 1 for c in before.chain)


def test_an_abort_in_another_locale_after_the_root_is_its_symptom():
    """The shell reports the abort in the user's locale ('已放弃 (核心已转储)', 'Aborted (core dumped)'
    in zh_CN): it follows from the root like the English line."""
    d = diagnose_text("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open "
                      "shared object file: No such file or directory\n"
                      "已放弃 (核心已转储)\n")
    assert d.family == "missing-library" and [c.role for c in d.chain if c.line == 2] == ["symptom"]


def test_after_a_root_that_poisons_the_context_another_calls_report_of_it_is_a_symptom():
    """An illegal address is sticky: every later call on the context fails with it (TensorRT's
    deallocate and destructors, cudaFree, a destructor's `Exception ignored in` traceback). Those are
    symptoms; the root's own line repeated, and a continuation naming the status, stay details."""
    d = diagnose_text("[TRT] [E] 1: [fusedConvActRunner.cpp::destroyFilterTexture::293] Error Code 1: Cuda Runtime "
                      "(an illegal memory access was encountered)\n"
                      "[TRT] [E] 1: [defaultAllocator.cpp::deallocate::42] Error Code 1: Cuda Runtime "
                      "(an illegal memory access was encountered)\n")
    assert d.family == "illegal-memory-access" and d.root.line == 1
    assert [c.role for c in d.chain if c.line == 2] == ["symptom"]
    d = diagnose_text("cupy.cuda.driver.CUDADriverError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered\n"
                      "Exception ignored in: 'cupy.cuda.function.Module.__dealloc__'\n"
                      "Traceback (most recent call last):\n"
                      '  File "cupy/cuda/driver.pyx", line 247, in cupy.cuda.driver.moduleUnload\n'
                      "cupy.cuda.driver.CUDADriverError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered\n")
    assert d.root.line == 1 and [c.role for c in d.chain if c.line == 5] == ["symptom"]
    cont = diagnose_text("RuntimeError: CUDA error: an illegal memory access was encountered\n"
                         "Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/"
                         "group__CUDART__TYPES.html for more information.\n")
    assert not any(c.role == "symptom" for c in cont.chain), cont.chain


def test_the_kernel_drivers_records_of_separate_faults_are_not_symptoms_of_the_first():
    """Two Xid 31 records minutes apart (two processes): each is a fault of its own, not a call on
    the first one's dead context."""
    d = diagnose_text("[22859.081860] NVRM: Xid (PCI:0000:01:00): 31, pid=14292, name=python, Ch 00000030, intr 00000000. "
                      "MMU Fault: ENGINE HOST0 HUBCLIENT_ESC faulted @ 0x10_00200000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n"
                      "[23203.142515] NVRM: Xid (PCI:0000:01:00): 31, pid=14566, name=python, Ch 00000030, intr 00000000. "
                      "MMU Fault: ENGINE HOST0 HUBCLIENT_ESC faulted @ 0x10_00200000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n")
    assert not any(c.role == "symptom" for c in d.chain), d.chain


def test_a_non_sticky_error_does_not_make_later_reports_symptoms():
    """An OOM does not poison the context: a second OOM later is the same failure's detail, not a
    dead-context call (signatures.taxonomy.POISONS_CONTEXT)."""
    d = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
                      "RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB\n")
    assert d.family == "oom" and [(c.line, c.role) for c in d.chain] == [(1, "root"), (2, "detail")]


def test_teardown_after_the_failure_is_a_symptom():
    """What the failure left behind at teardown: a finalizer reporting the dead context (also on a
    line the root's signature knows), Python's unraisable report from a __del__, ProcessGroupNCCL
    destructed without destroy_process_group; never a failure on its own."""
    d = diagnose_text("CUDA error: an illegal memory access was encountered (code #700, ERROR_ILLEGAL_ADDRESS)\n"
                      "error in running finalizer: CUDAdrv.CuError(code=700, meta=nothing)\n")
    assert d.root.line == 1 and [c.role for c in d.chain if c.line == 2] == ["symptom"]
    d = diagnose_text("[rank0]: ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)\n"
                      "[rank0]:[W322 06:54:59.203812629 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has "
                      "NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application "
                      "should call destroy_process_group to ensure that any pending NCCL operations have finished.\n")
    assert d.family == "device-placement" and [c.role for c in d.chain if c.line == 2] == ["symptom"]
    alone = diagnose_text("Exception ignored in: <function Pool.__del__ at 0x7f>\n")
    assert alone.family == "none", alone.family


def test_an_exception_chained_to_the_root_and_a_launchers_report_of_the_worker_are_symptoms():
    """Python's 'The above exception was the direct cause of the following exception' says the next
    exception follows from the root (also when the paste cut it); torchelastic's `failed (exitcode: 1)
    local_rank: 0` reports the worker's failure again, also after a failure no signature explains."""
    d = diagnose_text("ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
                      "\n"
                      "The above exception was the direct cause of the following exception:\n"
                      "\n"
                      "Traceback (most recent call last):\n")
    assert d.family == "missing-library" and [c.role for c in d.chain if c.line == 3] == ["symptom"]
    d = diagnose_text("AttributeError: 'NoneType' object has no attribute 'start'\n"
                      "E0115 18:01:46.937459 98840 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] "
                      "failed (exitcode: 1) local_rank: 0 (pid: 98939) of binary: /envs/flash/bin/python\n")
    assert d.family == "unknown" and [(c.line, c.role) for c in d.chain] == [(1, "root"), (2, "symptom")]


def test_a_bracketed_error_level_line_is_the_cause_of_the_abort_after_it():
    """TensorRT's sample logger puts the timestamp and the level in one bracket: an error-level line,
    so the abort after it is its symptom and it is the root line."""
    d = diagnose_text("Building TensorRT engine, FP16 available:1\n"
                      "[2020-08-20 11:03:50   ERROR] Network has dynamic or shape inputs, but no optimization profile has been defined.\n"
                      "[2020-08-20 11:03:50   ERROR] Network validation failed.\n"
                      "terminate called after throwing an instance of 'std::runtime_error'\n"
                      "  what():  Failed to create object\n"
                      "Aborted (core dumped)\n")
    assert d.root.line == 2, d.root
    assert {c.line for c in d.chain if c.role == "symptom"} >= {4, 6}


def test_workers_killed_after_the_failure_are_symptoms():
    d = diagnose_text("ERROR 12-05 20:24:46 engine.py:366] KeyError: 'layers.0.mlp.down_proj.weight_scale'\n"
                      "INFO 12-05 20:24:46 multiproc_worker_utils.py:120] Killing local vLLM worker processes\n")
    assert [(c.line, c.role) for c in d.chain] == [(1, "root"), (2, "symptom")]
    d = diagnose_text("[2025-03-09 00:57:16 TP0] Watchdog timeout (self.watchdog_timeout=300)\n"
                      "[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.\n"
                      "Killed\n")
    assert [c.line for c in d.chain if c.role == "symptom"] == [2, 3]


def test_the_roots_own_report_printed_again_is_a_detail_not_a_symptom():
    """Other threads hitting the same device assertion, other ranks' identical watchdog lines: the
    same report again (it differs only in its numbers), not a line the root caused."""
    d = diagnose_text("".join(f"../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [18,0,0], "
                              f"thread: [{t},0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n" for t in range(6, 10)))
    assert d.family == "device-assert" and d.root.line == 1
    assert not any(c.role == "symptom" for c in d.chain), [(c.line, c.role, c.signature) for c in d.chain]


def test_a_line_that_only_carries_its_loggers_error_level_is_not_a_symptom():
    """vLLM prefixes every line of a worker's traceback with ERROR: a frame, a caret line or torch's
    'For debugging consider passing CUDA_LAUNCH_BLOCKING=1' is a line of the message, not a report;
    an ERROR-prefixed line whose message says it failed ('EngineCore failed to start', a timed-out
    abort) still is one."""
    p = "(VllmWorker rank=0 pid=417) ERROR 07-13 22:37:22 [multiproc_executor.py:522] "
    d = diagnose_text(p + '  File "/opt/vllm/worker.py", line 6, in run\n'
                      + p + "    return self.model(x)\n"
                      + p + "           ^^^^^^^^^^^^^\n"
                      + p + "RuntimeError: CUDA error: an illegal memory access was encountered\n"
                      + p + "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                      + "(EngineCore pid=12244) ERROR 07-13 22:37:22 [core.py:1240] EngineCore failed to start.\n")
    assert d.family == "illegal-memory-access" and d.root.line == 4
    assert [c.line for c in d.chain if c.role == "symptom"] == [6], [(c.line, c.role) for c in d.chain]
    d = diagnose_text("[rank0]:[E ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
                      "WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.\n"
                      "[rank0]:[E ProcessGroupNCCL.cpp:1025] [PG 0 Rank 0] Future for ProcessGroup abort timed out after 600000 ms\n"
                      "[rank0]:[E ProcessGroupNCCL.cpp:636] [Rank 0] To avoid data inconsistency, we are taking the entire process down.\n")
    assert d.family == "timeout-hang" and [c.line for c in d.chain if c.role == "symptom"] == [2, 3]


def test_a_rival_signature_on_the_root_line_itself_is_a_detail_but_a_wrapper_there_is_a_symptom():
    """A bare status code or another family's wording of the root line describes the root (the line
    cannot be discounted); a wrapper on the same line is the layer that reported it."""
    d = diagnose_text("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. "
                      "Ran out of memory in memory space vmem. Used 59.79M of 16.00M vmem. Exceeded vmem capacity by 43.79M.\n")
    assert d.family == "shared-memory-exceeded"
    assert not any(c.role == "symptom" for c in d.chain), [(c.line, c.role, c.signature) for c in d.chain]
    d = diagnose_text("[rank0]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 0] Process group watchdog thread terminated with "
                      "exception: CUDA error: an illegal memory access was encountered\n")
    assert d.family == "illegal-memory-access" and any(c.role == "symptom" and c.line == 1 for c in d.chain)


def test_a_line_that_leads_to_the_root_is_not_its_summary():
    """An error line just before the root that ends with a colon introduces it ("... is giving me the
    following error:", NCCL's "Last error:"): the root's lead, not a symptom printed before it."""
    d = diagnose_text("This code is giving me the following error:\n"
                      "\n"
                      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert d.family == "oom" and not any(c.role == "symptom" for c in d.chain), d.chain


def test_raise_lines_headers_and_glued_repeats_are_not_symptoms():
    """A `raise X(...)` source line is where the exception was raised; NCCL's 'Last error:' heads the
    line after it; the root's assertion behind a progress bar the paste glued to it is the same
    report as the next thread's."""
    d = diagnose_text('    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
                      "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, "
                      "Hardware limit: 65536. Reducing block sizes or `num_stages` may help.\n")
    assert d.root.line == 2 and not any(c.role == "symptom" for c in d.chain), d.chain
    d = diagnose_text("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, "
                      "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
                      "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
                      "Last error:\n"
                      "socketStartConnect: Connect to 10.0.0.2<41231> failed : Software caused connection abort\n")
    assert 3 not in {c.line for c in d.chain if c.role == "symptom"}
    a = "/opt/conda/aten/src/ATen/native/cuda/Loss.cu:92: operator(): block: [0,0,0], thread: [{t},0,0] Assertion `input_val >= zero && input_val <= one` failed.\n"
    d = diagnose_text("Epoch 3: : 67190it [6:05:52,  3.06it/s, loss=2.15]" + a.format(t=32) + a.format(t=33))
    assert d.family == "device-assert" and not any(c.role == "symptom" for c in d.chain), d.chain


def test_a_traceback_cut_after_the_root_is_the_roots_reraise():
    """A traceback that starts after the root is the framework re-raising it: when the paste cut it
    before its exception line, its header is the symptom; a traceback that ends in an exception line
    of its own is represented by that line (no second link), and one before the root is not a symptom."""
    root = "CUDA Error: an illegal memory access was encountered (CUDA Error: 700)\n"
    cut = "Traceback (most recent call last):\n" '  File "serve.py", line 9, in <module>\n' "    run()\n"
    d = diagnose_text(root + cut)
    assert d.root.line == 1 and roles(d)[(2, "evidence.traceback")] == "symptom"
    full = diagnose_text(root + cut + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert (2, "evidence.traceback") not in roles(full) and "symptom" in roles(full).values()
    before = diagnose_text(cut + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert before.root.line == 4 and all(c.line != 1 for c in before.chain)


def test_an_unexplained_roots_reraise_and_its_message_quoted_by_another_layer_are_in_its_chain():
    """No signature explains the root (a guess from the wording): a traceback cut after it is still its
    re-raise, and a later line quoting its whole message is another layer reporting it; a C++
    backtrace header ("Exception raised from ...") is the root's own stack, not a second failure."""
    d = diagnose_text("torch.AcceleratorError: CUDA error: the frobnicator declined the widget at this time\n"
                      "app - ERROR - Error in input loop, stopping: CUDA error: the frobnicator declined the widget at this time\n"
                      "Traceback (most recent call last):\n"
                      '  File "serve.py", line 9, in <module>\n')
    assert d.root.line == 1
    assert roles(d)[(2, "evidence.error")] == "symptom" and roles(d)[(3, "evidence.traceback")] == "symptom"
    own = diagnose_text("RuntimeError: the frobnicator declined the widget at this time, said the runtime\n"
                        "Exception raised from frob at /src/frob.cpp:12 (most recent call first):\n")
    assert own.root.line == 1 and all(c.line != 2 for c in own.chain)


def test_a_failed_call_after_the_root_is_a_symptom_at_any_log_level():
    """TensorFlow logs its generated kernels' driver calls at W level: the module that could not load
    (unsupported PTX: the kernel cannot run, so it counts at warning level) leaves an invalid handle for
    the next call, which names its CUDA error code: that line is the root's consequence."""
    d = diagnose_text("2025-02-01 13:44:34.523685: W tensorflow/compiler/mlir/tools/kernel_gen/tf_gpu_runtime_wrappers.cc:40] "
                      "'cuModuleLoadData(&module, data)' failed with 'CUDA_ERROR_UNSUPPORTED_PTX_VERSION'\n"
                      "2025-02-01 13:44:34.523741: W tensorflow/compiler/mlir/tools/kernel_gen/tf_gpu_runtime_wrappers.cc:40] "
                      "'cuModuleGetFunction(&function, module, kernel_name)' failed with 'CUDA_ERROR_INVALID_HANDLE'\n")
    assert d.family == "driver-mismatch" and d.root.line == 1
    assert [c.role for c in d.chain if c.line == 2] == ["symptom"]
