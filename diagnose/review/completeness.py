"""Completeness against the spec, read statically: what the spec requires (sizes, dtypes, layouts, edge
cases) against what the task's tests exercise (Python `ast` of the tests and the kernel), and whether
the optimised kernel is compared with a reference at all (maintainability)."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from findings import Evidence, Finding

# Spec wording -> requirement. Read from prose, so phrased loosely on purpose; each hit is quoted back.
_REQ = {
    "any-length": re.compile(r"\bany (?:length|size|sizes|n\b|shape|number of)|not (?:only|just|necessarily) "
                             r"(?:a )?multiples?|need not be (?:a )?multiples?|arbitrary (?:length|size)|"
                             r"not a multiple of the block|any n\b", re.I),
    "n-one": re.compile(r"\bn ?(?:=|==|>=) ?1\b|\bn = 1\b|single element|length 1\b", re.I),
    "non-contiguous": re.compile(r"non-?contiguous|strided inputs?|x\[::2\]", re.I),
    "non-pow2": re.compile(r"not (?:only )?(?:a )?powers? of (?:two|2)|non-power-of-(?:two|2)", re.I),
}
_DTYPES = {
    "float16": re.compile(r"\b(?:float16|fp16|half)\b", re.I),
    "bfloat16": re.compile(r"\b(?:bfloat16|bf16)\b", re.I),
    "float32": re.compile(r"\b(?:float32|fp32)\b", re.I),
    "float64": re.compile(r"\b(?:float64|fp64|double)\b", re.I),
    "fp8": re.compile(r"\b(?:fp8|float8\w*|e4m3|e5m2)\b", re.I),
}
# names in test code that show a dtype is exercised
_DTYPE_NAMES = {
    "float16": {"float16", "half", "fp16"}, "bfloat16": {"bfloat16", "bf16"},
    "float32": {"float32", "float", "fp32"}, "float64": {"float64", "double", "fp64"},
    "fp8": {"float8_e4m3fn", "float8_e5m2", "fp8", "e4m3", "e5m2"},
}
_FLOAT_MAKERS = {"rand", "randn", "normal", "uniform", "rand_like", "randn_like", "linspace"}
_SHAPE_MAKERS = _FLOAT_MAKERS | {"zeros", "ones", "empty", "full", "arange", "randint", "ShapeDtypeStruct",
                                 "zeros_like", "ones_like", "reshape", "view"}
_STRIDED = {"t", "transpose", "permute", "as_strided", "mT", "T", "swapaxes", "moveaxis", "expand"}
_COMPARE = {"assert_close", "assert_allclose", "allclose", "isclose", "assert_array_almost_equal",
            "assert_almost_equal", "testing"}


@dataclass
class TestFacts:
    sizes: set[int] = field(default_factory=set)
    dtypes: set[str] = field(default_factory=set)
    strided: list[tuple[str, int]] = field(default_factory=list)
    compares: list[tuple[str, int]] = field(default_factory=list)
    imports: set[str] = field(default_factory=set)
    tolerances: list[dict] = field(default_factory=list)      # {"file", "line", "atol", "rtol"}
    default_float: bool = False


def _ints(node) -> list[int]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and type(n.value) is int and n.value > 0]


def read_tests(paths) -> TestFacts:
    t = TestFacts()
    for p in paths:
        try:
            tree = ast.parse(Path(p).read_text(encoding="utf-8", errors="replace"), filename=str(p))
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                t.imports.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                t.imports.add(node.module.split(".")[0])
                t.imports.update(a.name for a in node.names)
            elif isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name == "parametrize":
                    for a in node.args[1:]:
                        t.sizes.update(_ints(a))
                elif name in _SHAPE_MAKERS:
                    for a in node.args:
                        if not isinstance(a, ast.Attribute):
                            t.sizes.update(_ints(a))
                    if name in _FLOAT_MAKERS and not any(k.arg == "dtype" for k in node.keywords):
                        t.default_float = True
                if name in _STRIDED:
                    t.strided.append((str(p), node.lineno))
                if name in _COMPARE:
                    t.compares.append((str(p), node.lineno))
                    tol = {"file": str(p), "line": node.lineno}
                    for k in node.keywords:
                        if k.arg in ("atol", "rtol") and isinstance(k.value, ast.Constant) and \
                                isinstance(k.value.value, (int, float)):
                            tol[k.arg] = float(k.value.value)
                    t.tolerances.append(tol)
            elif isinstance(node, ast.Attribute):
                for d, names in _DTYPE_NAMES.items():
                    if node.attr in names:
                        t.dtypes.add(d)
                if node.attr in _STRIDED:
                    t.strided.append((str(p), node.lineno))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                for d, names in _DTYPE_NAMES.items():
                    if node.value.lower() in names:
                        t.dtypes.add(d)
            elif isinstance(node, ast.Subscript):
                for s in ast.walk(node.slice):
                    if isinstance(s, ast.Slice) and s.step is not None:
                        t.strided.append((str(p), node.lineno))
    if t.default_float:
        t.dtypes.add("float32")    # torch.rand / jax.random.normal without dtype= make float32
    return t


def block_sizes(kernel_paths) -> set[int]:
    """Literal block sizes of the kernels: BLOCK-named defaults, keywords and constants (Python), #define/
    constexpr TILE-like names (CUDA, through the same names in launch code)."""
    out: set[int] = set()
    for p in kernel_paths:
        text = Path(p).read_text(encoding="utf-8", errors="replace")
        if str(p).endswith(".py"):
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.arguments):
                    names = [a.arg for a in node.args[len(node.args) - len(node.defaults):]] + \
                            [a.arg for a in node.kwonlyargs]
                    vals = list(node.defaults) + [d for d in node.kw_defaults if d is not None]
                    for n, v in zip(names, vals):
                        if "BLOCK" in n.upper() and isinstance(v, ast.Constant) and type(v.value) is int:
                            out.add(v.value)
                elif isinstance(node, ast.keyword) and node.arg and "BLOCK" in node.arg.upper() and \
                        isinstance(node.value, ast.Constant) and type(node.value.value) is int:
                    out.add(node.value.value)
        else:
            out |= _cuda_block_sizes(p)
    return {b for b in out if b > 1}


_BLOCKISH = ("BLOCK", "TILE", "THREADS")


def _cuda_block_sizes(path) -> set[int]:
    """`#define TILE 32` and `const int threads = 256`-style integers whose names say block or tile,
    read from the tree-sitter parse (diagnose/source)."""
    from diagnose.source import SourceError, cuda as cu

    try:
        src = cu.parse(path)
    except (SourceError, OSError):
        return set()
    out = set()
    for node in cu.walk(src.root, ["preproc_def", "init_declarator"]):
        kids = node.children
        name = next((src.text(c) for c in kids if c.type == "identifier"), "")
        value = next((src.text(c).strip() for c in kids if c.type in ("preproc_arg", "number_literal")), "")
        up = name.upper()
        counts = up.endswith("BLOCKS") or "GRID" in up or "NUM" in up     # how many blocks, not how big one is
        if any(w in up for w in _BLOCKISH) and not counts and value.isdigit():
            out.add(int(value))
    return out


def _quote(text: str, rx: re.Pattern) -> tuple[int, str] | None:
    for i, line in enumerate(text.splitlines(), 1):
        if rx.search(line):
            return i, line.strip()
    return None


def review_completeness(spec_paths, test_paths, kernel_paths) -> tuple[list[Finding], list[str]]:
    """Findings (reader "review", ids review.completeness.* / review.maintainability.*) and what was read."""
    found: list[Finding] = []
    examined: list[str] = []
    specs = [(p, Path(p).read_text(encoding="utf-8", errors="replace")) for p in spec_paths]
    if not specs:
        return [], []
    tests = read_tests(test_paths)
    blocks = block_sizes(kernel_paths)
    reqs: dict[str, tuple[str, int, str]] = {}
    for p, text in specs:
        for name, rx in list(_REQ.items()) + list(_DTYPES.items()):
            q = _quote(text, rx)
            if q and name not in reqs:
                reqs[name] = (p, q[0], q[1])
    dtype_reqs = [d for d in _DTYPES if d in reqs]
    listed = len(dtype_reqs) >= 2 and any(len([d for d in _DTYPES if _DTYPES[d].search(reqs[x][2])]) >= 2
                                          for x in dtype_reqs)
    if not test_paths:
        if reqs:
            p, line, text = next(iter(reqs.values()))
            found.append(Finding(
                "review.completeness.no-tests", "warning", "review",
                "the task has no test file: nothing shows the cases the spec names are exercised",
                evidence=[Evidence(p, line, text=text)],
                why="A spec's edge cases (any length, several dtypes) are only covered if a test runs them.",
                fix="Add a test that runs the kernel against a reference for each size class and dtype the spec names.",
                facts={"requirements": sorted(reqs)}))
            examined.append("completeness: spec read; no tests to compare with it")
        if kernel_paths:
            found.append(Finding(
                "review.maintainability.kernel-not-compared", "warning", "review",
                "no test compares the kernel with a reference", evidence=[Evidence(kernel_paths[0])],
                why="An optimised kernel without a reference comparison can drift from correct with any change.",
                fix="Add a test that compares the kernel's output with a high-precision reference (assert_close).",
                facts={"kernels": sorted(Path(k).stem for k in kernel_paths)}))
        return found, examined

    def miss(rid, title, why, fix, severity="error", **facts):
        p, line, text = reqs[rid]
        found.append(Finding(f"review.completeness.{rid}-untested", severity, "review", title,
                             evidence=[Evidence(p, line, text=text)], why=why, fix=fix,
                             facts={"requirement": rid, **facts}))

    sizes = sorted(tests.sizes)
    tiled = bool(blocks) or any(Path(k).suffix in (".cu", ".cuh") or
                                re.search(r"\b(triton|pallas|nki)\b", Path(k).read_text(errors="replace"))
                                for k in kernel_paths)
    if "any-length" in reqs and tiled:
        if blocks:
            odd = [s for s in sizes if all(s % b for b in blocks)]
        else:
            odd = [s for s in sizes if s & (s - 1)]          # no literal block: a non-power-of-two size
        if not odd:
            miss("any-length", f"the spec asks for any length, but no tested size is off the block size "
                               f"(sizes {sizes or 'none found'}; blocks {sorted(blocks) or 'not literal'})",
                 "The last partial tile (masks, remainders) is where kernels break; a test of multiples only "
                 "passes a kernel that drops or overruns the tail.",
                 "Add a size that is not a multiple of the block (e.g. 1000 for BLOCK 256) to the tests.",
                 sizes=sizes, blocks=sorted(blocks))
    if "n-one" in reqs and 1 not in tests.sizes:
        miss("n-one", "the spec names n = 1, but no test runs it", "A one-element input exercises a grid of "
             "one program with a tile that is almost all mask.", "Add n = 1 to the tested sizes.",
             severity="warning", sizes=sizes)
    if "non-pow2" in reqs and not [s for s in sizes if s & (s - 1)]:
        miss("non-pow2", "the spec asks for sizes that are not powers of two, but every tested size is one",
             "Power-of-two sizes hide masking and padding bugs.", "Add a non-power-of-two size to the tests.",
             sizes=sizes)
    if "non-contiguous" in reqs and not tests.strided:
        miss("non-contiguous", "the spec asks for non-contiguous inputs, but no test passes a strided view",
             "A kernel that indexes with offsets alone reads the wrong elements of a strided view; only a "
             "test with x[::2] or a transpose shows it.",
             "Add a test with a strided input (x[::2], x.t()) and pass the strides to the kernel.")
    for d in dtype_reqs:
        if d not in tests.dtypes:
            miss(d, f"the spec names {d}, but no test runs the kernel in {d}",
                 "Each dtype has its own rounding and its own code path (casts, accumulators).",
                 f"Parametrise the test over the dtypes the spec lists, {d} included.",
                 severity="error" if listed else "warning", dtype=d, tested_dtypes=sorted(tests.dtypes))
    examined.append(f"completeness: spec requirements {sorted(reqs) or 'none found'}; tests exercise sizes "
                    f"{sizes or 'none found'}, dtypes {sorted(tests.dtypes) or 'none found'}"
                    f"{', strided inputs' if tests.strided else ''}")
    # maintainability: is the kernel compared with a reference by a test?
    kernel_mods = {Path(k).stem for k in kernel_paths}
    if kernel_paths:
        if not tests.compares or not (kernel_mods & tests.imports):
            k = kernel_paths[0]
            found.append(Finding(
                "review.maintainability.kernel-not-compared", "warning", "review",
                "no test imports the kernel and compares it with a reference",
                evidence=[Evidence(test_paths[0] if test_paths else k)],
                why="An optimised kernel without a reference comparison can drift from correct with any change.",
                fix="Compare the kernel's output with a high-precision reference (assert_close) in a test.",
                facts={"kernels": sorted(kernel_mods)}))
        else:
            f, line = tests.compares[0]
            examined.append(f"maintainability: {Path(f).name}:{line} compares the kernel with a reference")
    return found, examined
