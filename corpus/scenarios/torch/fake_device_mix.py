"""A cuda activation and a cpu weight, traced under FakeTensorMode (no GPU needed to see the mismatch)."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

with FakeTensorMode(allow_non_fake_inputs=False):
    x = torch.empty(8, 64, device="cuda")
    w = torch.empty(64, 64, device="cpu")
    print("x on", x.device, "w on", w.device)
    y = torch.mm(x, w)
