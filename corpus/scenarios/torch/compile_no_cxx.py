"""torch.compile on CPU needs a C++ compiler for inductor's kernels; CXX names one that is not installed."""
import os
import torch

print("CXX =", os.environ.get("CXX"))


@torch.compile(backend="inductor")
def fused(x, y):
    return torch.relu(x @ y + 1.0).sum(dim=-1)


fused(torch.randn(32, 32), torch.randn(32, 32))
