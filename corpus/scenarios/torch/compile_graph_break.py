"""fullgraph=True with a data-dependent Python branch: dynamo cannot trace it into one graph."""
import torch


@torch.compile(fullgraph=True, backend="inductor")
def clipped_step(x):
    if x.sum().item() > 0:
        return x * 2
    return x


clipped_step(torch.randn(16))
