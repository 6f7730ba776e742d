"""Lowered for GPU with the Pallas Triton backend, no GPU needed: a 100-element block is not a power of 2."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


y = jnp.ones((100,), jnp.float32)
f = pl.pallas_call(double, out_shape=jax.ShapeDtypeStruct(y.shape, y.dtype),
                   compiler_params=pltriton.CompilerParams(num_warps=4))
jax.jit(f).trace(y).lower(lowering_platforms=("cuda",))
print("lowered for cuda")
