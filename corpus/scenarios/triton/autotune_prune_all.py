"""An autotuned kernel whose early_config_prune keeps only blocks that divide n; the caller passes
n = 1000, which no configured block (64, 128, 256) divides, so pruning leaves no config to try."""
import torch
import triton
import triton.language as tl


def only_dividing_blocks(configs, named_args, **kwargs):
    n = named_args["n"]
    return [c for c in configs if n % c.kwargs["BLOCK"] == 0]


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (64, 128, 256)], key=["n"],
                 prune_configs_by={"early_config_prune": only_dividing_blocks})
@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


x = torch.randn(1000)
out = torch.empty_like(x)
scale[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
