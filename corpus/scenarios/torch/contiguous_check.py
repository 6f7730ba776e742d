"""A kernel launcher that requires contiguous rows, called with a transposed matrix."""
import torch


def fused_rmsnorm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # the hand-written kernel walks each row with stride 1
    torch._check(x.is_contiguous(), lambda: f"fused_rmsnorm: x must be contiguous, got shape {tuple(x.shape)} strides {x.stride()}")
    torch._check(x.shape[-1] == weight.shape[0], lambda: "fused_rmsnorm: hidden size mismatch")
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


x = torch.randn(256, 64).t()
y = fused_rmsnorm(x, torch.ones(256))
