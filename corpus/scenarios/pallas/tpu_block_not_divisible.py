"""Lowered for TPU (Mosaic) without a TPU: a (100, 100) block is not a multiple of the (8, 128) tile."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


x = jnp.ones((256, 256), jnp.float32)
f = pl.pallas_call(
    double,
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    grid=(2,),
    in_specs=[pl.BlockSpec((100, 100), lambda i: (i, 0))],
    out_specs=pl.BlockSpec((100, 100), lambda i: (i, 0)),
)
jax.jit(f).trace(x).lower(lowering_platforms=("tpu",))
print("lowered for tpu")
