"""A bf16 matmul compared against the float32 reference with float32 tolerances."""
import torch

torch.manual_seed(0)
a = torch.randn(64, 256)
b = torch.randn(256, 64)
ref = a @ b
out = (a.bfloat16() @ b.bfloat16()).float()
torch.testing.assert_close(out, ref)
