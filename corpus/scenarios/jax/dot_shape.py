"""A projection whose weight has the wrong input width (384 instead of 512)."""
import jax
import jax.numpy as jnp

x = jnp.ones((8, 512))
w = jnp.ones((384, 256))
y = jax.jit(jnp.dot)(x, w)
