"""Runs fine; uses the deprecated torch.cpu.amp.autocast spelling and the legacy TF32 switch."""
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.manual_seed(0)
model = torch.nn.Linear(32, 32)
with torch.cpu.amp.autocast(dtype=torch.bfloat16):
    y = model(torch.randn(4, 32))
print("output", tuple(y.shape), y.dtype)
