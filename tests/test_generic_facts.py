"""Generic facts (signatures/facts.toml): each entry's examples give their facts, near misses none."""
import pytest
import re2

from signatures.generic_facts import extract, extract_log, load

RULES = load()


@pytest.mark.parametrize("rule", RULES, ids=[r.pattern[:50] for r in RULES])
def test_generic_fact_examples(rule):
    for ex in rule.match:
        got = extract_log([ex["line"]]) if rule.scope == "log" else extract([ex["line"]])
        for k, v in ex["facts"].items():
            assert got.get(k) == v, f"{ex['line']!r}: {k} = {got.get(k)!r}, want {v!r} (got {got})"
    for line in rule.no_match:
        assert not re2.search(rule.pattern, line), f"{rule.pattern!r} must not match {line!r}"


def test_a_fact_a_signature_captured_is_not_repeated():
    got = extract(["Tried to allocate 2.00 GiB"], known={"requested_bytes": 2147483648})
    assert got == {}


def test_twins_are_numbered_and_typed():
    got = extract(["Shapes are [38,38] and [19,38] and [1,2] and [3,4]"])
    assert got == {"shape": [38, 38], "shape_2": [19, 38], "shape_3": [1, 2]}


# -- the mechanisms, on inputs written here -------------------------------------------------------

from signatures.generic_facts import context, demangle, fact_texts, source_location  # noqa: E402
from signatures.facts import render  # noqa: E402


def test_the_root_continued_on_the_next_lines_gives_its_facts():
    lines = ["start", "Error: kernel '...Fwd...' launch shared memory exceeds current GPU",
             "arch sm_89 allowed. Allocated: 131072 bytes. Max: 101376 bytes.", "",
             "Traceback (most recent call last):", "RuntimeError: Allocated: 9 bytes"]
    after = context(lines, 2)
    assert after[0].startswith("arch sm_89") and not any("9 bytes" in t for t in after)   # stops at a new traceback
    got = extract(after)
    assert got["requested_bytes"] == 131072 and got["limit_bytes"] == 101376 and got["arch"] == "8.9"


def test_a_sanitizer_report_gives_kernel_address_and_source_from_its_block():
    lines = ["========= Invalid __global__ write of size 4 bytes",
             "=========     at my_ns::scatter_kernel(const float *, int)+0x8b0 in /src/app/scatter.cu:41",
             "=========     by thread (0,0,0) in block (278,0,0)",
             "=========     Address 0x7fe71d800958 is out of bounds"]
    got = extract(context(lines, 1))
    assert got["kernel"] == "my_ns::scatter_kernel" and got["address"] == "0x7fe71d800958"
    assert got["file_line"] == "/src/app/scatter.cu:41"


def test_no_fact_spans_two_lines():
    # "Required:" ends one line and a number starts the next: no requested size
    assert "requested_bytes" not in extract(["out of resource: Required:", "98304 steps done"])


def test_source_is_the_programs_own_frame_and_raised_at_the_package_frame():
    lines = ['Traceback (most recent call last):',
             '  File "/home/u/proj/train.py", line 12, in <module>',
             '  File "/home/u/proj/model.py", line 88, in forward',
             '  File "/usr/lib/python3.10/site-packages/torch/nn/functional.py", line 2210, in linear',
             'RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x6)']
    assert source_location(lines, 5) == {"source": "/home/u/proj/model.py:88", "source_function": "forward",
                                         "raised_at": "/usr/lib/python3.10/site-packages/torch/nn/functional.py:2210"}
    only_library = [lines[0], lines[3], lines[4]]
    assert source_location(only_library, 3) == {"source": "/usr/lib/python3.10/site-packages/torch/nn/functional.py:2210",
                                                "source_function": "linear"}
    temp = ['  File "/tmp/torchinductor_u/ab/cab.py", line 3, in call', lines[4]]
    assert source_location(temp, 2) == {}


