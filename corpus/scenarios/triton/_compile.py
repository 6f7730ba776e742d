"""Compile a Triton kernel for an explicit GPU target, with no GPU present (shared by the triton scenarios)."""
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


def compile_for(fn, signature, constexprs=None, cc=90, **options):
    """triton.compile for `cuda` sm_<cc>; prints the outcome the way a build log would."""
    target = GPUTarget("cuda", cc, 32)
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs or {})
    print(f"triton {triton.__version__}: compiling {fn.__name__} for sm_{cc}", flush=True)
    kernel = triton.compile(src, target=target, options=options or None)
    md = kernel.metadata
    print(f"compiled {md.name}: shared={md.shared} bytes, num_warps={md.num_warps}, num_stages={md.num_stages}", flush=True)
    return kernel


if __name__ == "__main__":
    sys.exit("import this module from a scenario")
