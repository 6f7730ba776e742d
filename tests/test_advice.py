"""Advice: the reasoning rules' own examples, the evaluator's limits, ecosystem detection, and the
promise that no log gets a command of a framework it never shows."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from diagnose import advice
from diagnose.advice import expr
from diagnose.model import Diagnosis
from signatures.facts import normalise
from signatures.taxonomy import ECOSYSTEMS

ROOT = Path(__file__).resolve().parent.parent
ISSUES = Path(__file__).parent / "fixtures" / "issues"
RULES, _ = advice.default_rules()
CASES = [(r, i, ex) for r in RULES for i, ex in enumerate(r.examples)]


def _diagnosis(rule, ex) -> Diagnosis:
    facts = {k: normalise(k, str(v)) if not isinstance(v, (int, float)) else v for k, v in ex.get("facts", {}).items()}
    return Diagnosis(path="<example>", family=ex.get("family", rule.families[0]), origin=ex.get("origin"),
                     signature=ex.get("signature"), facts=facts, ecosystems=list(ex.get("ecosystems", [])))


@pytest.mark.parametrize("rule,i,ex", CASES, ids=[f"{r.id}-{i}" for r, i, _ in CASES])
def test_rule_example(rule, i, ex):
    allowed = {"facts", "env", "ecosystems", "lines", "frames", "origin", "signature", "family", "fires",
               "fix_contains", "conclusion_contains"}
    assert set(ex) <= allowed, f"{rule.id} example {i}: unknown keys {set(ex) - allowed}"
    d = _diagnosis(rule, ex)
    fired = [f for f in advice.evaluate_rules(d, ex.get("env"), ex.get("frames"), ex.get("lines"))
             if f.rule.id == rule.id]
    assert bool(fired) == ex["fires"], f"{rule.id} example {i}: fires={bool(fired)}"
    if fired:
        f = fired[0]
        assert "{" not in f.conclusion and "?" not in f.conclusion.replace("?)", "")
        if "fix_contains" in ex:
            assert ex["fix_contains"] in (f.fix or ""), f.fix
        if "conclusion_contains" in ex:
            assert ex["conclusion_contains"] in f.conclusion, f.conclusion


def test_every_rule_has_a_firing_and_a_quiet_example():
    for r in RULES:
        assert any(e["fires"] for e in r.examples) and not all(e["fires"] for e in r.examples), r.id


def test_ecosystems_in_the_data_are_the_taxonomys():
    assert advice.ecosystem_names() == ECOSYSTEMS


@pytest.mark.parametrize("text", ["__import__('os').system('true')", "x.__class__", "(lambda: 1)()",
                                  "open('f')", "[x for x in y]"])
def test_the_evaluator_runs_no_code(text):
    with pytest.raises(expr.ExprError):
        expr.parse(text)


def test_the_evaluator_treats_unknown_facts_as_not_applying():
    assert expr.evaluate("first(a, b) * 2", {"b": 3}) == 6
    assert expr.evaluate("known(a) or b > 1", {"b": 3}) is True
    with pytest.raises(expr.Missing):
        expr.evaluate("a > 1", {})
    with pytest.raises(expr.Missing):
        expr.evaluate("a / b", {"a": 1, "b": 0})


def test_a_bad_rule_file_names_the_file_and_the_rule(tmp_path):
    p = tmp_path / "rules.toml"
    p.write_text('[[rule]]\nid = "x.bad"\nfamilies = ["oom"]\ndocs = "d"\nwhen = "import os"\n'
                 'conclusion = "c"\n[[rule.example]]\nfires = true\n[[rule.example]]\nfires = false\n')
    with pytest.raises(advice.AdviceError, match=r"rules.toml: rule 'x.bad'"):
        advice.load_rules(p)
    p.write_text('[[rule]]\nid = "x.fam"\nfamilies = ["nope"]\ndocs = "d"\nwhen = "a > 1"\nconclusion = "c"\n'
                 '[[rule.example]]\nfires = true\n[[rule.example]]\nfires = false\n')
    with pytest.raises(advice.AdviceError, match="unknown families"):
        advice.load_rules(p)


@pytest.mark.parametrize("lines,want", [
    (['  File "/x/site-packages/jax/_src/pallas/core.py", line 3, in f'], ["jax", "python"]),
    (["kernel.cu(12): error: expected a \";\"", "1 error detected in the compilation of \"kernel.cu\"."], ["native"]),
    (["RuntimeError: CUDA error: out of memory", "torch.OutOfMemoryError: x"], ["pytorch", "python"]),
    (["ERROR: LoadError: CUDA error: out of memory (code 2, ERROR_OUT_OF_MEMORY)", "@ CUDA ~/.julia/packages/CUDA/abc/lib/cudadrv/libcuda.jl:30"], ["julia"]),
    (["hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"], ["rocm"]),
    (["tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator ran out of memory"], ["tensorflow", "python", "native"]),
    (["RuntimeError: HIP error: an illegal memory access was encountered"], ["rocm", "python"]),
])
def test_detect(lines, want):
    assert advice.detect(lines) == want


def test_cut_keeps_the_options_of_the_logs_framework():
    text, n = advice.cut("Reduce the batch, use activation checkpointing, or set "
                         "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. Then run nvidia-smi.",
                         advice.present(["jax", "python"]))
    assert text == "Reduce the batch, or use activation checkpointing. Then run nvidia-smi." and n == 1
    assert advice.cut("Print torch.cuda.memory_summary().", {"jax"}) == ("", 1)
    assert advice.cut("Run nvidia-smi.", advice.present(["native"])) == ("Run nvidia-smi.", 0)


# -- over every labelled real log ----------------------------------------------------------------

TORCH = re.compile(r"(?i)\btorch\b|PYTORCH_|TORCH_|\.cuda\(\)|model\.to\(")
PYTHON = re.compile(r"\bpython\d?(?:\.\d+)?\b|\bpy-spy\b|\bpip3? install\b|\bimport \w|\bfaulthandler\b|TRITON_INTERPRET")
NATIVE = {"cuda", "cuda-c++", "cuda-c", "nvcc", "thrust", "cutlass", "cub", "nvidia-smi", "nvml", "driver",
          "nvidia-driver", "nccl-tests", "compute-sanitizer", "opencl", "kokkos", "alpaka", "amrex", "gunrock",
          "relion", "openmm", "blender-cycles", "mitsuba", "houdini", "llama.cpp", "ggml", "darknet", "marian"}
# frameworks built on PyTorch: their logs are PyTorch programs' even when a line never says "torch"
TORCH_BASED = {"pytorch", "torch", "inductor", "pytorch-ext", "pytorch-extension", "pytorch-rocm", "torch-rocm",
               "torch-mps", "torch-directml", "comfyui", "comfyui-rocm", "vllm", "sglang", "flash-attn",
               "flash-attention", "bitsandbytes", "deepspeed", "transformers", "diffusers", "detectron2", "xformers",
               "accelerate", "trl", "peft", "apex", "megatron", "megatron-deepspeed", "fsdp", "torchao", "mamba",
               "causal-conv1d", "flashinfer", "auto-gptq", "verl", "lmdeploy", "mmdet", "mmdetection", "mmcv", "mmseg",
               "yolact", "llava", "nemo", "colossalai", "onetrainer", "stable-diffusion", "easydiffusion", "cellpose",
               "crypten", "ring-attn", "torch_memory_saver", "tensorrt-llm", "helion", "einops", "fbgemm", "nvfuser",
               "torch-xpu", "pytorch-xpu", "torch-xpu-distributed", "pytorch-ddp", "pytorch-distributed", "axolotl",
               "pytorch-transformers", "monai-pytorch", "ms-swift-deepspeed", "unsloth", "torch-geometric"}
PY_IN_LOG = re.compile(rb"(?i)\.py\b|python|traceback|site-packages|\bpip\b")


def _labelled():
    out = []
    for m in sorted(ISSUES.glob("manifest-*.tsv")):
        with open(m, newline="") as f:
            out += [(ISSUES / f"{r['id']}.log", r["framework"]) for r in csv.DictReader(f, delimiter="\t") if r.get("id")]
    dev = ROOT.parent / "shared" / "realworld"
    if (dev / "manifest.tsv").exists():
        with open(dev / "manifest.tsv", newline="") as f:
            out += [(dev / "logs" / f"{r['id']}.log", r["framework"]) for r in csv.DictReader(f, delimiter="\t")]
    with open(ROOT / "corpus" / "manifest.tsv", newline="") as f:
        out += [(ROOT / "corpus" / "logs" / f"{r['id']}.log", r["framework"]) for r in csv.DictReader(f, delimiter="\t")]
    return out


def _advice_text(d) -> str:
    from diagnose.guidance import questions

    return " ".join([d.fix, d.next_step] + [q.command for q in questions(d)])


def test_no_log_gets_a_command_of_a_framework_it_never_shows():
    from diagnose.engine import diagnose_files

    logs = _labelled()
    results = diagnose_files([str(p) for p, _ in logs])
    torch_bad, python_bad, checked_torch, checked_native = [], [], 0, 0
    for (path, framework), d in zip(logs, results):
        raw = path.read_bytes()
        said = _advice_text(d)
        if b"torch" not in raw.lower() and framework not in TORCH_BASED:
            checked_torch += 1
            if TORCH.search(said):
                torch_bad.append(f"{path.name} ({framework}, {d.family}): {TORCH.search(said)[0]!r} in {said[:160]!r}")
        if framework in NATIVE and not PY_IN_LOG.search(raw):
            checked_native += 1
            if PYTHON.search(said):
                python_bad.append(f"{path.name} ({framework}, {d.family}): {PYTHON.search(said)[0]!r} in {said[:160]!r}")
    assert checked_torch > 300 and checked_native > 40
    assert not torch_bad, f"{len(torch_bad)} of {checked_torch} torch-free logs got a torch command:\n" + "\n".join(torch_bad[:40])
    assert not python_bad, f"{len(python_bad)} of {checked_native} native logs got a Python command:\n" + "\n".join(python_bad[:40])


def test_nvidia_tools_are_assumed_except_on_a_rocm_log():
    assert "nvidia" in advice.present(["pytorch", "python"])
    assert "nvidia" not in advice.present(["rocm", "pytorch", "python"])
    assert advice.cut("Run compute-sanitizer --tool memcheck python x.py. Check rocminfo.",
                      advice.present(["rocm", "python"]))[0] == "Check rocminfo."


def test_a_source_build_of_pytorch_is_no_python_program():
    assert "python" not in advice.detect(["TORCH_CUDA_ARCH_LIST=All cmake -DUSE_CUDA=ON ..",
                                          "nvcc fatal   : Unsupported gpu architecture 'compute_20'"])
    assert "python" in advice.detect(["torch.OutOfMemoryError: CUDA out of memory."])


def test_a_tpu_log_gets_no_nvidia_tools():
    ecos = advice.detect(["XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm."],
                         ["jax"])
    assert "tpu" in ecos and "nvidia" not in advice.present(ecos)
    assert advice.primary(ecos) == "jax"            # a platform is never the language of the advice
    kept, n = advice.cut("Re-run with CUDA_LAUNCH_BLOCKING=1 so the failing kernel is reported. Print jax.live_arrays().",
                         advice.present(ecos))
    assert n == 1 and kept == "Print jax.live_arrays()."
    # a GPU log that only says it found no TPU is no TPU log
    assert "tpu" not in advice.detect(["No GPU/TPU found, falling back to CPU."])
    assert advice.primary(["python", "nvidia", "tpu"]) == "generic"


def test_triton_knobs_are_cut_from_a_log_without_triton():
    fix = ("Launch fewer threads per block, or cap register use so the block fits: __launch_bounds__(threads) on the "
           "kernel, -maxrregcount=N, or in Triton fewer num_warps / smaller blocks.")
    kept, n = advice.cut(fix, advice.present(["native"]))
    assert n == 1 and "num_warps" not in kept and "-maxrregcount=N" in kept
    assert advice.cut(fix, advice.present(["triton", "python"]))[1] == 0


def test_an_unexplained_log_gets_its_frameworks_next_step():
    generic = "Read the root line and the traceback above it; run `diagnose clusters` over similar logs."
    d = Diagnosis(path="<x>", family="unknown", origin=None, signature=None, next_step=generic,
                  ecosystems=["tensorflow", "python"])
    advice.localise(d)
    assert d.next_step.startswith(generic) and "TF_CPP_MIN_LOG_LEVEL" in d.next_step
    # a log with no framework in sight keeps the generic step alone
    d = Diagnosis(path="<x>", family="unknown", origin=None, signature=None, next_step=generic, ecosystems=["python"])
    advice.localise(d)
    assert d.next_step == generic
