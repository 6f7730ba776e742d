"""A producer/consumer handshake: program 0 spins until a flag is set, but no program ever sets it.
Under TRITON_INTERPRET=1 the spin never ends; the harness's timeout kills it."""
import torch
import triton
import triton.language as tl


@triton.jit
def consumer(flag_ptr, out_ptr):
    while tl.load(flag_ptr) == 0:      # bug: the producer kernel was never launched
        pass
    tl.store(out_ptr, 1)


flag = torch.zeros(1, dtype=torch.int32)
out = torch.zeros(1, dtype=torch.int32)
print("launching consumer; waiting for the producer's flag", flush=True)
consumer[(1,)](flag, out)
print("done", int(out))
