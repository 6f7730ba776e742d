"""A Pallas kernel whose index_map is off by one block (i + 1): the last step reads past the input.
Run with the TPU interpreter, which checks every block read."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


x = jnp.arange(256 * 256, dtype=jnp.float32).reshape(256, 256)
f = pl.pallas_call(
    double,
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    grid=(2,),
    in_specs=[pl.BlockSpec((128, 256), lambda i: (i + 1, 0))],
    out_specs=pl.BlockSpec((128, 256), lambda i: (i, 0)),
    interpret=pltpu.InterpretParams(),
)
print(f(x).sum())
