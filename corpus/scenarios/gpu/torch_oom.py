"""A KV cache sized for 1M tokens at batch 64 on one GPU: the caching allocator reports its numbers."""
import torch

assert torch.cuda.is_available(), "needs a CUDA GPU"
print(torch.cuda.get_device_name(0))
layers, batch, tokens, heads, dim = 32, 64, 1 << 20, 8, 128
kv = torch.empty(layers, 2, batch, tokens, heads, dim, dtype=torch.bfloat16, device="cuda")
