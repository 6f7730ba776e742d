"""Root at the cause, not the abort (diagnose/rootline.toml, diagnose/rootline.py): unit logs per case."""
import tomllib

import pytest

from diagnose import rootline
from diagnose.engine import diagnose_text

ROWS = tomllib.loads(rootline.TABLE.read_text())["terminator"]


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_every_terminator_takes_its_examples_and_none_of_its_near_misses(row):
    assert row["docs"] and row["match"] and row["no_match"]
    for line in row["match"]:
        assert rootline.terminator(line) == row["id"], line
    for line in row["no_match"]:
        assert rootline.terminator(line) is None, line


def test_cmake_not_found_then_configuring_incomplete_roots_at_the_cmake_error():
    log = ("-- The CUDA compiler identification is unknown\n"
           "CMake Error at CMakeLists.txt:3 (project):\n"
           "  No CMAKE_CUDA_COMPILER could be found.\n"
           "-- Configuring incomplete, errors occurred!\n")
    d = diagnose_text(log)
    assert d.root is not None and d.root.line in (2, 3), (d.root, d.signature)


def test_an_error_count_roots_at_the_first_error_and_lists_itself_as_a_symptom():
    log = ('kernel.cu(12): error: identifier "int_as_float" is undefined\n'
           '      return int_as_float(tmp) - 1.0f;\n'
           "             ^\n"
           "\n"
           'kernel.cu(20): error: expected a ";"\n'
           '2 errors detected in the compilation of "kernel.cu".\n')
    d = diagnose_text(log)
    assert d.family == "compile-error" and d.root.line == 1
    roles = {c.line: c.role for c in d.chain}
    assert roles[1] == "root" and roles[6] == "symptom"


def test_an_abort_after_an_error_message_roots_at_the_message():
    """The signature that decides is the abort's (the family stays its); the root line is the message."""
    log = ("error: unrecognized option --foo for the kernel generator\n"
           "terminate called after throwing an instance of 'c10::DistBackendError'\n")
    d = diagnose_text(log)
    assert d.root.line == 1
    assert [(c.line, c.role) for c in d.chain] == [(1, "root"), (2, "symptom")]


def test_a_traceback_between_ends_the_search_the_exception_stays_the_root():
    """The frames above an exception say how it was raised: their source lines are no cause."""
    log = ('Traceback (most recent call last):\n'
           '  File "train.py", line 3, in <module>\n'
           '    raise SystemExit("error: bad config")\n'
           'SystemExit: error: bad config\n')
    d = diagnose_text(log)
    assert d.root is None or d.root.line == 4


def test_an_error_far_above_is_another_block_not_the_cause():
    log = ("error: optional plugin foo failed to load\n" + "step ok\n" * 30
           + '1 error detected in the compilation of "k.cu".\n')
    d = diagnose_text(log)
    assert d.root is not None and d.root.line == 32


