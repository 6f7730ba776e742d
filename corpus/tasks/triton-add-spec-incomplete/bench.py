"""Benchmark add() against torch.add on the GPU (triton.testing.do_bench: warm-up, cache flush, median)."""
import torch
import triton

from kernel import add


def main():
    for n in (2**20, 2**24, 2**26):
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        ms_triton = triton.testing.do_bench(lambda: add(x, y), warmup=25, rep=100, return_mode="median")
        ms_torch = triton.testing.do_bench(lambda: torch.add(x, y), warmup=25, rep=100, return_mode="median")
        gbps = 3 * n * 4 / ms_triton / 1e6
        print(f"n={n}: triton {ms_triton:.4f} ms ({gbps:.0f} GB/s), torch {ms_torch:.4f} ms, "
              f"speed-up {ms_torch / ms_triton:.2f}x")


if __name__ == "__main__":
    main()
