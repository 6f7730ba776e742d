"""Allocates directly on the GPU with a CPU-only torch build."""
import torch

x = torch.randn(1024, 1024, device="cuda")
