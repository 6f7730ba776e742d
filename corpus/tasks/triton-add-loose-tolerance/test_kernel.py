import os

os.environ.setdefault("TRITON_INTERPRET", "1")   # no GPU here: the Triton interpreter runs the kernel

import numpy as np
import torch

from kernel import add


def test_add():
    torch.manual_seed(0)
    x, y = 0.5 * torch.rand(5000), 0.5 * torch.rand(5000)
    out = add(x, y)
    ref = x.double() + y.double()
    np.save("out.npy", out.numpy())
    np.save("ref.npy", ref.numpy())
    torch.testing.assert_close(out, ref.float(), atol=1.0, rtol=0.0)
