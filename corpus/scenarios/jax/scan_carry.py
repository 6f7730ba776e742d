"""A lax.scan body that changes the carry's dtype (float32 in, float16 out)."""
import jax.numpy as jnp
from jax import lax


def step(carry, x):
    return (carry + x).astype(jnp.float16), carry


lax.scan(step, jnp.float32(0), jnp.arange(4.0))
