"""Kernel source parsed to trees, shared by the readers of source (lint, timing).

- `diagnose.source.python`: Python kernels (Triton, Pallas, NKI) with the standard `ast`.
- `diagnose.source.cuda`: CUDA C++ (.cu/.cuh/.cpp/.h) with tree-sitter and the tree-sitter-cuda
  grammar (templates and `<<<grid, block, smem, stream>>>` launches included).

Both give a parsed file (`PySource`, `CudaSource`) with its lines and a `loc(node)` that is the
1-based (line, column) a `findings.Evidence` wants, and small helpers to walk calls and subscripts.
An unreadable or unparseable file raises `SourceError` (its message names the file); a CLI turns it
into a usage error (exit 2).
"""
from __future__ import annotations

from pathlib import Path

PYTHON_SUFFIXES = (".py",)
CUDA_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh")

# a kernel file bigger than this is not a kernel: refuse it rather than parse it
MAX_BYTES = 8 * 1024 * 1024


class SourceError(ValueError):
    """A source file that cannot be read or parsed; the message names the file and what to do."""


def language_of(path) -> str | None:
    """'python', 'cuda' or None, from the file's suffix."""
    suffix = Path(path).suffix.lower()
    if suffix in PYTHON_SUFFIXES:
        return "python"
    if suffix in CUDA_SUFFIXES:
        return "cuda"
    return None


def read_bytes(path) -> bytes:
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as e:
        raise SourceError(f"{path}: cannot read ({e.strerror or e})") from None
    if size > MAX_BYTES:
        raise SourceError(f"{path}: {size:,} bytes is larger than a kernel source file "
                          f"({MAX_BYTES:,} bytes at most); pass the kernel files themselves")
    try:
        return p.read_bytes()
    except OSError as e:
        raise SourceError(f"{path}: cannot read ({e.strerror or e})") from None


def parse(path, data: bytes | None = None):
    """Parse a file by its suffix: a `PySource` or a `CudaSource`."""
    lang = language_of(path)
    if lang == "python":
        from diagnose.source import python

        return python.parse(path, data)
    if lang == "cuda":
        from diagnose.source import cuda

        return cuda.parse(path, data)
    raise SourceError(f"{path}: not a kernel source file (expected {', '.join(PYTHON_SUFFIXES + CUDA_SUFFIXES)})")