def test_a_julia_stack_trace_gives_the_innermost_frame_outside_base():
    lines = ["ERROR: Failed to find groupsize that satisfies Shared Memory constraint.", "Stacktrace:",
             " [1] error(s::String)", "   @ Base ./error.jl:35",
             " [2] #groupsize#8", "   @ ~/.julia/packages/NNop/cRsoL/src/attention.jl:186 [inlined]",
             " [3] top-level scope", "   @ REPL[1]:1"]
    assert source_location(lines, 1) == {"source": "~/.julia/packages/NNop/cRsoL/src/attention.jl:186"}


def test_mangled_names_are_read():
    assert demangle("_Z10add_kernelPfS_i") == "add_kernel"
    assert demangle("_ZN3c105ErrorC1ENS_14SourceLocationERKSs") == "c10::Error::Error"
    assert demangle("_ZN4dmlc15LogMessageFatalD1Ev") == "dmlc::LogMessageFatal::~LogMessageFatal"
    assert demangle("_Z15flash_attn_tileILi128EEvPKc") == "flash_attn_tile"
    assert demangle("add_kernel") is None and demangle("_Z99short") is None


def test_whole_log_rules_read_only_for_their_families():
    lines = ["nvcc --cubin -arch sm_87 kernel.cu", "kernel.cu(5): error: incomplete type is not allowed"]
    assert extract_log(lines, {}, 2, "compile-error") == {"arch": "8.7"}
    assert extract_log(lines, {}, 2, "oom") == {}
    assert extract_log(lines, {"arch": "9.0"}, 2, "compile-error") == {}     # a failure line's fact wins


def test_sizes_are_shown_as_the_log_wrote_them():
    facts = {"requested_bytes": 2426656522, "limit_bytes": 101376, "total_bytes": 23514945946, "free_bytes": 5}
    texts = fact_texts(facts, ["Tried to allocate 2.26 GiB; Max: 101376 bytes. Used 21.90G"])
    assert texts == {"requested_bytes": "2.26 GiB", "limit_bytes": "101376 bytes", "total_bytes": "21.90G"}
    assert render("requested_bytes", 2426656522, texts["requested_bytes"]) == "2.26 GiB"
    assert render("total_bytes", 23514945946, "21.90G") == "21.90G"
    assert render("requested_bytes", 98304, "98304") == "98304 bytes"
    assert render("free_bytes", 5) == "5 B"                              # the log never wrote it
    assert render("requested_bytes", 2426656522, "7 MiB") == "2.26 GiB"   # a text that is not this size is ignored


def test_bytes_stay_in_the_json_facts_and_the_text_beside_them(tmp_path):
    from diagnose.engine import diagnose_file

    log = tmp_path / "oom.log"
    log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.26 GiB. GPU 0 has a total "
                   "capacity of 23.69 GiB of which 1.20 GiB is free.\n")
    d = diagnose_file(log).to_json()
    assert d["facts"]["requested_bytes"] == 2426656522
    assert d["fact_text"]["requested_bytes"] == "2.26 GiB"
    assert "2426656522" not in d["fix"] and "(2.26 GiB)" not in d["fix"]


def test_no_false_facts_on_near_misses():
    got = extract(["ptxas info    : Used 96 registers, 64000 bytes smem",
                   "Estimated 268.96MB exceeds 67.11MB vmem capacity.", " def forward(self, input):",
                   "[C]: in function 'error'"])
    assert "requested_bytes" not in got and got.get("limit") is None and "kernel" not in got


def test_a_byte_count_the_log_wrote_keeps_its_readable_size_beside_it():
    assert render("requested_bytes", 68852648264, "68852648264 bytes") == "68852648264 bytes (64.12 GiB)"
    assert render("limit_bytes", 101376, "101376 bytes") == "101376 bytes"


