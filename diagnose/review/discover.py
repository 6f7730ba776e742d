"""A task folder's parts, found by content rather than by fixed names (an optional task.toml names roles).

Roles: spec (markdown/text a person wrote), kernel (Triton/Pallas/NKI Python, CUDA .cu/.cuh), test,
benchmark, log (a log file or a `diagnose run` bundle), tensor pairs (out/ref[/baseline]), snapshot
(`diagnose env --json`), profile (ncu CSV, nsys SQLite, torch.profiler/perfetto JSON), results
(repeated timing measurements). A file may hold several roles (a kernel file with a benchmark main).
"""
from __future__ import annotations

import ast
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("spec", "kernel", "test", "benchmark", "log", "snapshot", "profile", "results", "tensor")
MAX_SNIFF = 256 * 1024          # bytes read to decide a file's role
MAX_FILES = 2000                # a task folder is small; a bigger one is probably the wrong folder
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".venv", "node_modules", ".triton-cache"}
TENSOR_EXT = (".npy", ".npz", ".pt", ".pth", ".safetensors")
OUT_WORDS = ("out", "output", "result", "actual", "got", "kernel", "pred", "candidate")
REF_WORDS = ("ref", "reference", "expected", "golden", "gold", "truth", "want")
BASE_WORDS = ("baseline", "base", "torch", "framework")

_LOG_HINT = re.compile(rb"(Traceback \(most recent call last\)|^\$ |\berror\b|\bFAILED\b|\bpassed\b|"
                       rb"^=+ .* =+$|ptxas info|\bWarning\b|^E\s{2,}|\[rank\d+\]|^\w+ \d\d:\d\d:\d\d)",
                       re.IGNORECASE | re.MULTILINE)
_TIMER_CALLS = ("perf_counter", "perf_counter_ns", "time", "monotonic", "do_bench", "do_bench_cudagraph",
                "elapsed_time", "Timer", "timeit", "repeat", "benchmark")
_PY_KERNEL_MODULES = ("triton", "jax.experimental.pallas", "neuronxcc", "nki", "cupy", "numba", "tilelang",
                      "cutlass", "torch.utils.cpp_extension")


class TaskError(ValueError):
    """A task folder that cannot be reviewed; the message names it and what to do."""


@dataclass
class TensorSet:
    name: str
    out: str
    ref: str
    baseline: str | None = None
    inp: str | None = None


@dataclass
class Parts:
    root: str
    files: dict[str, list[str]] = field(default_factory=lambda: {r: [] for r in ROLES})
    tensors: list[TensorSet] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)     # "path: why"
    explicit: bool = False                               # roles came from task.toml

    def of(self, role: str) -> list[str]:
        return self.files.get(role, [])

    def to_json(self) -> dict:
        return {"root": self.root, "files": {k: v for k, v in self.files.items() if v},
                "tensors": [vars(t) for t in self.tensors], "unpaired": self.unpaired, "skipped": self.skipped}


def _walk(root: Path, skipped: list[str]) -> list[Path]:
    out: list[Path] = []

    def onerror(e: OSError):
        skipped.append(f"{e.filename}: cannot list ({e.strerror})")

    for d, dirs, files in os.walk(root, onerror=onerror, followlinks=False):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        for f in sorted(files):
            p = Path(d) / f
            if p.is_symlink() or not p.is_file():
                skipped.append(f"{p}: not a regular file")
                continue
            out.append(p)
            if len(out) > MAX_FILES:
                raise TaskError(f"{root}: more than {MAX_FILES} files; point `diagnose review` at one task folder")
    return out


def _sniff(p: Path) -> bytes:
    try:
        with open(p, "rb") as f:
            return f.read(MAX_SNIFF)
    except OSError:
        return b""


def _py_roles(p: Path, text: str) -> set[str]:
    roles: set[str] = set()
    name = p.stem.lower()
    try:
        tree = ast.parse(text, filename=str(p))
    except (SyntaxError, ValueError):
        # a kernel that does not parse is still the kernel (lint will say why)
        return {"kernel"} if re.search(r"^\s*(import|from)\s+(triton|jax)", text, re.M) else set()
    imports: set[str] = set()
    calls: set[str] = set()
    tests = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imports.add(node.module)
            imports.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call):
            f = node.func
            calls.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            tests = True
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            tests = True
    decorated = any(isinstance(d, (ast.Attribute, ast.Name, ast.Call)) and "jit" in ast.dump(d)
                    for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for d in n.decorator_list)
    kernel_import = any(m == k or m.startswith(k + ".") for m in imports for k in _PY_KERNEL_MODULES)
    if kernel_import and (decorated or "pallas_call" in calls or "kernel" in name):
        roles.add("kernel")
    elif "kernel" in name and not name.startswith("test"):
        roles.add("kernel")          # the task's implementation in plain framework code (torch, numpy)
    if tests or name.startswith("test_") or name.endswith("_test"):
        roles.add("test")
    if name.startswith(("bench", "perf", "time")) or calls & set(_TIMER_CALLS) and not tests:
        roles.add("benchmark")
    return roles


def _cu_roles(p: Path, text: str) -> set[str]:
    roles: set[str] = set()
    if "__global__" in text:
        roles.add("kernel")
    name = p.stem.lower()
    if name.startswith(("bench", "perf")) or re.search(r"cudaEventElapsedTime|std::chrono|clock_gettime", text):
        roles.add("benchmark")
    if name.startswith("test") or "TEST(" in text:
        roles.add("test")
    return roles


