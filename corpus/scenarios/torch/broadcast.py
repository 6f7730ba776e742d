"""A bias of the wrong length is added to a batch of rows."""
import torch

x = torch.randn(32, 100)
bias = torch.zeros(128)
y = x + bias
