"""A 2-D tile loaded with a mask built for the wrong axis length (64 vs 32 columns)."""
import triton
import triton.language as tl
from _compile import compile_for


@triton.jit
def tile_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    ptrs = x_ptr + rm[:, None] * N + rn[None, :]
    mask = tl.arange(0, 64) < N                          # should be rn < N, and 2-D
    tile = tl.load(ptrs, mask=mask[None, :] & (rm[:, None] < M))
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], tile)


compile_for(tile_copy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32", "BM": "constexpr", "BN": "constexpr"},
            {"BM": 16, "BN": 32})
