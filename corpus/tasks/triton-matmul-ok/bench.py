"""GEMM throughput against torch.matmul (cuBLAS) on the GPU, fp16 both sides, do_bench medians."""
import torch
import triton

from kernel import matmul


def main():
    for m, n, k in ((1024, 1024, 1024), (4096, 4096, 4096)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        ours = triton.testing.do_bench(lambda: matmul(a, b), return_mode="median")
        base = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median")
        tflops = 2 * m * n * k / ours / 1e9
        print(f"{m}x{n}x{k}: triton {ours:.3f} ms ({tflops:.1f} TFLOP/s), cuBLAS {base:.3f} ms")


if __name__ == "__main__":
    main()
