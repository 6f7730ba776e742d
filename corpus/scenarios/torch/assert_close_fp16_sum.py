"""A long reduction accumulated in float16 drifts from the float32 reference."""
import torch

torch.manual_seed(0)
x = torch.rand(4, 8192)
ref = x.sum(dim=-1)
acc = torch.zeros(4, dtype=torch.float16)
for chunk in x.half().split(256, dim=-1):
    acc = acc + chunk.sum(dim=-1)
torch.testing.assert_close(acc.float(), ref, rtol=1e-3, atol=1e-3)
