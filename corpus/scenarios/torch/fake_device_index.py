"""An embedding table on cuda indexed with ids left on the cpu, traced under FakeTensorMode."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

with FakeTensorMode():
    table = torch.empty(1000, 64, device="cuda")
    emb = torch.nn.functional.embedding(torch.zeros(4, dtype=torch.long, device="cpu"), table)
    out = emb + torch.empty(4, 64, device="cpu")
