"""Lowered for GPU with Mosaic GPU: a 512 x 1024 float32 array placed whole in shared memory (2 MiB per operand)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


y = jnp.ones((512, 1024), jnp.float32)
f = pl.pallas_call(
    double,
    out_shape=jax.ShapeDtypeStruct(y.shape, y.dtype),
    in_specs=[pl.BlockSpec(memory_space=plgpu.SMEM)],
    out_specs=pl.BlockSpec(memory_space=plgpu.SMEM),
    compiler_params=plgpu.CompilerParams(),
)
jax.jit(f).trace(y).lower(lowering_platforms=("cuda",))
print("lowered for cuda")
