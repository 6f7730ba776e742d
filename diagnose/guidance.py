"""What to check next when a diagnosis is uncertain: the questions a senior kernel engineer asks, in order.

`questions(diagnosis, findings)` is a pure function of the diagnosis (its root line, evidence, chain)
and the environment findings. Each question cites the log line that prompted it and says why it
comes at that point: cheap checks that rule out a whole class of causes first, slow ones last.
"""
from __future__ import annotations

from dataclasses import dataclass

from diagnose.model import Diagnosis
import re2

UNCERTAIN_BELOW = 0.6


@dataclass(frozen=True)
class Question:
    ask: str          # the question, as a reviewer would put it
    why: str          # what in the log prompts it and why it comes now
    command: str = "" # the exact thing to run, when there is one
    line: int | None = None   # the log line that prompted it


def uncertain(d: Diagnosis) -> bool:
    """Guidance is shown for failures no signature explains and for low-confidence diagnoses."""
    return d.family == "unknown" or (d.family != "none" and d.confidence < UNCERTAIN_BELOW)


# (key, pattern over one log line, re2: linear time). Order in RULES below is the order questions are asked.
_P = {key: re2.compile(pattern) for key, pattern in {
    "arch": r"(?i)no kernel image is available|is not compatible with the current PyTorch|"
            r"Unsupported gpu architecture|invalid device function|sm_\d+a? is not",
    "driver": r"(?i)driver version is insufficient|Driver/library version mismatch|"
              r"CUDA driver version|found no NVIDIA driver",
    "library": r"(?i)cannot open shared object file|undefined symbol|ImportError|"
               r"ModuleNotFoundError|Could not load (dynamic )?library",
    "cuda": r"(?i)CUDA error|cudaError\w*|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|"
            r"illegal memory access|unspecified launch failure|device-side assert|"
            r"misaligned address|CUDA_ERROR_\w+",
    "memory": r"(?i)illegal memory access|misaligned address|out of bounds|"
              r"unspecified launch failure|invalid (global|shared) (read|write)|segmentation fault",
    "shape": r"(?i)torch\.Size\(\[|\[\d+(?:,\s*\d+)+\]|\(\d+(?:,\s*\d+)+\)|\b\d+x\d+\b|"
             r"\bshape\b|\bstride|not divisible|multiple of",
    "dtype": r"\b(?:float16|bfloat16|float32|fp16|bf16|fp32|Half|BFloat16|dtype|scalar type)\b",
    "triton": r"(?i)\btriton\b",
    "nan": r"(?i)\bnan\b|\binf\b|not finite|non-finite|Tensor-likes are not close|mismatched elements",
    "oom": r"(?i)out of memory|RESOURCE_EXHAUSTED|cannot allocate|MemoryError",
    "signal": r"(?i)Segmentation fault|core dumped|SIGSEGV|SIGABRT|SIGKILL|signal \d+|"
              r"exit(?:ed)? (?:code|status) -?\d+|Killed\b",
    "hang": r"(?i)timed? ?out|timeout|watchdog|\bhang(?:s|ing)?\b|deadlock",
}.items()}

def _first(d: Diagnosis, key: str):
    """The first log line (number, text) matching a pattern: the root line first, then the evidence."""
    pattern = _P[key]
    candidates = ([d.root] if d.root else []) + list(d.evidence) + [c for c in d.chain]
    for item in candidates:
        if pattern.search(item.text):
            return item.line, item.text
    if d.error and pattern.search(d.error):
        return None, d.error
    return None


def _cite(hit) -> str:
    line, text = hit
    text = text.strip()
    text = text if len(text) <= 90 else text[:87] + "..."
    return f"line {line} reads “{text}”" if line else f"the input reports “{text}”"


