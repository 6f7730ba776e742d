"""Profiling target for corpus/gpu/run.sh: a small training-like loop under torch.profiler (CPU + CUDA
activities), exported as a Chrome trace: many small elementwise kernels, a matmul, a host copy per step."""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

out = sys.argv[1] if len(sys.argv) > 1 else "torch_trace.json"
dev = "cuda" if torch.cuda.is_available() else "cpu"
w = torch.randn(1024, 1024, device=dev)
with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])) as prof:
    for step in range(20):
        x = torch.randn(256, 1024).to(dev)          # a host-to-device copy every step
        y = (x @ w).relu_().mul_(0.5).add_(1.0)
        loss = y.sum().item()                        # a synchronisation every step
prof.export_chrome_trace(out)
print(f"wrote {out} ({dev}), last loss {loss:.3f}")
