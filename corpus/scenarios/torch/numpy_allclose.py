"""A float16 layer norm compared against numpy float64 with numpy's default tolerance."""
import numpy as np
import torch

torch.manual_seed(0)
x = torch.randn(16, 384)
out = torch.nn.functional.layer_norm(x.half(), (384,)).float().numpy()
xd = x.double().numpy()
ref = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5)
np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
