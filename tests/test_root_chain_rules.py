"""Root-line and chain rules of diagnose/engine.py, on small inputs written for them (each rule is also
exercised by the labelled rounds' exact-miss lists; these pin the rule itself)."""
from diagnose.engine import diagnose_text
from signatures.normalise import line_level


def _roles(d):
    return {c.line: c.role for c in d.chain}


def test_a_prefixed_traceback_is_rooted_at_its_message_not_its_last_source_line():
    d = diagnose_text(
        'ERROR 10-10 01:53:56 client.py:412] TimeoutError("Server didn\'t reply within 5000 ms")\n'
        "ERROR 10-10 01:53:56 client.py:412] Traceback (most recent call last):\n"
        'ERROR 10-10 01:53:56 client.py:412]   File "/opt/vllm/rpc/client.py", line 409, in run\n'
        "ERROR 10-10 01:53:56 client.py:412]     await self.check_health(socket=socket)\n")
    assert d.root.line == 1, d.root


def test_a_shell_signal_report_after_a_failure_line_hands_the_root_to_it():
    d = diagnose_text("libc++abi: terminating due to uncaught exception of type std::runtime_error: "
                      "[malloc_or_wait] Unable to allocate 134217728 bytes.\n"
                      "zsh: abort      python txt2image.py\n")
    assert d.root.line == 1 and _roles(d).get(2) == "symptom", (d.root, d.chain)


def test_only_terminators_root_at_the_first():
    d = diagnose_text("gmake[3]: *** [CMakeFiles/x.dir/build.make:90: x.cpp.o] Error 1\n"
                      "gmake[2]: *** [CMakeFiles/Makefile2:83: all] Error 2\n"
                      "gmake: *** [Makefile:286: all] Error 2\n")
    assert d.root.line == 1, d.root


def test_a_later_line_that_hands_the_root_on_is_a_symptom_and_a_repeat_stays_detail():
    oom = ("2019-09-30 08:59:59.988498: W tensorflow/core/framework/op_kernel.cc:1431] OP_REQUIRES failed at "
           "fused_batch_norm_op.cc:573 : Resource exhausted: OOM when allocating tensor with shape[32,64,112,112]\n")
    d = diagnose_text(oom + "2019-09-30 08:59:59.988585: W tensorflow/core/common_runtime/base_collective_executor.cc:214] "
                      "BaseCollectiveExecutor::StartAbort Resource exhausted: OOM when allocating tensor with shape[32,64,112,112]\n")
    assert d.family == "oom" and _roles(d).get(2) == "symptom", d.chain
    d = diagnose_text(oom + oom)
    assert _roles(d).get(2) != "symptom", d.chain


def test_after_a_sticky_error_another_call_of_the_same_report_form_is_a_symptom():
    d = diagnose_text(
        '========= Program hit cudaErrorIllegalAddress (error 700) due to "an illegal memory access was encountered" '
        "on CUDA API call to cudaDeviceSynchronize.\n"
        '========= Program hit cudaErrorIllegalAddress (error 700) due to "an illegal memory access was encountered" '
        "on CUDA API call to cudaGetLastError.\n")
    assert d.family == "illegal-memory-access" and _roles(d).get(2) == "symptom", d.chain


def test_a_not_gpu_failure_decides_only_where_no_gpu_failure_is_named():
    net = ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): "
           "Read timed out. (read timeout=10)\n")
    assert diagnose_text(net).family == "unknown"
    d = diagnose_text("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, "
                      "opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n" + net)
    assert d.family == "illegal-memory-access", (d.family, d.signature)


def test_structured_logger_levels():
    assert line_level('time=2024 level=INFO source=gpu.go:568 msg="unable to load cuda driver library"') == "info"
    assert line_level('time=x level=warning msg="y failed"') == "warning"
    assert line_level("set the log level=info to quiet it") is None
    d = diagnose_text('time="2022-09-29T12:09:14Z" level=fatal msg="Error connecting to nv-hostengine"\n')
    assert d.family != "none", d.family
    d = diagnose_text('time="2022-09-29T12:09:09Z" level=info msg="Starting dcgm-exporter"\n')
    assert d.family == "none", d.family


def test_a_benign_line_of_reach_before_excuses_only_the_failures_above_it():
    warned = ("CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching /usr/local/cuda/lib64...\n"
              "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so\n")
    assert diagnose_text(warned).family == "none"
    d = diagnose_text(warned + "OSError: libbitsandbytes_cuda114.so: cannot open shared object file: No such file or directory\n")
    assert d.family == "missing-library" and d.root.line == 3, (d.family, d.root)


def test_an_unexplained_root_moved_by_the_log_is_guessed_from_the_line_it_moved_to():
    d = diagnose_text("terminate called after throwing an instance of 'std::runtime_error'\n"
                      "  what():  Invalid user-provided state data. Simulator is FP32 but state data is FP64.\n"
                      "Aborted\n")
    assert d.root.line == 2 and d.family == "dtype-mismatch", (d.root, d.family)


def test_the_logger_prefix_of_the_root_is_gpu_context_for_the_wording_guess():
    d = diagnose_text("F external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_dnn.cc:1011] Invalid DNN data type: 7\n")
    assert d.family == "dtype-mismatch", d.family
    # the same message from a logger naming no GPU source gives no GPU family
    assert diagnose_text("F src/app/main.cc:12] Invalid DNN data type: 7\n").family == "unknown"


def test_after_a_driver_mismatch_another_call_failing_with_the_same_error_is_a_symptom():
    d = diagnose_text("[util/test_utils.cu, 61 @ gpu 10981] cudaSetDevice failed. (CUDA error 35: CUDA driver version is insufficient for CUDA runtime version)\n"
                      "[app/bfs/bfs_app.cu, 424 @ gpu 0] cudaStreamCreate failed. (CUDA error 35: CUDA driver version is insufficient for CUDA runtime version)\n")
    assert d.family == "driver-mismatch" and d.root.line == 1 and _roles(d).get(2) == "symptom", (d.root, d.chain)
