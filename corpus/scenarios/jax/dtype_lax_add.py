"""lax primitives do not promote: int32 positions added to float32 embeddings."""
import jax.numpy as jnp
from jax import lax

pos = jnp.arange(16, dtype=jnp.int32)
emb = jnp.ones(16, dtype=jnp.float32)
out = lax.add(emb, pos)
