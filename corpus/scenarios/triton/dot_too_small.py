"""A matmul tile of 8x8x8: tl.dot needs every dimension to be at least 16."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def tiny_mm(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


compile_for(tiny_mm, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
            {"BM": 8, "BN": 8, "BK": 8})
