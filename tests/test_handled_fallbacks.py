"""Handled fallbacks: an autotuner dropping a candidate, a library falling back to another GPU path, a
connection that succeeds on a retry: `none`, unless the run then fails."""
from diagnose.engine import diagnose_text

CANDIDATE = (
    "AUTOTUNE mm(4096x4096, 4096x4096)\n"
    "W0611 10:00:01.000 1234 torch/_inductor/select_algorithm.py:1720] Runtime error during autotuning: \n"
    "RuntimeError: CUDA error: too many resources requested for launch\n"
    "Ignoring this choice.\n"
    "  triton_mm_4 0.0410 ms 100.0%\n"
)


def test_an_autotuner_dropping_a_failed_candidate_is_not_a_failure():
    d = diagnose_text(CANDIDATE + "step 100 loss 1.23\n")
    assert d.family == "none", (d.family, d.signature, d.root)


def test_but_a_failure_after_the_handled_one_is_the_runs_failure():
    d = diagnose_text(CANDIDATE + "step ok\n" * 300 + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert d.family == "illegal-memory-access"


def test_a_library_falling_back_to_another_gpu_algorithm_is_not_a_failure():
    d = diagnose_text("E0101 12:00:00.000 cudnn_conv.cc:801] CUDNN_STATUS_NOT_SUPPORTED for conv 3x3 bf16\n"
                      "W0101 12:00:00.000 cudnn_conv.cc:812] falling back to the non-fused convolution kernel\n"
                      "epoch 1 done\n")
    assert d.family == "none", (d.family, d.signature)


def test_a_fallback_that_abandons_the_gpu_is_not_excused():
    d = diagnose_text("ERROR: CUDA driver initialization failed\nCUDA not available, falling back to CPU\n")
    assert d.family != "none"


def test_a_connection_that_succeeds_on_a_retry_is_not_a_failure():
    d = diagnose_text("[E socket.cpp:957] [c10d] The client socket has timed out after 60s while trying to connect to (master, 29500).\n"
                      "[I socket.cpp:480] [c10d] The client socket has connected to [master]:29500 (errno: 0) after 3 retries\n"
                      "step 1 loss 2.0\n")
    assert d.family == "none", (d.family, d.signature)


def test_an_allocation_retried_after_an_oom_is_still_an_oom():
    d = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity)\n"
                      "retrying with batch size 16: succeeded after 1 retry\n")
    assert d.family == "oom"


def test_a_failing_test_is_failure_evidence_never_none():
    for line in ("FAIL: test_matmul_bf16 (__main__.TestOps)", "FAILED (failures=1)",
                 "FAILED tests/test_ops.py::test_matmul[bf16] - assert 0.98 > 0.99", "==== 1 failed, 12 passed in 3.41s ===="):
        d = diagnose_text("test_add (__main__.TestOps) ... ok\n" + line + "\n")
        assert d.family != "none", line


NCCL_PROBE = (
    "node2:5359:5359 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.2<0>\n"
    "node2:5359:5359 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "node2:5359:5359 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    "node2:5359:5359 [0] NCCL INFO NET/IB : No device found.\n"
    "node2:5359:5359 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n"
    "node2:5359:5359 [0] NCCL INFO Using network Socket\n"
)


def test_nccl_settling_on_sockets_without_ib_is_not_a_failure():
    d = diagnose_text(NCCL_PROBE + "NCCL version 2.4.8+cuda10.1\n| epoch 001 | loss 7.1\n")
    assert d.family == "none", (d.family, d.signature, d.root)


def test_a_real_nccl_failure_after_the_socket_fallback_still_decides():
    d = diagnose_text(NCCL_PROBE + "node2:5359:5400 [0] NCCL WARN socketStartConnect: Connect to 10.0.0.1<45321> failed : Connection refused\n"
                      "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3\n")
    assert d.family == "collective-comm", (d.family, d.signature)
    assert d.root.line > NCCL_PROBE.count("\n"), d.root


def test_other_nccl_warnings_are_not_excused_by_the_fallback_signature():
    d = diagnose_text("host:1:1 [0] NCCL INFO NET/IB : No device found.\n"
                      "host:1:1 [0] NCCL WARN Call to ibv_create_qp failed\n")
    assert d.family == "collective-comm", (d.family, d.signature)


def test_a_sticky_cuda_error_is_not_handled_by_an_autotuner_skipping_the_candidate():
    """An illegal address (or a device-side assert) poisons the process's CUDA context: "Ignoring this
    choice" cannot get past it, so the log is that failure, with a note saying why the excuse was not
    taken; a resource error in the same place stays a handled candidate (above)."""
    d = diagnose_text(CANDIDATE.replace("too many resources requested for launch", "misaligned address") + "step 100\n")
    assert d.family == "illegal-memory-access" and d.root.line == 3
    assert any(n.startswith("not handled") for n in d.notes)
