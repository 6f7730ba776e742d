"""A Triton kernel launched on the GPU with one argument left on the CPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


x = torch.randn(4096, device="cuda")
y = torch.randn(4096)                  # bug: never moved to the GPU
z = torch.empty_like(x)
add[(4,)](x, y, z, 4096, BLOCK=1024)
torch.cuda.synchronize()
