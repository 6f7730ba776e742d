"""An autotuned GEMM whose every config needs more shared memory than the device has."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BM": 256, "BN": 256, "BK": bk}, num_stages=s, num_warps=8)
                          for bk, s in ((128, 4), (128, 5), (256, 3))], key=["K"])
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


a = torch.randn(256, 1024, device="cuda", dtype=torch.float16)
b = torch.randn(1024, 256, device="cuda", dtype=torch.float16)
c = torch.empty(256, 256, device="cuda", dtype=torch.float32)
mm[(1,)](a, b, c, 1024)
torch.cuda.synchronize()
