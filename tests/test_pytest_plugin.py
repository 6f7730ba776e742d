"""The pytest plugin, run on real failing test files with pytester."""
import importlib.util

import numpy  # noqa: F401  imported here so pytester's module snapshot keeps it (numpy cannot load twice)
import pytest

pytest_plugins = ["pytester"]

HAS_TORCH = importlib.util.find_spec("torch") is not None
# pytest-textual-snapshot's session hooks remove a global temp dir: an in-process inner session
# must not load it, or the outer session fails at its end.
ISOLATE = ("-p", "no:textual-snapshot", "-p", "no:cacheprovider")


def run(pytester, *args):
    return pytester.runpytest(*ISOLATE, *args)

FAILING = '''
import numpy as np
from numpy.testing import assert_allclose


def test_tail_tile_unwritten():
    ref = np.arange(1, 301, dtype=np.float64).reshape(3, 100)
    out = ref.copy()
    out[:, 96:] = 0.0                                  # the kernel never wrote the last partial tile
    assert_allclose(out, ref, rtol=1e-6)


def test_shared_memory():
    raise RuntimeError("out of resource: shared memory, Required: 131072, Hardware limit: 101376. "
                       "Reducing block sizes or `num_stages` may help.")


def test_plain_assert():
    assert 1 + 1 == 3


def test_passes():
    assert_allclose(np.ones(3), np.ones(3))
'''


def test_off_by_default(pytester):
    pytester.makepyfile(FAILING)
    result = run(pytester)
    result.assert_outcomes(failed=3, passed=1)
    assert "Captured diagnose" not in result.stdout.str()


def test_enabled_with_p_option(pytester):
    pytester.makepyfile(FAILING)
    result = run(pytester, "-p", "diagnose")
    result.assert_outcomes(failed=3, passed=1)
    # signature diagnosis: family, root, fix with the captured sizes
    result.stdout.fnmatch_lines([
        "*Captured diagnose call*",
        "family: shared-memory-exceeded (origin resource-limit*",
        "root: RuntimeError: out of resource: shared memory, Required: 131072*",
        "fix: Bring shared memory from 128 KiB under 99 KiB: * 1 halving(s) of BLOCK_K or num_stages*",
    ])
    # numerics reading of the compared arrays: the tail tile, with the deciding numbers
    result.stdout.fnmatch_lines([
        "*numerics verdict: likely defect: 12 of 300 elements (4.000%) exceed the test's rtol=1e-06, atol=0*",
        "*tail-tile (kernel-logic): errors only in the last partial tile along axis 1: indices 96..99 of 100*",
    ])


def test_enabled_with_ini(pytester):
    pytester.makeini("[pytest]\ndiagnose = true\n")
    pytester.makepyfile(FAILING)
    rec = pytester.inline_run(*ISOLATE)
    calls = {r.nodeid.split("::")[-1]: r for r in rec.getreports("pytest_runtest_logreport") if r.when == "call"}
    with_section = {name for name, r in calls.items() if any("diagnose" in title for title, _ in r.sections)}
    # a plain assert that no signature explains and that compared no arrays gets nothing
    assert with_section == {"test_tail_tile_unwritten", "test_shared_memory"}
    props = dict(calls["test_shared_memory"].user_properties)["diagnose"]
    assert (props["family"], props["origin"]) == ("shared-memory-exceeded", "resource-limit")
    props = dict(calls["test_tail_tile_unwritten"].user_properties)["diagnose"]
    assert props["numerics"]["findings"] == ["tail-tile", "zeros"]


def test_comparison_functions_restored_after_each_test(pytester):
    pytester.makepyfile('''
import numpy.testing
from numpy.testing import assert_allclose
ORIGINAL = [numpy.testing.assert_allclose]     # in a list: the plugin swaps module-level names only

def test_wrapped_during_test():
    assert numpy.testing.assert_allclose is not ORIGINAL[0]
    assert assert_allclose is not ORIGINAL[0]
    assert assert_allclose.__wrapped__ is ORIGINAL[0]

def test_restored_afterwards():
    pass

def test_restored_between_tests_too():
    import diagnose.pytest_plugin  # the wrapper is re-installed for this test: same original underneath
    assert assert_allclose.__wrapped__ is ORIGINAL[0]

def teardown_module():
    assert numpy.testing.assert_allclose is ORIGINAL[0]
    assert assert_allclose is ORIGINAL[0]
''')
    result = run(pytester, "-p", "diagnose")
    result.assert_outcomes(passed=3)


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed: assert_close reading not exercised")
def test_assert_close_gets_numerics_reading(pytester):
    pytester.makepyfile('''
import torch
from torch.testing import assert_close


def test_nan_poisoned_block():
    torch.manual_seed(0)
    a = torch.randn(128, 64)
    b = torch.randn(64, 128)
    ref = a @ b
    out = torch.full((128, 128), float("nan"))
    out[:96] = ref[:96]
    out[96:, :96] = ref[96:, :96]                      # the last 32x32 tile never written
    assert_close(out, ref)
''')
    import torch  # noqa: F401  loaded once, outside the inner session's module snapshot
    result = run(pytester, "-p", "diagnose")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*numerics verdict: likely defect: 1024 of 16384 elements*exceed assert_close's default rtol=1.3e-06, atol=1e-05*",
        "*uninitialised (kernel-logic): 1024 NaNs fill tile-shaped regions*",
        "*whole-blocks (kernel-logic): errors fill whole 32x32 blocks: 1 of 16 blocks*",
    ])


def test_message_only_reading_when_tensors_unavailable():
    """Without the tensors (the comparison ran elsewhere) the message text still gives a reading."""
    from diagnose.pytest_plugin import reading_for

    np = pytest.importorskip("numpy")
    try:
        np.testing.assert_allclose(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 5.0]), rtol=1e-9)
    except AssertionError as e:
        text, props = reading_for(e, None)
    assert props["mismatch"]["mismatched_count"] == 1 and props["mismatch"]["total_count"] == 4
    assert "1 of 4 elements (25.000%) mismatch" in text


def test_lazily_loaded_numpy_testing_is_wrapped_too(pytester):
    """numpy 2 loads numpy.testing on first use, inside the test: the plugin must still see the arrays.
    A subprocess, because the outer session has long loaded numpy.testing."""
    pytester.makepyfile('''
import numpy as np


def test_last_row_unwritten():
    ref = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = ref.copy()
    out[7, :] = 0
    np.testing.assert_allclose(out, ref)
''')
    result = pytester.runpytest_subprocess(*ISOLATE, "-p", "diagnose")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*numerics verdict: likely defect*", "*whole-rows (kernel-logic)*"])
