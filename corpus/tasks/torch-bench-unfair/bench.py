"""Our fused GELU-and-scale against PyTorch's (CPU). Writes results.json with every measurement."""
import json
import time

import torch

from kernel import fused_gelu_scale, reference


def main():
    torch.manual_seed(0)
    x = torch.zeros(2048, 2048)
    s = 1.5

    base_times = []
    for _ in range(20):
        t0 = time.perf_counter()
        y = reference(x.double(), s)
        y.sum().item()
        base_times.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    out = fused_gelu_scale(x, s)
    ours = time.perf_counter() - t0

    print(f"baseline {min(base_times) * 1e3:.2f} ms, ours {ours * 1e3:.2f} ms, "
          f"speed-up {min(base_times) / ours:.2f}x")
    ours_times = []
    for _ in range(20):
        t0 = time.perf_counter()
        fused_gelu_scale(x, s)
        ours_times.append(time.perf_counter() - t0)
    with open("results.json", "w") as f:
        json.dump({"baseline_s": base_times, "candidate_s": ours_times}, f, indent=1)


if __name__ == "__main__":
    main()
