"""A histogram that increments bins with a plain load/store instead of tl.atomic_add: when one block
holds the same bin several times, its lanes race on that bin and only one increment survives.
Run under TRITON_INTERPRET=1, checked against torch.bincount."""
import torch
import triton
import triton.language as tl


@triton.jit
def histogram(x_ptr, bins_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    b = tl.load(x_ptr + offs, mask=mask, other=0)
    count = tl.load(bins_ptr + b, mask=mask)
    tl.store(bins_ptr + b, count + 1, mask=mask)       # bug: needs tl.atomic_add(bins_ptr + b, 1, mask=mask)


torch.manual_seed(0)
x = torch.randint(0, 16, (4096,), dtype=torch.int32)
bins = torch.zeros(16, dtype=torch.int32)
histogram[(4096 // 256,)](x, bins, 4096, BLOCK=256)
print("total count", int(bins.sum()), "expected", x.numel())
torch.testing.assert_close(bins, torch.bincount(x, minlength=16).to(torch.int32))
