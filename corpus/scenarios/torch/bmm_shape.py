"""Attention scores with keys that were never transposed: q @ k needs k as (B, D, S)."""
import torch

torch.manual_seed(0)
q = torch.randn(4, 128, 64)
k = torch.randn(4, 128, 64)
scores = torch.bmm(q, k)
