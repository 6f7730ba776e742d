"""A row-wise kernel with BLOCK = 100: tl.arange needs a power-of-2 range."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def scale_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


compile_for(scale_rows, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 100})
