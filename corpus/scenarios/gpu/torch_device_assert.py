"""An embedding lookup with a token id equal to the vocabulary size: CUDA's index check fires a device-side assert."""
import torch

assert torch.cuda.is_available(), "needs a CUDA GPU"
emb = torch.nn.Embedding(32000, 64).cuda()
ids = torch.randint(0, 32000, (4, 128), device="cuda")
ids[1, 7] = 32000                       # bug: tokenizer with an extra special token
out = emb(ids)
print(out.sum().item())