def test_a_root_that_names_its_cause_is_not_moved():
    log = ("error: something unrelated\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    d = diagnose_text(log)
    assert d.root.line == 2


def test_a_root_on_a_tracebacks_raise_line_moves_to_the_exception_it_raised():
    """A pattern that knows the class name matches the source line `raise OutOfResources(...)` first;
    the message is the exception line below it."""
    log = ('Traceback (most recent call last):\n'
           '  File "/site-packages/triton/compiler/compiler.py", line 390, in _init_handles\n'
           '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
           'triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 126978, '
           'Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n')
    d = diagnose_text(log)
    assert d.family == "shared-memory-exceeded" and d.root.line == 4


def test_an_exception_line_under_a_frame_is_not_a_source_line():
    log = ('  File "x.py", line 2, in f\n'
           'cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered\n'
           '  File "y.py", line 9, in g\n'
           'cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered\n')
    assert diagnose_text(log).root.line == 2


UNCLAIMED = tomllib.loads(rootline.TABLE.read_text())["unclaimed"]


@pytest.mark.parametrize("row", UNCLAIMED, ids=[r["id"] for r in UNCLAIMED])
def test_every_unclaimed_exception_takes_its_examples_and_none_of_its_near_misses(row):
    assert row["docs"] and row["match"] and row["no_match"]
    for line in row["match"]:
        assert rootline.unclaimed(line) == row["id"], line
    for line in row["no_match"]:
        assert rootline.unclaimed(line) is None, line


LOWERING = ('Traceback (most recent call last):\n'
            '  File "/venv/lib/python3.10/site-packages/jax/_src/pallas/triton/lowering.py", line 335, in lower_jaxpr_to_triton_ir\n'
            '    outvals = rule(rule_ctx, *invals, **eqn.params)\n'
            '  File "/venv/lib/python3.10/site-packages/triton/common/build.py", line 15, in is_hip\n'
            '    import torch\n')


def test_an_import_failure_under_a_lowering_frame_is_the_missing_module_not_the_compiler():
    d = diagnose_text(LOWERING + "ModuleNotFoundError: No module named 'torch'\n")
    assert d.family == "missing-library" and d.root.line == 6, (d.family, d.signature)
    assert any(n.startswith("a traceback frame did not decide") for n in d.notes)


def test_a_binding_called_with_the_wrong_arguments_under_a_lowering_frame_is_unknown():
    d = diagnose_text(LOWERING + "TypeError: to_proto(): incompatible function arguments. The following argument types are supported:\n")
    assert d.family == "unknown", (d.family, d.signature)


def test_the_compilers_own_exception_under_the_frame_stays_the_frames_family():
    d = diagnose_text(LOWERING + "NotImplementedError: Unimplemented primitive in Pallas GPU lowering: argmax\n")
    assert d.family == "compile-error", (d.family, d.signature)


# -- the root line moved by the log's own text (rootline.toml [[follower]], [[precursor]], [empty]; twins)

MOVES = tomllib.loads(rootline.TABLE.read_text())
PAIRS = [(kind, r) for kind in ("follower", "precursor") for r in MOVES.get(kind, [])]


def _pair_moves(kind: str, row: dict, pair: str) -> bool:
    """Whether the root ROOT of a two-line log with TARGET beside it (after a follower, before a
    precursor) moves to TARGET."""
    root, other = (s.strip() for s in pair.split(" => "))
    lines = [root, other] if kind == "follower" else [other, root]
    n = 1 if kind == "follower" else 2
    moved = rootline.refine(lines, n, lines[n - 1])
    return moved is not None and moved[0] == 3 - n and moved[2] == f"rootline.{row['id']}"


@pytest.mark.parametrize("kind,row", PAIRS, ids=[f"{k}-{r['id']}" for k, r in PAIRS])
def test_every_follower_and_precursor_moves_its_examples_and_none_of_its_near_misses(kind, row):
    assert row["docs"] and row["match"] and row["no_match"] and row["reach"] > 0
    for pair in row["match"]:
        assert _pair_moves(kind, row, pair), pair
    for pair in row["no_match"]:
        assert not _pair_moves(kind, row, pair), pair


def test_the_empty_pattern_takes_its_examples_and_none_of_its_near_misses():
    row = MOVES["empty"]
    assert row["docs"] and row["match"] and row["no_match"]
    for line in row["match"]:
        assert rootline.is_empty(line), line
    for line in row["no_match"]:
        assert not rootline.is_empty(line), line


def test_terminate_roots_at_the_what_line_after_it():
    log = ("terminate called after throwing an instance of 'thrust::system::system_error'\n"
           "  what():  parallel_for failed: out of memory\n")
    d = diagnose_text(log)
    assert d.root is not None and d.root.line == 2, d.root
    roles = {c.line: c.role for c in d.chain}
    assert roles[2] == "root" and roles[1] == "symptom"


def test_a_message_logged_line_by_line_roots_at_its_head_not_its_empty_last_line():
    log = ("ERROR 04-09 21:56:46 [engine.py:82] Memory_Allocation_Failure(EL0004): Failed to allocate memory.\n"
           "ERROR 04-09 21:56:46 [engine.py:82]         Possible Cause: Available memory is insufficient.\n"
           "ERROR 04-09 21:56:46 [engine.py:82]         Call rtMalloc fail, size:3221291008\n"
           "ERROR 04-09 21:56:46 [engine.py:82] \n"
           "INFO 04-09 21:56:46 [worker.py:486] Worker 0: Received shutdown message\n")
    lines = log.split("\n")
    assert rootline.refine(lines, 4, lines[3])[0] == 1


def test_the_same_failure_printed_by_several_ranks_roots_at_the_first_copy():
    lines = ["[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)",
             "[2025-03-09 00:57:15 TP6] Watchdog timeout (self.watchdog_timeout=300)",
             "[2025-03-09 00:57:16 TP0] Watchdog timeout (self.watchdog_timeout=300)",
             "Killed"]
    assert rootline.refine(lines, 3, lines[2]) == (1, lines[0], "rootline.twin")


def test_a_copy_with_the_exception_class_before_it_is_a_twin_a_heading_or_other_words_are_not():
    later = "MemoryError: std::bad_alloc: RMM failure at:/x/pool.hpp:182: Maximum pool size exceeded"
    lines = ["std::bad_alloc: RMM failure at:/x/pool.hpp:182: Maximum pool size exceeded", "", later]
    assert rootline.refine(lines, 3, later)[0] == 1
    title = ["# undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocation", "",
             "ImportError: /x/flash_attn_2_cuda.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocation"]
    assert rootline.refine(title, 3, title[2]) is None
    other = ["RuntimeError: CUDA error: out of memory while allocating the workspace",
             "RuntimeError: CUDA error: an illegal memory access was encountered"]
    assert rootline.refine(other, 2, other[1]) is None


def test_a_warning_copy_before_the_error_is_not_its_twin():
    lines = ["[W CUDAGuardImpl.h:113] Warning: CUDA error: an illegal memory access was encountered",
             "RuntimeError: CUDA error: an illegal memory access was encountered"]
    assert rootline.refine(lines, 2, lines[1]) is None


def test_a_signature_root_moves_its_line_but_keeps_its_family_and_signature():
    """Xid 79 decides hardware-fault; the uncorrected AER error logged before it is the root line."""
    log = ("[74785.660366] pcieport 0000:00:02.0: AER: Corrected error received: id=0010\n"
           "[74889.542031] pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010\n"
           "[74889.542044] pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer\n"
           "[74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.\n")
    plain = diagnose_text(log.split("\n", 3)[3])
    d = diagnose_text(log)
    assert (d.family, d.signature) == (plain.family, plain.signature) == ("hardware-fault", plain.signature)
    assert d.root.line == 2, d.root
    roles = {c.line: c.role for c in d.chain}
    assert roles[2] == "root" and roles[4] == "symptom"


def test_a_pytest_locals_repr_holding_the_exception_is_not_its_report():
    """pytest's long traceback shows each frame's locals: `self = <[AcceleratorError("CUDA error: misaligned
    address ...")] ...>` holds the exception, and the `E   ` line below is its report: the root."""
    from diagnose.engine import diagnose_text

    d = diagnose_text('self = <[AcceleratorError("CUDA error: misaligned address\\nSearch for `cudaErrorMisalignedAddress\' in") raised in repr()] Tensor object at 0x7f>\n'
                      "\n    def get_summarized_data(self):\n>       return torch.cat(\n"
                      "E       torch.AcceleratorError: CUDA error: misaligned address\n")
    assert d.family == "illegal-memory-access" and d.root.line == 5
