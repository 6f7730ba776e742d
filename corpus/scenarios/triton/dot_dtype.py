"""tl.dot of an fp16 tile with an fp32 tile: both operands must have the same type."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def mixed_mm(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


compile_for(mixed_mm, {"a_ptr": "*fp16", "b_ptr": "*fp32", "c_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
            {"BM": 64, "BN": 64, "BK": 32})
