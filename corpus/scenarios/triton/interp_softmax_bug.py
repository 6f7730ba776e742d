"""A row softmax whose masked lanes load 0.0 instead of -inf: exp(0) = 1 leaks into every row sum.
Run under TRITON_INTERPRET=1 (numpy), checked against torch.softmax."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)   # bug: other should be -inf
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=mask)


torch.manual_seed(0)
x = torch.randn(8, 100)
y = torch.empty_like(x)
softmax_rows[(8,)](x, y, 100, BLOCK=128)
torch.testing.assert_close(y, torch.softmax(x, dim=-1))
