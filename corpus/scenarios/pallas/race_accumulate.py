"""Eight grid steps accumulate into one output block, but the grid axis is marked "parallel":
with two cores, the race detector of the TPU interpreter sees both cores write the same block."""
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax._src.pallas.mosaic.interpret import interpret_pallas_call as interpreter


def accumulate(x_ref, o_ref):
    o_ref[...] = o_ref[...] + x_ref[...]     # bug: needs an "arbitrary" (sequential) axis and an init at step 0


x = jnp.ones((8, 1024, 128), jnp.float32)
f = pl.pallas_call(
    accumulate,
    out_shape=jax.ShapeDtypeStruct((1024, 128), jnp.float32),
    grid=(8,),
    in_specs=[pl.BlockSpec((None, 1024, 128), lambda i: (i, 0, 0))],
    out_specs=pl.BlockSpec((1024, 128), lambda i: (0, 0)),
    compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    interpret=pltpu.InterpretParams(detect_races=True, num_cores_or_threads=2),
)
out = f(x)
jax.block_until_ready(out)
if interpreter.races is not None and interpreter.races.races_found:
    sys.exit("data race detected in pallas_call accumulate (see RACE DETECTED above)")
print("no race")
