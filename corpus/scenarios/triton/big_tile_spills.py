"""A 128x128 fp32 accumulator over 4 warps (128 values per thread) capped at 64 registers: ptxas spills."""
import triton
import triton.language as tl
import sys

from _compile import compile_for

# --werror: make ptxas treat spills as errors (what a CI build that forbids spills does)
extra = {"ptx_options": "--warn-on-spills -Werror"} if "--werror" in sys.argv else {}


@triton.jit
def big_acc(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


compile_for(big_acc, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
            {"BM": 128, "BN": 128, "BK": 32}, cc=80, num_warps=4, num_stages=1, maxnreg=64, **extra)
