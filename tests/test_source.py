"""diagnose.source: kernel source parsed to trees (Python ast; CUDA with tree-sitter-cuda)."""
import pytest

from diagnose.source import SourceError, language_of, parse
from diagnose.source import cuda, python

CUDA = b"""#include <cuda_runtime.h>
template <typename T, int BLOCK>
__global__ void saxpy(int n, T a, const T* __restrict__ x, T* y) {
  __shared__ float tile[32][33];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__device__ float sq(float v) { return v * v; }
int main() {
  saxpy<float, 256><<<(n + 255) / 256, 256, 0, stream>>>(n, 2.0f, x, y);
  other<<<grid, block>>>(a);
  return 0;
}
"""


def test_cuda_templates_and_launch_syntax(tmp_path):
    p = tmp_path / "k.cu"
    p.write_bytes(CUDA)
    src = parse(p)
    assert isinstance(src, cuda.CudaSource) and not src.errors and not src.root.has_error
    ks = cuda.kernels(src)
    assert [k.name for k in ks] == ["saxpy"]          # __device__ sq is not a kernel
    k = ks[0]
    assert k.template is not None and k.template.type == "template_declaration"
    assert [n for _, n in k.params] == ["n", "a", "x", "y"]
    assert k.params[:3] == [("int", "n"), ("T", "a"), ("const T *", "x")]
    ls = cuda.launches(src)
    assert [(l.kernel, src.text(l.grid), src.text(l.block)) for l in ls] == [
        ("saxpy", "(n + 255) / 256", "256"), ("other", "grid", "block")]
    assert src.text(ls[0].shared_bytes) == "0" and src.text(ls[0].stream) == "stream"
    assert ls[1].shared_bytes is None
    assert [src.text(a) for a in ls[0].args] == ["n", "2.0f", "x", "y"]
    assert src.loc(ls[0].node) == (10, 3)
    subs = [src.text(s) for s in cuda.walk(k.body, ("subscript_expression",))]
    assert subs == ["y[i]", "x[i]", "y[i]"]
    assert [cuda.callee(c) for c in cuda.calls(src.root)] == ["saxpy", "other"]


def test_cuda_recovers_and_lists_errors(tmp_path):
    p = tmp_path / "bad.cu"
    p.write_text("__global__ void k(float* x) { x[0] = ; }\n")
    src = parse(p)
    assert src.errors and cuda.kernels(src)[0].name == "k"


def test_python_aliases_calls_and_columns(tmp_path):
    p = tmp_path / "k.py"
    p.write_text("import triton\nimport triton.language as tl\n\n@triton.jit\n"
                 "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
                 "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                 "    é = tl.load(x_ptr + offs, mask=offs < n)\n")
    src = parse(p)
    assert isinstance(src, python.PySource)
    fn, = python.jit_functions(src.tree, ("triton.jit",), src)
    assert python.constexpr_params(fn) == {"BLOCK"}
    load, = python.calls(fn, ("triton.language.load",), src)
    assert src.resolve("tl.load") == "triton.language.load"
    assert src.loc(load) == (7, 9)          # characters, not bytes (é is two bytes)
    assert src.segment(python.keyword(load, "mask")) == "offs < n"
    assert "offs" in python.assignments(fn)


def test_bad_inputs_name_the_file(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def f(:\n")
    with pytest.raises(SourceError, match=r"broken.py:1:\d+: Python syntax error"):
        parse(bad)
    with pytest.raises(SourceError, match="missing.cu: cannot read"):
        parse(tmp_path / "missing.cu")
    with pytest.raises(SourceError, match="notes.txt: not a kernel source file"):
        parse(tmp_path / "notes.txt")
    binary = tmp_path / "blob.cu"
    binary.write_bytes(b"\0\1\2" * 10)
    with pytest.raises(SourceError, match="blob.cu: binary"):
        parse(binary)
    assert language_of("a.cuh") == "cuda" and language_of("a.py") == "python" and language_of("a.txt") is None
