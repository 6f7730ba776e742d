"""The kernel asserts at compile time that HEAD_DIM is a multiple of 64; the caller passes 80."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def attn_fwd(q_ptr, o_ptr, HEAD_DIM: tl.constexpr):
    tl.static_assert(HEAD_DIM % 64 == 0, "HEAD_DIM must be a multiple of 64")
    offs = tl.arange(0, 64)
    tl.store(o_ptr + offs, tl.load(q_ptr + offs))


compile_for(attn_fwd, {"q_ptr": "*fp16", "o_ptr": "*fp16", "HEAD_DIM": "constexpr"}, {"HEAD_DIM": 80})
