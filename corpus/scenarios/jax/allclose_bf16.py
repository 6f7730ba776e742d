"""A bfloat16 matmul compared with the float32 result at float32 tolerance."""
import jax
import jax.numpy as jnp
import numpy as np

k1, k2 = jax.random.split(jax.random.key(0))
a = jax.random.normal(k1, (64, 256))
b = jax.random.normal(k2, (256, 64))
ref = a @ b
out = (a.astype(jnp.bfloat16) @ b.astype(jnp.bfloat16)).astype(jnp.float32)
np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-5, atol=1e-5)
