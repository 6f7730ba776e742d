"""The wording fallback: a low-confidence family for failures no signature explains."""
from diagnose.clusters import cluster
from diagnose.engine import confidence_of, decide, diagnose_text
from signatures.fallback import guess
from signatures.loader import load_all
from signatures.matcher import Matcher


def test_guess_scores_words_and_prefers_specific_families():
    assert guess([("RuntimeError: kernel ran out of GPU memory while allocating", 2.0)]).family == "oom"
    assert guess([("ptxas error: entry uses too much shared data", 2.0)]).family == "shared-memory-exceeded"
    g = guess([("RuntimeError: tensors could not be broadcast together with shapes (3,) (4,)", 2.0)])
    assert g.family == "shape-stride-mismatch" and "shapes" in g.words
    assert guess([("KeyError: 'model.layers.3'", 2.0)]) is None


def test_unexplained_failure_gets_a_guess_not_a_claim():
    m = Matcher([s for s in load_all() if s.family == "oom"])      # no signature for this wording
    log = (b"Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
           b"RuntimeError: NCCL communicator was aborted on rank 3 (collective all_reduce)\n")
    d = decide(m.scan_bytes(log), "<t>")
    assert d.family == "collective-comm" and d.signature == "fallback.collective-comm"
    assert d.confidence == confidence_of("fallback") < confidence_of("root") and "guess" in d.explanation and d.root.line == 3
    # still listed as a log a signature should be written for
    assert cluster([d])[0].count == 1


def test_no_failure_evidence_no_guess():
    m = Matcher([s for s in load_all() if s.family == "oom"])
    d = decide(m.scan_bytes(b"all_reduce bandwidth 180 GB/s, shapes (4096, 4096), nan count 0\n"), "<t>")
    assert d.family == "none"


def test_gpu_families_need_a_gpu_context():
    # numpy's own errors: shape words with no tensor/kernel/device word anywhere near are no GPU failure
    numpy = ("ValueError: setting an array element with a sequence. The requested array has an "
             "inhomogeneous shape after 1 dimensions. The detected shape was (722,) + inhomogeneous part.", 2.0)
    assert guess([numpy]) is None
    assert guess([("ValueError: operands could not be broadcast together with shapes (3,) (4,)", 2.0)]) is None
    assert guess([("TypeError: Cannot cast array data from dtype('float64') to dtype('int64')", 2.0)]) is None
    # the same words with a GPU context on the line, or in a frame of the traceback (read, not scored)
    assert guess([numpy], ['  File "/x/site-packages/torch/nn/modules/module.py", line 1, in forward']).family \
        == "shape-stride-mismatch"
    assert guess([("TypeError: Cannot cast tensor data from dtype('float64') to dtype('int64')", 2.0)]).family \
        == "dtype-mismatch"
    # numerics need none: a tolerance report is numerical-mismatch whatever computed the numbers
    assert guess([("1 bad tolerances (of 8572360), observed nan", 2.0)]).family == "numerical-mismatch"


def test_cpu_core_number_is_not_a_device():
    sigsegv = ("*** SIGSEGV received at time=1709021359 on cpu 44 ***", 2.0)
    frame = '  File "/x/site-packages/torch/cuda/graphs.py", line 77 in capture_begin'
    assert guess([sigsegv], [frame]) is None
    assert guess([("RuntimeError: expected the input on the CPU, got cuda tensor", 2.0)]).family == "device-placement"
    assert guess([("RuntimeError: weight is on cpu", 2.0)], [frame]).family == "device-placement"


def test_timed_out_beats_the_collective_words():
    # the taxonomy: collective-comm is a failure "not a timeout"; a collective that did not finish is timeout-hang
    g = guess([("timed out initializing process group in store based barrier on rank", 2.0)])
    assert g.family == "timeout-hang" and g.origin == "runtime-assumption"
    assert guess([("RuntimeError: Gloo all_reduce watchdog: collective deadline exceeded", 2.0)]).family == "timeout-hang"
    # no time word on the root line: the collective words keep it
    assert guess([("RuntimeError: process group rendezvous failed on rank 3", 2.0)]).family == "collective-comm"


