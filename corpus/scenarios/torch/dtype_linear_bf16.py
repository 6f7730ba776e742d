"""A bfloat16 model gets float32 input."""
import torch

torch.manual_seed(0)
layer = torch.nn.Linear(32, 32).to(torch.bfloat16)
x = torch.randn(4, 32)
y = layer(x)
