"""The block size is passed as a runtime integer instead of a tl.constexpr."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


compile_for(copy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "i32"})
