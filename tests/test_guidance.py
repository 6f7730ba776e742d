"""Guidance for uncertain diagnoses: the right questions, in a sensible order, citing the log."""
from diagnose.guidance import questions, uncertain
from diagnose.model import Diagnosis, Line


def asks(d, findings=None):
    return [q.ask for q in questions(d, findings)]


def test_only_uncertain_diagnoses_get_guidance():
    assert uncertain(Diagnosis(path="x", family="unknown", confidence=0.5))
    assert uncertain(Diagnosis(path="x", family="oom", confidence=0.55))
    assert not uncertain(Diagnosis(path="x", family="oom", confidence=0.85))
    assert not uncertain(Diagnosis(path="x", family="none", confidence=0.0))


def test_cuda_error_with_a_shape_asks_launch_blocking_then_sanitizer_then_block_multiple():
    d = Diagnosis(path="x", family="unknown", confidence=0.5,
                  root=Line(12, "RuntimeError: CUDA error: an illegal memory access was encountered"),
                  evidence=[Line(9, "x.shape = torch.Size([1000, 257])")])
    qs = questions(d)
    order = [q.ask for q in qs]
    blocking = next(i for i, a in enumerate(order) if "CUDA_LAUNCH_BLOCKING" in a)
    sanitizer = next(i for i, a in enumerate(order) if "out of bounds" in a)
    shape = next(i for i, a in enumerate(order) if "multiple of the kernel's block" in a)
    assert blocking < sanitizer < shape
    assert qs[blocking].command.startswith("CUDA_LAUNCH_BLOCKING=1") and qs[blocking].line == 12
    assert "line 9" in qs[shape].why


def test_no_kernel_image_asks_about_the_arch_first():
    d = Diagnosis(path="x", family="unknown", confidence=0.5,
                  root=Line(3, "CUDA error: no kernel image is available for execution on the device"))
    assert asks(d)[0] == "Is the device's architecture in the build?"


def test_env_findings_and_unreadable_input_come_first():
    d = Diagnosis(path="x", family="unknown", error="gzip: truncated", confidence=0.3,
                  root=Line(3, "Segmentation fault (core dumped)"))
    a = asks(d, [{"severity": "error", "message": "driver 470 older than CUDA 12 runtime", "fix": "upgrade"}])
    assert a[0] == "Is the log complete?"
    assert "driver 470" in a[1]
    assert "Where did the process die?" in a


def test_nothing_recognisable_still_gives_ordered_generic_questions():
    d = Diagnosis(path="x", family="unknown", confidence=0.5, root=Line(40, "Error: exit 3"))
    a = asks(d)
    assert a[0] == "What is the first error in the log, not the last?"
    assert a[-1] == "Should this failure have a signature?"
    assert "change" not in " ".join(a)
