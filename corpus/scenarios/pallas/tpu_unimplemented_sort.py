"""Lowered for TPU without a TPU: jnp.sort inside a Pallas kernel has no Mosaic lowering."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def sort_rows(x_ref, o_ref):
    o_ref[...] = jnp.sort(x_ref[...], axis=-1)


x = jnp.ones((256, 256), jnp.float32)
f = pl.pallas_call(sort_rows, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))
jax.jit(f).trace(x).lower(lowering_platforms=("tpu",))
print("lowered for tpu")
