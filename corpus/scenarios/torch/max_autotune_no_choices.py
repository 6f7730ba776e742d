"""torch.compile with max-autotune restricted to the TRITON GEMM backend, on CPU tensors: Triton
templates exist only for GPU devices, so the matmul lowering has no candidate to autotune."""
import torch
import torch._inductor.config as cfg

cfg.max_autotune = True
cfg.max_autotune_gemm_backends = "TRITON"


@torch.compile
def mm(a, b):
    return a @ b


print(mm(torch.randn(64, 64), torch.randn(64, 64)).sum())
