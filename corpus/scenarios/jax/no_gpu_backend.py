"""Asks for the GPU backend with a CPU-only jaxlib (no CUDA plugin installed)."""
import jax

print("jax", jax.__version__, "default backend:", jax.default_backend())
gpus = jax.devices("gpu")