def questions(d: Diagnosis, findings: list | None = None) -> list[Question]:
    """The ordered checks for an uncertain diagnosis (also usable for any diagnosis)."""
    out: list[Question] = []
    if d.error:
        out.append(Question(
            "Is the log complete?",
            f"the input could not be read in full ({d.error}); a cut log hides the real root cause, "
            "so get the whole log before reasoning about it."))

    for f in findings or []:
        if isinstance(f, dict) and str(f.get("severity", "")).lower() in ("error", "critical", "fail"):
            out.append(Question(
                f"Does the environment problem explain it: {f.get('message', '')}?",
                "the environment snapshot of this task flags it; an environment fault makes every kernel "
                "fail and is cheaper to rule out than any code.", str(f.get("fix", "") or "")))

    if hit := _first(d, "arch"):
        out.append(Question(
            "Is the device's architecture in the build?",
            f"{_cite(hit)}; a binary without SASS or PTX for this GPU's compute capability cannot run any "
            "kernel, whatever the code does.",
            "python -c \"import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())\"",
            hit[0]))
    if hit := _first(d, "driver"):
        out.append(Question(
            "Is the driver new enough for this CUDA runtime?",
            f"{_cite(hit)}; compare the driver's CUDA version with the runtime the program was built against.",
            "nvidia-smi --query-gpu=driver_version --format=csv,noheader", hit[0]))
    if hit := _first(d, "library"):
        out.append(Question(
            "Does every library load, from the path you expect?",
            f"{_cite(hit)}; a missing or mismatched shared library fails before any kernel runs.",
            "python -c \"import torch; print(torch.__version__, torch.version.cuda)\"; ldd $(python -c "
            "\"import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so'))\")",
            hit[0]))
    if hit := _first(d, "cuda"):
        out.append(Question(
            "Does it reproduce with CUDA_LAUNCH_BLOCKING=1, and which kernel fails then?",
            f"{_cite(hit)}; CUDA reports kernel errors asynchronously, at a later API call, so the line that "
            "reported it is often not the kernel at fault. With blocking launches the traceback points at it.",
            "CUDA_LAUNCH_BLOCKING=1 <the failing command>", hit[0]))
    if hit := _first(d, "memory"):
        out.append(Question(
            "Which access is out of bounds?",
            f"{_cite(hit)}; compute-sanitizer names the kernel, the thread and the address of the first bad "
            "access, which the error message never does.",
            "compute-sanitizer --tool memcheck <the failing command>", hit[0]))
    if hit := _first(d, "shape"):
        out.append(Question(
            "Is the failing shape a multiple of the kernel's block size, and are the inputs contiguous?",
            f"{_cite(hit)}; kernels tuned on round shapes often miss the mask on the last, partial block or "
            "assume a stride. Try the same call with the shape rounded up to the block, and with .contiguous().",
            "", hit[0]))
    if hit := _first(d, "dtype"):
        out.append(Question(
            "Do the dtypes match what the kernel was written for?",
            f"{_cite(hit)}; a kernel written for fp16/bf16 fed fp32 (or the reverse) fails to compile, "
            "launches with the wrong pointer type, or computes at the wrong precision.", "", hit[0]))
    if hit := _first(d, "triton"):
        out.append(Question(
            "Does the Triton kernel fail in the interpreter too?",
            f"{_cite(hit)}; TRITON_INTERPRET=1 runs the kernel on the CPU with numpy, where you can print "
            "and step through it (device asserts do not fire there, and unmasked reads return garbage).",
            "TRITON_INTERPRET=1 <the failing command>", hit[0]))
    if hit := _first(d, "oom"):
        out.append(Question(
            "How much memory was in use, and by what, when it failed?",
            f"{_cite(hit)}; an allocation failure is a resource limit unless something leaks or fragments.",
            "python -c \"import torch; print(torch.cuda.memory_summary())\"  # at the failing step", hit[0]))
    if hit := _first(d, "nan"):
        out.append(Question(
            "Where does the first non-finite value appear, and is it there in float32 too?",
            f"{_cite(hit)}; NaN spreads, so the first op producing it is the suspect; if float32 is fine the "
            "tolerance or the accumulation precision is the issue, not the kernel.", "", hit[0]))
    if hit := _first(d, "hang"):
        out.append(Question(
            "What was every rank or thread doing when it stopped?",
            f"{_cite(hit)}; a timeout reports where waiting ended, not what blocked; a stack dump of each "
            "process shows who never arrived.", "py-spy dump --pid <pid>   # and NCCL_DEBUG=INFO", hit[0]))
    if hit := _first(d, "signal"):
        out.append(Question(
            "Where did the process die?",
            f"{_cite(hit)}; a signal leaves no Python traceback: get the native stack.",
            "python -X faulthandler <script>   # or: gdb -batch -ex run -ex bt --args python <script>", hit[0]))

    if not any(q.line for q in out):
        root = f"the root line {d.root.line} (“{d.root.text.strip()[:80]}”)" if d.root else "no line"
        out.append(Question(
            "What is the first error in the log, not the last?",
            f"nothing in {root} names a known failure; read upward from the end to the first traceback or "
            "error: later errors are often consequences of it.", "", d.root.line if d.root else None))
    out.append(Question(
        "Does it fail the same way on a second run, and on another machine?",
        "a failure that moves or vanishes points at a race, uninitialised memory or a faulty device; one "
        "that repeats exactly points at the code or its inputs."))
    out.append(Question(
        "Should this failure have a signature?",
        "if similar logs share it, a signature turns this review into an automatic diagnosis next time.",
        "diagnose clusters <directory of similar logs>"))
    return out
