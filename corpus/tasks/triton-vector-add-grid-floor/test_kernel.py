import os

os.environ.setdefault("TRITON_INTERPRET", "1")   # no GPU here: the Triton interpreter runs the kernel

import numpy as np
import pytest
import torch

from kernel import add


@pytest.mark.parametrize("n", [1000, 98432])
def test_add(n):
    torch.manual_seed(n)
    x, y = torch.rand(n), torch.rand(n)
    out = add(x, y)
    ref = x.double() + y.double()
    if n == 1000:
        np.save("out.npy", out.numpy())
        np.save("ref.npy", ref.numpy())
    torch.testing.assert_close(out, ref.float())
