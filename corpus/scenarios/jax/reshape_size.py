"""Reshaping 1176 feature values into 16x16 patches."""
import jax.numpy as jnp

feat = jnp.ones((2, 3, 14, 14))
patches = feat.reshape(2, 3, 16, 16)
