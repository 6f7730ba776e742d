"""A compiled attention block whose value projection has the wrong width: caught while tracing."""
import torch


@torch.compile(backend="inductor")
def attention(q, k, v):
    s = torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1)
    return s @ v


q = torch.randn(2, 16, 64)
k = torch.randn(2, 16, 64)
v = torch.randn(2, 32, 64)
attention(q, k, v)
