"""A flattened feature map is reshaped with the wrong patch count."""
import torch

feat = torch.randn(2, 3, 14, 14)
patches = feat.reshape(2, 3, 16, 16)
