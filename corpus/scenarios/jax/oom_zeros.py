"""A buffer sized 1 << 40 float32 elements (4 TiB): XLA's allocator refuses it."""
import jax.numpy as jnp

buf = jnp.zeros(1 << 40, dtype=jnp.float32)
print(buf.shape)