def test_the_set_gate_keeps_every_rule_that_matches():
    """extract runs only the rules the re2 Set names for the joined lines: the Set names every rule
    whose own examples match, and extract gives the same facts as every rule run on every line."""
    from signatures import generic_facts as g

    rules = [r for r in g.load() if r.scope == "line"]
    lines = [ex["line"] for r in rules for ex in r.match] + [line for r in rules for line in r.no_match]
    compiled = g._compiled("line")
    for rule, rx in zip(rules, compiled):
        for line in lines:
            if rx.search(line) is not None:
                assert rx in g._candidates("line", line), (rule.pattern, line)
    gated = [g.extract([line]) for line in lines]
    saved = g._candidates
    try:
        g._candidates = lambda scope, text: g._compiled(scope)        # no gate: every rule
        assert [g.extract([line]) for line in lines] == gated
    finally:
        g._candidates = saved


# -- the readings added for rounds g24-g27 (each a form, not a wording) ------------------------------

from signatures.generic_facts import extract_new, launch_site, lead  # noqa: E402


def test_a_header_line_the_root_continues_gives_its_facts():
    lines = ['note: "[CUDA ERROR] at file train.cu:1410:', 'too many resources requested for launch"']
    assert lead(lines, 2) == ['note: "[CUDA ERROR] at file train.cu:1410:']
    assert extract(lead(lines, 2))["file_line"] == "train.cu:1410"
    arrow = ["cudaGetDeviceCount returned 35", "-> CUDA driver version is insufficient for CUDA runtime version"]
    assert extract(lead(arrow, 2))["code"] == 35
    located = ["checkMsg() CUDA error: LowPass() execution failed", " in file <sift.cu>, line 416 : invalid configuration argument."]
    assert extract(lead(located, 2))["kernel"] == "LowPass"
    # a sentence before the root, a traceback header or a frame is not its lead
    assert lead(["The run stopped.", "RuntimeError: CUDA error: out of memory"], 2) == []
    assert lead(["Traceback (most recent call last):", "  x"], 2) == []
    assert lead(['  File "/a/b.py", line 3, in f', "in file x"], 2) == []
    assert lead(["only line"], 1) == []


def test_the_kernel_launch_in_a_traceback_gives_the_kernel_and_its_site():
    lines = ["Traceback (most recent call last):",
             '  File "/home/u/proj/test_matmul.py", line 60, in test_func',
             "    cu_square_matrix_mul[(bpg, bpg), (tpb, tpb), stream](dA, dB, dC)",
             '  File "/usr/lib/python3/site-packages/numba/cuda/compiler.py", line 307, in __call__',
             "    sharedmem=self.sharedmem)",
             "numba.cuda.cudadrv.driver.CudaAPIError: Call to cuLaunchKernel results in CUDA_ERROR_INVALID_VALUE"]
    assert launch_site(lines, 6) == {"kernel": "cu_square_matrix_mul", "launch_site": "/home/u/proj/test_matmul.py:60"}
    triton = ['  File "/w/k.py", line 9, in run', "    _add_kernel[grid](x, y, out, n, BLOCK=1024)", "ValueError: x"]
    assert launch_site(triton, 3)["kernel"] == "_add_kernel"
    # a list indexed and called is no launch
    model = ['  File "/w/m.py", line 5, in forward', "    x = self.layers[i](x)", "RuntimeError: shapes"]
    assert launch_site(model, 3) == {}


def test_rich_and_ipython_frames_are_frames():
    rich = ["\u2502/mnt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134  \u2502",
            "\u2502\u2771 134 \u2502   return F.linear(input, self.weight, self.bias)  \u2502",
            "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and BFloat16"]
    assert source_location(rich, 3)["source"] == "/mnt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:134"
    ipython = ["File ~/proj/model.py:126, in forward(self, x)", "ValueError: bad"]
    assert source_location(ipython, 2) == {"source": "~/proj/model.py:126", "source_function": "forward"}


