"""A projection layer built for 512 features is fed 768-feature activations."""
import torch

torch.manual_seed(0)
proj = torch.nn.Linear(512, 256)
hidden = torch.randn(8, 768)
print("hidden", tuple(hidden.shape), "weight", tuple(proj.weight.shape))
out = proj(hidden)
