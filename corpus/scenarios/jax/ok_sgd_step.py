"""A jitted SGD step with a donated parameter buffer: runs and prints its result, no failure."""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, donate_argnums=(0,))
def sgd_step(params, grads):
    return params - 0.1 * grads


p = sgd_step(jnp.ones((128, 128)), jnp.ones((128, 128)))
print("step ok", p.shape, float(p[0, 0]))
