"""log of a value that underflows to zero: anomaly mode names the op that produced NaN in backward."""
import torch

torch.manual_seed(0)
with torch.autograd.detect_anomaly():
    x = torch.tensor([1e-30, 0.5, 2.0], requires_grad=True)
    y = torch.sqrt(x.half().float() - 1e-30)
    loss = (y * torch.log(y)).sum()
    loss.backward()
