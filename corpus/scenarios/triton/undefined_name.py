"""A kernel that uses a name it never defined (a typo for BLOCK)."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


compile_for(relu, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256})