def test_one_piece_of_text_is_one_fact():
    got = extract(["Indexing.cu:1146: indexSelectLargeIndex: block: [18,0,0], thread: [5,0,0] Assertion `i < n` failed."])
    assert got["block"] == "18,0,0" and got["thread"] == "5,0,0" and got["kernel"] == "indexSelectLargeIndex"
    assert "shape" not in got           # the block and thread indexes are not shapes
    assert extract(["Shapes are [38,38] and [19,38]."])["shape"] == [38, 38]
    # an arch inside a longer file path is still an arch
    assert extract(["ptxas /tmp/mlir-nvptx64-nvidia-cuda-sm_90-ac1dae.ptx, line 5; error"])["arch"] == "9.0"


def test_a_lambda_is_no_kernel_name():
    got = extract(["IndexKernel.cu:92: void operator()(int) [with T = float]: block: [0,0,0], thread: [0,0,0] failed."])
    assert "kernel" not in got
    assert "function" not in extract(["  what():  CUDA error: an illegal memory access was encountered"])


def test_chain_lines_add_only_kinds_the_root_did_not_say():
    known = {"file_line": "init.cu:194"}
    got = extract_new(["transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1"], known)
    assert got.get("code") == 12 and "file_line" not in got and "file_line_2" not in got


def test_whole_log_rules_with_twins_keep_every_value():
    lines = ["Failed to initialize NVML: Driver/library version mismatch",
             "package nvidia-driver-550 550.107.02-0ubuntu1, loaded: Kernel Module  550.90.07  Fri May 31"]
    got = extract_log(lines, family="driver-mismatch")
    assert got["driver_version"] == "550.107.02" and got["driver_version_2"] == "550.90.07"
    assert "driver_version" not in extract_log(lines, family="oom")


def test_the_direct_finditer_gives_what_the_wrapper_gives():
    """signatures.re2direct.finditer_groups: every match, its start, its set groups (the wrapper's
    groupdict order) and their spans, as re2's own finditer, on ASCII and non-ASCII text, with empty
    matches and unset groups."""
    from signatures.re2direct import finditer_groups

    def wrapper(rx, text):
        return [(m.start(), [(k, v, m.span(rx.groupindex[k])) for k, v in m.groupdict().items() if v is not None])
                for m in rx.finditer(text)]

    one_line = re2.Options()
    one_line.never_nl = True
    rules = [re2.compile("(?m)" + r.pattern, one_line) for r in load()]
    rules += [re2.compile(p) for p in (r"(?P<a>x)?(?P<b>y*)", r"\b(?P<w>\w+)\b", r"(?P<e>)", r"é(?P<n>\d+)")]
    texts = ["", "xyy x yx", "CUDA error: out of memory (error 2) at kernel.cu:12\nshape=(1, 4096)\nsm_90",
             "naïve é42 x\n\u2502 /x/linear.py:134 in forward \u2502 café 7", "Tried to allocate 2.00 GiB; GPU 0 has"]
    for rx in rules:
        find = finditer_groups(rx)
        for text in texts:
            assert find(text) == wrapper(rx, text), (rx.pattern, text)


def test_a_whole_log_window_is_read_on_the_lines_holding_a_literal():
    """The whole-log gate keeps exactly the lines (in order) where its literals stand, in ASCII and
    non-ASCII text; what the rules then find is what they find in the whole window."""
    from signatures.re2direct import lines_holding

    gate = re2.compile("(?i)NVIDIA |Tesla |name: ")
    for text in ["", "x\nFound GPU0 NVIDIA GeForce GTX 770 which\n", "▕█▏ 50%\nGPU 0: Tesla V100 (UUID)\nnvidia é",
                 "name: A name: B\n\nTESLA x"]:
        want = "\n".join(line for line in text.split("\n") if gate.search(line))
        assert lines_holding(gate)(text) == want, text
    window = ["step 1 loss 0.5 ▕█████▏"] * 50 + ["Found GPU0 NVIDIA GeForce GTX 770 which is of cuda capability 3.0."]
    window += ["RuntimeError: CUDA error: no kernel image is available for execution on the device"]
    assert extract_log(window, {}, 52, "arch-mismatch") == {"gpu_name": "NVIDIA GeForce GTX 770"}
