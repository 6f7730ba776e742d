"""An attention-style kernel launched over (batch, heads, query blocks, key blocks): four grid
dimensions, one more than a launch can have (run in the interpreter, CPU tensors)."""
import torch
import triton
import triton.language as tl


@triton.jit
def scores(q_ptr, k_ptr, out_ptr, BLOCK: tl.constexpr):
    pid_m = tl.program_id(2)
    offs = pid_m * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(q_ptr + offs) * tl.load(k_ptr + offs))


batch, heads, seq, BLOCK = 2, 4, 64, 16
q = torch.randn(batch * heads * seq)
k = torch.randn_like(q)
out = torch.empty_like(q)
grid = (batch, heads, seq // BLOCK, seq // BLOCK)
scores[grid](q, k, out, BLOCK=BLOCK)
