"""A pre-allocated buffer sized in elements instead of bytes: 2**45 floats (128 TiB) on the host."""
import torch

buffer = torch.empty(1 << 45, dtype=torch.float32)
