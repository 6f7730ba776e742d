"""A correctly tiled kernel (128 x 256 blocks) lowers for TPU without a TPU: no failure."""
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
    in_specs=[pl.BlockSpec((128, 256), lambda i: (i, 0))],
    out_specs=pl.BlockSpec((128, 256), lambda i: (i, 0)),
)
lowered = jax.jit(f).trace(x).lower(lowering_platforms=("tpu",))
print("lowered for tpu:", "tpu_custom_call" in lowered.as_text())
