"""Class targets stored as float, where cross_entropy expects int64 class indices."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
logits = torch.randn(8, 10)
targets = torch.randint(0, 10, (8,)).float()
loss = F.nll_loss(F.log_softmax(logits, dim=-1), targets)
