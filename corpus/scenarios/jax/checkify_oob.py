"""JAX clamps out-of-bounds gathers silently; checkify's index checks turn that into an error."""
import jax
import jax.numpy as jnp
from jax.experimental import checkify


def take_last(x, n):
    return x[n]          # bug: n is the length, not the last index


checked = checkify.checkify(jax.jit(take_last), errors=checkify.index_checks)
err, out = checked(jnp.arange(8.0), 8)
err.throw()