def _json_role(data: bytes) -> str | None:
    head = data.lstrip()[:4096]
    if b'"schema"' in head and b"diagnose.env/" in head:
        return "snapshot"
    if b'"traceEvents"' in data[:MAX_SNIFF] or head.startswith(b'[{"name"') or b'"displayTimeUnit"' in head:
        return "profile"
    try:
        doc = json.loads(data) if len(data) < MAX_SNIFF else None
    except ValueError:
        return None
    if isinstance(doc, (dict, list)) and re.search(rb'"(times?|ms|runtime|runtime_ms|baseline\w*|candidate\w*|'
                                                  rb'ref_runtime|speedup|measurements)"', data):
        return "results"
    return None


def _csv_role(data: bytes) -> str | None:
    head = data[:8192]
    if b"==PROF==" in head or b'"Kernel Name"' in head or b'"Metric Name"' in head or b"ID\",\"Process ID" in head:
        return "profile"
    if re.search(rb"(Time \(%\)|Total Time|Instances|Avg \(ns\))", head):
        return "profile"        # nsys stats CSV
    if re.search(rb"(time|ms|us|runtime|latency)", head.split(b"\n", 1)[0], re.I):
        return "results"
    return None


def _text_role(p: Path, data: bytes) -> str:
    if p.suffix.lower() in (".log", ".out", ".err"):
        return "log"
    hits = len(_LOG_HINT.findall(data[:65536]))
    return "log" if hits >= 2 and not data.lstrip().startswith(b"#") else "spec"


def _pair_tensors(paths: list[str]) -> tuple[list[TensorSet], list[str]]:
    def key(path: str) -> tuple[str, str]:
        stem = Path(path).name
        for ext in TENSOR_EXT:
            if stem.endswith(ext):
                stem = stem[: -len(ext)]
        toks = re.split(r"[_\-.]", stem.lower())
        for kind, words in (("ref", REF_WORDS), ("baseline", BASE_WORDS), ("out", OUT_WORDS), ("inp", ("input", "inp", "x"))):
            hit = [t for t in toks if t in words]
            if hit:
                rest = "_".join(t for t in toks if t not in words)
                return kind, str(Path(path).parent / rest)
        return "", str(Path(path).parent / stem)

    groups: dict[str, dict[str, str]] = {}
    for p in paths:
        kind, k = key(p)
        groups.setdefault(k, {}).setdefault(kind or "?", p)
    sets, unpaired = [], []
    for k, g in sorted(groups.items()):
        if "out" in g and "ref" in g:
            sets.append(TensorSet(Path(k).name or "output", g["out"], g["ref"], g.get("baseline"), g.get("inp")))
            unpaired += [v for kk, v in g.items() if kk not in ("out", "ref", "baseline", "inp")]
        else:
            unpaired += list(g.values())
    return sets, unpaired


def _from_toml(root: Path, parts: Parts) -> None:
    try:
        doc = tomllib.loads((root / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise TaskError(f"{root / 'task.toml'}: cannot read it ({e}); fix the file or remove it to let the "
                        "parts be found by content") from None
    roles = doc.get("roles", {})
    for role, files in roles.items():
        if role == "tensors":
            for t in files:
                parts.tensors.append(TensorSet(t.get("name", "output"), str(root / t["out"]), str(root / t["ref"]),
                                               str(root / t["baseline"]) if t.get("baseline") else None,
                                               str(root / t["input"]) if t.get("input") else None))
            continue
        if role not in ROLES:
            raise TaskError(f"{root / 'task.toml'}: unknown role {role!r}; roles are {', '.join(ROLES)}")
        for f in [files] if isinstance(files, str) else files:
            p = root / f
            if not p.exists():
                raise TaskError(f"{root / 'task.toml'}: {role} file {f!r} does not exist")
            parts.files[role].append(str(p))
    parts.explicit = bool(roles)


def discover(root) -> Parts:
    root = Path(root)
    if not root.is_dir():
        raise TaskError(f"{root}: not a folder; `diagnose review` takes a task folder")
    parts = Parts(root=str(root))
    if (root / "task.toml").is_file():
        _from_toml(root, parts)
        if parts.explicit:
            return parts
    tensors = []
    bundles = set()
    for p in _walk(root, parts.skipped):
        if p.name == "capture.json":                       # a `diagnose run` bundle: the folder is one log
            bundles.add(str(p.parent))
            continue
        if any(str(p).startswith(b + os.sep) for b in bundles):
            continue
        if p.name == "task.toml":
            continue
        ext = p.suffix.lower()
        if ext in TENSOR_EXT:
            tensors.append(str(p))
            continue
        if ext in (".sqlite", ".ncu-rep", ".nsys-rep", ".qdrep"):
            parts.files["profile"].append(str(p))
            continue
        data = _sniff(p)
        if b"\x00" in data[:8192]:
            parts.skipped.append(f"{p}: binary file of unknown kind")
            continue
        text = data.decode("utf-8", "replace")
        if ext == ".py":
            roles = _py_roles(p, text)
        elif ext in (".cu", ".cuh"):
            roles = _cu_roles(p, text) or {"kernel"}
        elif ext in (".cpp", ".cc", ".cxx", ".h", ".hpp"):
            roles = _cu_roles(p, text)
        elif ext == ".json":
            roles = {r} if (r := _json_role(data)) else set()
        elif ext == ".csv":
            roles = {r} if (r := _csv_role(data)) else set()
        elif ext in (".md", ".txt", ".rst", ".log", ".out", ".err", ""):
            roles = {_text_role(p, data)}
        else:
            roles = set()
        if not roles:
            parts.skipped.append(f"{p}: no role recognised")
        for r in sorted(roles):
            parts.files[r].append(str(p))
    parts.files["log"] += sorted(bundles)
    parts.tensors, parts.unpaired = _pair_tensors(tensors)
    return parts
