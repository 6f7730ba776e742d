import torch


def fused_gelu_scale(x, s):
    # tanh approximation of GELU, computed in place on a half-precision copy
    h = x.half()
    return (0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h))) * s).float()


def reference(x, s):
    return torch.nn.functional.gelu(x) * s
