"""The caller passes BLOCK=128 by hand to a kernel whose BLOCK is also tuned by @triton.autotune:
the autotuner refuses to benchmark any config."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (64, 128)], key=["n"])
@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


x = torch.randn(1000)
out = torch.empty_like(x)
scale[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
