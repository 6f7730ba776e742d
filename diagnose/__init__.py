"""diagnose: failure-mode diagnosis for GPU and accelerator kernels."""

__version__ = "0.1.0"
