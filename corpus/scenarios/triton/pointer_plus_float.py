"""Offsets computed in floating point are added to a pointer."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def gather(x_ptr, y_ptr, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) * scale          # scale is fp32: offs becomes fp32
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + offs))


compile_for(gather, {"x_ptr": "*fp16", "y_ptr": "*fp16", "scale": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 128})
