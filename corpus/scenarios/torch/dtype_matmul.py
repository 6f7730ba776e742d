"""Half-precision activations meet float32 weights in a matmul."""
import torch

torch.manual_seed(0)
w = torch.randn(64, 64)                       # float32 weights
x = torch.randn(16, 64, dtype=torch.float16)  # activations cast to half upstream
y = x @ w
