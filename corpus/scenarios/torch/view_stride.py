"""Heads are merged with .view() after a transpose: the tensor is no longer contiguous."""
import torch

x = torch.randn(2, 16, 8, 64)          # (batch, seq, heads, head_dim)
x = x.transpose(1, 2)                  # (batch, heads, seq, head_dim), a strided view
print("stride after transpose:", x.stride(), "contiguous:", x.is_contiguous())
merged = x.view(2, 8, 16 * 64)
