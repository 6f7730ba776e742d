import jax
import jax.numpy as jnp
import numpy as np

from kernel import matmul


def test_matmul_interpret():
    ka, kb = jax.random.split(jax.random.key(0))
    a = jax.random.normal(ka, (200, 256), jnp.float32)
    b = jax.random.normal(kb, (256, 256), jnp.float32)
    out = matmul(a, b, interpret=True)
    ref = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
    np.save("out.npy", np.asarray(out))
    np.save("ref.npy", ref)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-4, atol=1e-3)


def test_lowers_for_tpu():
    a = jnp.zeros((200, 256), jnp.float32)
    jax.jit(matmul).trace(a, jnp.zeros((256, 256), jnp.float32)).lower(lowering_platforms=("tpu",))
