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
