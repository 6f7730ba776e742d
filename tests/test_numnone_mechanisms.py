"""Mechanism classes from rounds g28/g29 (numbers said wrong in a harness's own words, work-group memory
over the limit, a compiled extension missing at its call, a compiler note quoting source frames), each
on small logs of other frameworks' wording than the round's, both ways."""
import pytest

from diagnose.engine import diagnose_text


@pytest.mark.parametrize("log", [
    "checking dq ...\ndq: NaNs!\ndk: OK\n",
    "compare with reference\noutput: contains NaN\n",
    "kernel vs eager: allclose False\n",
    "fused vs unfused: results all close: False\n",
    "max abs diff 0.37 > tolerance 1e-3\n",
    "layer 3 max_diff=0.125 exceeds tolerance 0.01\n",
])
def test_numbers_said_wrong_in_a_harness_own_words(log):
    d = diagnose_text(log)
    assert d.family == "numerical-mismatch", (log, d.family, d.signature)


@pytest.mark.parametrize("log", [
    "dq: OK\ndk: OK\ndv: OK\n",
    "max abs diff 1.2e-06 < tolerance 1e-05\n",
    "max diff: 3.1e-07 (within tolerance)\n",
    "fused vs unfused: results all close: True\n",
])
def test_a_comparison_inside_the_tolerance_is_not_a_failure(log):
    d = diagnose_text(log)
    assert d.family == "none", (log, d.family, d.signature)


def test_work_group_memory_over_the_limit_names_both_numbers():
    d = diagnose_text("error: local memory (98304) exceeds limit (65536) in function 'reduce_kernel'\n"
                      "1 error generated.\n")
    assert d.family == "shared-memory-exceeded"
    assert d.facts.get("required_bytes") == 98304 and d.facts.get("limit_bytes") == 65536, d.facts
    d = diagnose_text("clBuildProgram: Shared memory size of 98304 bytes exceeds the device limit of 65536\n")
    assert d.family == "shared-memory-exceeded", (d.family, d.signature)


def test_a_stack_frame_over_its_limit_stays_a_warning():
    d = diagnose_text("warning: stack frame size (2216) exceeds limit (1024) in function 'k' [-Wframe-larger-than]\n"
                      "[100%] Built target kernels\n")
    assert d.family != "shared-memory-exceeded", (d.family, d.signature)


@pytest.mark.parametrize("name", ["fused_adam_cuda", "causal_conv1d_cuda", "amp_C", "deform_conv_ext"])
def test_a_compiled_extension_missing_at_its_call(name):
    d = diagnose_text('  File "/x/model.py", line 9, in forward\n'
                      f"    out = {name}.fwd(x)\n"
                      f"NameError: name '{name}' is not defined\n")
    assert d.family == "missing-library" and d.facts.get("module") == name, (d.family, d.facts)


@pytest.mark.parametrize("name", ["use_cuda", "cuda", "my_kernel"])
def test_an_undefined_ordinary_name_is_not_a_missing_extension(name):
    d = diagnose_text(f"NameError: name '{name}' is not defined\n")
    assert d.family != "missing-library", (name, d.family)


def test_frames_quoted_by_a_compiler_note_are_not_a_traceback():
    d = diagnose_text("skipping cudagraphs due to mutated inputs (1 instances). Found from : \n"
                      '   File "/x/train.py", line 3, in step\n'
                      "    buf.add_(1)\n"
                      "Epoch 1/3 done\n")
    assert d.family == "none", (d.family, d.root)


def test_a_compiler_note_excuses_nothing_before_it():
    d = diagnose_text("Traceback (most recent call last):\n"
                      '  File "/x/train.py", line 3, in step\n'
                      "ValueError: bad batch\n"
                      "skipping cudagraphs due to cpu device (arg0_1). Found from : \n")
    assert d.family == "unknown", (d.family, d.root)