def test_a_line_counts_once_and_a_tie_goes_to_the_root_lines_family():
    # two stream timeouts elsewhere in the log, each with two timeout words, against a root
    # line that names a missing module: each line is evidence once, so 2.0 against 2.0, and the
    # root's own family wins the tie
    root = ("ModuleNotFoundError: No module named 'flash_attn'", 2.0)
    other = ("RuntimeError: the kernel timed out: stream wait timeout after 30 s", 1.0)
    g = guess([root, other, other])
    assert g.family == "missing-library" and g.score == 2.0
    # a third timeout line outweighs the root: the guess still follows the weight of evidence
    assert guess([root, other, other, other]).family == "timeout-hang"
    # one line with two synonyms scores its weight once
    assert guess([other]).score == 1.0
    # a web request that timed out is no GPU timeout (the timeout-hang row's veto)
    http = ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='hub', port=443): "
            "Read timed out. (read timeout=10)", 1.0)
    assert guess([root, http, http, http]).family == "missing-library"
    assert guess([http]) is None


def test_a_quoted_attribute_name_is_no_shape_word():
    # Python's missing-attribute error quotes the name: not a shape that disagrees
    ctx = ("  File \"train.py\", line 3, in step: loss = model(x.cuda())", 1.0)
    assert guess([("AttributeError: 'NoneType' object has no attribute 'shape'", 2.0), ctx]) is None
    assert guess([("RuntimeError: shape '[4, 8]' is invalid for input of size 30 on a cuda tensor", 2.0)]).family \
        == "shape-stride-mismatch"


def test_a_kernel_compiler_rejecting_a_kernel_is_compile_error_whatever_its_types():
    """The taxonomy's tie-break: GPUCompiler's InvalidIRError names Float32 operands, but a compiler raised it."""
    line = ("ERROR: LoadError: InvalidIRError: compiling kernel my_kernel!(CuDeviceMatrix{Float32, 1}, "
            "CuDeviceMatrix{Int64, 1}) resulted in invalid LLVM IR")
    assert guess([(line, 2.0)]).family == "compile-error"
    # the same types in a launcher's rejection, with no compiler word, stay the dtype guess
    assert guess([("ArgumentError: kernel got CuDeviceMatrix{Float32, 1} where Int64 dtype was expected", 2.0)]).family == "dtype-mismatch"


def test_a_host_allocators_failure_is_no_gpu_oom():
    # the oom row's veto: MKL's mkl_malloc, a bare std::bad_alloc, "CPU memory" are the host running out
    from signatures.fallback import context_allows
    for line in ["RuntimeError: mkl_malloc: failed to allocate memory",
                 "terminate called after throwing an instance of 'std::bad_alloc' failed to allocate",
                 "RuntimeError: not enough CPU memory: you tried to allocate 4 GB"]:
        g = guess([(line, 1.0)])
        assert g is None or g.family != "oom", line
        assert not context_allows("oom", [line])
    # ... unless the same line names the device side: thrust/RMM/cuFFT wrap device failures in bad_alloc
    for line in ["std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
                 "MemoryError: std::bad_alloc: RMM failure at: pool_memory_resource.hpp:182: Maximum pool size exceeded failed to allocate",
                 "CUFFTError(code 2, cuFFT failed to allocate GPU or CPU memory)"]:
        assert guess([(line, 1.0)]).family == "oom", line
        assert context_allows("oom", [line])


def test_mlir_dialect_type_syntax_is_a_compilers_word():
    # only a compiler's diagnostic prints an MLIR dialect type ('!cute.shape<...>', '!tt.ptr<f32>')
    g = guess([("failed to partition '!cute.shape<\"(144,96)\">' with tiled_mma", 1.0)])
    assert g is not None and g.family == "compile-error"
    assert guess([("RuntimeError: !important value<3 rejected", 1.0)]) is None


