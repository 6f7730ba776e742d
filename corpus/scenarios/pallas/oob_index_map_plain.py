"""The same off-by-one index_map under plain interpret=True: no error, the last block reads padding.
It runs to the end; the wrong output is only visible against a reference."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl


def double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


x = jnp.arange(256 * 256, dtype=jnp.float32).reshape(256, 256)
f = pl.pallas_call(
    double,
    out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    grid=(2,),
    in_specs=[pl.BlockSpec((128, 256), lambda i: (i + 1, 0))],
    out_specs=pl.BlockSpec((128, 256), lambda i: (i, 0)),
    interpret=True,
)
np.testing.assert_allclose(np.asarray(f(x)), np.asarray(x) * 2)
