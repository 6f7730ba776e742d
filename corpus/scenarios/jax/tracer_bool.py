"""Python control flow on a traced value inside jax.jit."""
import jax
import jax.numpy as jnp


@jax.jit
def clip_grad(g):
    if jnp.linalg.norm(g) > 1.0:
        return g / jnp.linalg.norm(g)
    return g


clip_grad(jnp.ones(4))