def test_the_tables_examples_hold():
    """Every row's `veto_match` / `veto_no_match` lines and the [gpu_stack] `match` / `no_match` names."""
    import tomllib

    from signatures.fallback import TABLE, _load

    table, data = _load(), tomllib.loads(TABLE.read_text(encoding="utf-8"))
    for row in data["family"]:
        veto = table.vetoes.get(row["name"])
        for line in row.get("veto_match", []):
            assert veto is not None and veto.takes(line), (row["name"], line)
        for line in row.get("veto_no_match", []):
            assert veto is None or not veto.takes(line), (row["name"], line)
    for name in data["gpu_stack"]["match"]:
        assert table.gpu_stack.search(name), name
    for name in data["gpu_stack"]["no_match"]:
        assert not table.gpu_stack.search(name), name


def test_a_missing_thing_outside_the_gpu_stack_is_no_missing_library():
    """'No module named', 'ImportError', 'not installed', 'No such file', 'not found' count for
    missing-library only when what is missing is on the [gpu_stack] list (g41-017, g41-014, g42-006)."""
    from signatures.fallback import context_allows

    frame = '  File "/x/site-packages/torch/utils/tensorboard/__init__.py", line 1, in <module>'
    for line in ["ModuleNotFoundError: No module named 'tensorboard'",         # a torch frame is no matter
                 "ImportError: numpy.core.multiarray failed to import",
                 "RuntimeError: ffmpeg is not installed on this system",
                 "ImportError: libGL.so.1: cannot open shared object file: No such file or directory"]:
        g = guess([(line, 2.0)], [frame])
        assert g is None or g.family != "missing-library", line
        assert not context_allows("missing-library", [line], [frame]), line
    # the word model's guess is held by the same rule (it asks context_allows of the root line)
    for root in ["onnxruntime.capi.onnxruntime_pybind11_state.NoSuchFile: [ONNXRuntimeError] : 3 : NO_SUCHFILE : "
                 "Load model from model.onnx failed:Load model model.onnx failed. File doesn't exist",
                 "huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to locate "
                 "the file on the Hub and we cannot find the requested files in the local cache."]:
        assert not context_allows("missing-library", [root])
    # the GPU stack missing stays missing-library: the module, the library, the extension, the tool
    for line in ["ModuleNotFoundError: No module named 'flash_attn'",
                 "ModuleNotFoundError: No module named 'mmcv._ext'",
                 "ImportError: DLL load failed while importing _C: The specified module could not be found.",
                 "OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
                 "FileNotFoundError: [Errno 2] No such file or directory: 'nvcc'",
                 "WARNING: CUDA extension not installed."]:
        assert guess([(line, 2.0)]).family == "missing-library", line
        assert context_allows("missing-library", [line]), line


def test_a_missing_python_package_ends_unknown():
    m = Matcher([s for s in load_all() if s.family == "missing-library"])
    log = (b"Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
           b"    from torch.utils.tensorboard import SummaryWriter\n"
           b"  File \"/x/site-packages/torch/utils/tensorboard/__init__.py\", line 1, in <module>\n"
           b"    import tensorboard\nModuleNotFoundError: No module named 'tensorboard'\n")
    d = decide(m.scan_bytes(log), "<t>")
    assert d.family == "unknown" and d.root.line == 6


def test_a_self_checking_tests_verdict_on_its_values_guesses_numerical_mismatch():
    """A test's own comparison, in words no signature has ("result mismatch ... expected 3.000000, got
    2.500000", "verification failed: 12 mismatches"), is a numerical finding; a shape's expected/got in
    integers is not (no float on either side)."""
    d = diagnose_text("running kernel\nERROR: verification failed: 12 mismatches\n")
    assert d.family == "numerical-mismatch" and d.signature == "fallback.numerical-mismatch", d.signature
    # expected/got with decimals has a signature of its own now (numerical-mismatch.expected-found-values)
    d = diagnose_text("running kernel\nError: result mismatch at index 12: expected 3.000000, got 2.500000\n")
    assert d.family == "numerical-mismatch" and d.signature == "numerical-mismatch.expected-found-values", d.signature
    d = diagnose_text("RuntimeError: expected 3, got 2 dimensions for the input tensor\n")
    assert d.family != "numerical-mismatch"


