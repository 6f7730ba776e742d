"""jax_debug_nans catches the op that first produces a NaN (log of a negative variance estimate)."""
import jax
import jax.numpy as jnp

jax.config.update("jax_debug_nans", True)


@jax.jit
def log_var(x):
    var = jnp.mean(x * x) - jnp.mean(x) ** 2 - 1.0    # bug: subtracts an epsilon instead of adding it
    return jnp.log(var)


print(log_var(jnp.linspace(0.0, 1.0, 32)))
