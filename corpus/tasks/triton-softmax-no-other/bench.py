"""Softmax against torch.softmax on the GPU: CUDA events after a warm-up, median of 100 runs."""
import statistics

import torch

from kernel import softmax


def time_ms(fn, reps=100, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), statistics.stdev(times)


def main():
    x = torch.randn(4096, 781, device="cuda")
    ours, ours_sd = time_ms(lambda: softmax(x))
    base, base_sd = time_ms(lambda: torch.softmax(x, dim=-1))
    print(f"triton {ours:.4f} ms (sd {ours_sd:.4f}), torch {base:.4f} ms (sd {base_sd:.4f}), "
          f"speed-up {base / ours:.2f}x")


if __name__ == "__main__":
    main()
