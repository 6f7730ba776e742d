"""Cascades: every line the root explains is in the chain as a `symptom` (engine._chain)."""
from diagnose.engine import diagnose_text


def _roles(d):
    return {c.line: (c.role, c.signature) for c in d.chain}


def test_what_a_failure_leaves_behind_is_a_symptom_at_any_log_level():
    log = ("Traceback (most recent call last):\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n"
           "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1736 closing signal SIGTERM\n"
           "[2026-04-27 03:20:18] SIGTERM received. signum=None frame=None. Draining requests and shutting down...\n"
           "ERROR 03-21 03:05:09 async_llm.py:410] Request cmpl-3f2 was cancelled\n")
    d = diagnose_text(log)
    assert d.family == "illegal-memory-access" and d.root.line == 2
    roles = _roles(d)
    assert all(roles[n][0] == "symptom" for n in (3, 4, 5)), roles


def test_a_shutdown_alone_is_not_a_failure():
    """`consequence` lines follow a failure but do not show one: alone they never make a log unknown."""
    d = diagnose_text("INFO 01-28 03:21:01 engine.py:387] Started engine\nINFO:     Shutting down\n"
                      "SIGTERM received. Draining requests and shutting down...\n")
    assert d.family == "none", (d.family, d.title)


def test_an_exception_quoted_in_markdown_after_the_root_is_a_symptom():
    d = diagnose_text("`ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory`\n....\n"
                      "`ValueError: Dependencies for InstructorEmbedding not found.`\n")
    assert d.family == "missing-library" and d.root.line == 1
    assert _roles(d)[3] == ("symptom", "evidence.exception")


def test_the_frameworks_exception_for_a_root_that_is_not_an_exception_is_a_symptom_wherever_it_stands():
    """A kernel assertion is the root; the RuntimeError that reports it is a symptom even pasted above it.
    A line of the root's family that is not an exception (another wording of the same failure) stays detail."""
    d = diagnose_text("RuntimeError: CUDA error: device-side assert triggered\n\n"
                      "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: "
                      "block: [0,0,0], thread: [725,0,0] Assertion `t >= 0 && t < n_classes` failed\n")
    assert d.family == "device-assert" and d.root.line == 3
    assert _roles(d)[1][0] == "symptom"
    # when the root is itself the exception, an earlier line of its family is detail, not a symptom
    e = diagnose_text("CUDA out of memory\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB "
                      "(GPU 0; 15.78 GiB total capacity; 14.00 GiB already allocated; 1.00 GiB free)\n")
    assert e.family == "oom" and all(c.role != "symptom" for c in e.chain if c.line == 1)


def test_a_bare_code_beside_a_named_failure_of_another_family_is_a_symptom_not_a_competitor():
    d = diagnose_text("RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in\n"
                      "memory space vmem. Used 65.05M of 64.00M vmem. Exceeded vmem capacity by 1.05M.\n")
    assert d.family == "shared-memory-exceeded" and d.root.line == 2, d.signature
    assert _roles(d)[1] == ("symptom", "oom.code.absl-status"), d.chain


def test_a_flood_of_consequence_lines_never_hides_the_failure_between_them():
    """Consequence lines are kept on the side (like progress lines): 50 cancelled requests before a
    failure and 50 after it must not push the failure out of the hints the engine reads."""
    log = ("Request cmpl-%d was cancelled\n" * 50) % tuple(range(50))
    log += "Traceback (most recent call last):\nFooBarError: the widget frobnicated\n"
    log += ("Request cmpl-%d was cancelled\n" * 50) % tuple(range(50, 100))
    d = diagnose_text(log)
    assert d.family != "none" and d.root and "FooBarError" in d.root.text, (d.family, d.root)


def test_a_named_message_of_the_same_family_is_the_root_over_a_bare_code():
    """NCCL's 'unhandled cuda error' is a symptom signature; the same text also carries the result
    code. With no hard root, the named message (the earliest) is the root, not the code's later copy."""
    log = ("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8\n"
           + "step\n" * 3
           + "(pid=909597) RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8\n")
    d = diagnose_text(log)
    assert d.family == "collective-comm" and d.root.line == 1 and ".code." not in d.signature, (d.signature, d.root)