def test_a_module_of_the_programs_own_is_no_missing_library():
    """`veto_own_package`: what is missing is a package of the program's own frames (outside
    site-packages): its tree is incomplete or run from the wrong directory, whatever GPU word its name
    holds; an installed package's frame (site-packages) is no such evidence."""
    from signatures.fallback import context_allows, own_packages

    own = ['  File "/home/u/proj/train.py", line 3, in <module>', '    from proj.gpu_utils import x']
    assert own_packages(own) == {"home", "u", "proj", "train"}
    for line in ["ModuleNotFoundError: No module named 'proj.gpu_utils'",
                 "ImportError: cannot import name 'fused' from 'proj.cuda_ops' (/home/u/proj/cuda_ops.py)"]:
        g = guess([(line, 2.0)], own)
        assert g is None or g.family != "missing-library", line
        assert not context_allows("missing-library", [line], own), line
        # without the program's frame the name alone decides, as before
        assert context_allows("missing-library", [line]), line
    lib = ['  File "/usr/lib/python3/site-packages/proj/__init__.py", line 3, in <module>']
    assert own_packages(lib) == frozenset()
    assert guess([("ModuleNotFoundError: No module named 'proj.gpu_utils'", 2.0)], lib).family == "missing-library"
    # a GPU package missing outright stays missing-library beside the program's own frames
    assert guess([("ModuleNotFoundError: No module named 'torch'", 2.0)], own).family == "missing-library"


def test_launch_and_memory_access_words_need_a_gpu_runtime_beside_them():
    """`needs_context = "runtime"`: launch-config and illegal-memory-access are a GPU runtime's events;
    a framework's name nearby (a torch frame, 'tensor') is not enough, a runtime's (CUDA, a kernel) is."""
    from signatures.fallback import context_allows

    torch_frame = '  File "/x/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl'
    for family, line in [("launch-config", "ValueError: grid size must divide the tensor's length"),
                         ("illegal-memory-access", "ValueError: invalid address 'http//x' for the tensor store")]:
        g = guess([(line, 2.0)], [torch_frame])
        assert g is None or g.family != family, line
        assert not context_allows(family, [line], [torch_frame]), line
        assert context_allows(family, [line + " (CUDA kernel)"], [torch_frame]), line
    assert guess([("RuntimeError: CUDA error: misaligned address", 2.0)]).family == "illegal-memory-access"


def test_a_host_assertion_in_a_cu_file_is_no_device_assert():
    # glibc's assert format in host code of a .cu file names no block/thread: no device code's mark
    from signatures.fallback import context_allows

    host = "train_gpt2fp32cu: train_gpt2_fp32.cu:1815: void tokenizer_init(Tokenizer*, const char*): Assertion `header[1] == 1' failed."
    assert not context_allows("device-assert", [host])
    dev = "unknown:0: unknown: block: [0,0,0], thread: [213,0,0] Assertion `index out of bounds: 0 <= tmp4 < 32000` failed."
    assert context_allows("device-assert", [dev])
    assert guess([(dev, 2.0)]).family == "device-assert"


def test_a_root_raised_as_advice_gets_no_guess():
    """[advice]: performance advice or a deprecation made an error predicts no family (g31-028)."""
    import tomllib

    from signatures.fallback import TABLE, advice_root

    data = tomllib.loads(TABLE.read_text(encoding="utf-8"))["advice"]
    for line in data["match"]:
        assert advice_root(line) and guess([(line, 2.0)]) is None, line
    for line in data["no_match"]:
        assert not advice_root(line), line
