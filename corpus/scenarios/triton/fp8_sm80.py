"""An fp8 (e4m3, "fp8e4nv") GEMM tile compiled for an A100 (sm_80), which has no fp8 tensor cores."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def fp8_mm(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


compile_for(fp8_mm, {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
            {"BM": 64, "BN": 64, "BK": 32}, cc=80)
