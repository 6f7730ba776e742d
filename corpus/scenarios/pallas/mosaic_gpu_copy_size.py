"""Lowered for GPU with Mosaic GPU (the default GPU backend): a 100-float block (400 bytes) cannot be
copied by a 128-thread warpgroup."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


y = jnp.ones((100,), jnp.float32)
f = pl.pallas_call(double, out_shape=jax.ShapeDtypeStruct(y.shape, y.dtype))
jax.jit(f).trace(y).lower(lowering_platforms=("cuda",))
print("lowered for cuda")
