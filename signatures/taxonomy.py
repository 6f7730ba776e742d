"""Failure families and origins, spelled exactly as the evaluations spell them."""

FAMILIES: dict[str, str] = {
    "oom": "device memory exhausted",
    "shared-memory-exceeded": "on-chip memory over the hardware limit (shared memory, SBUF/PSUM, VMEM)",
    "launch-config": "the launch itself is invalid for the device",
    "illegal-memory-access": "a kernel touched memory it must not",
    "device-assert": "an assertion inside device code fired",
    "shape-stride-mismatch": "shapes, sizes, strides or contiguity disagree with what the kernel assumes",
    "dtype-mismatch": "element types disagree",
    "device-placement": "data on the wrong device or address space",
    "autotune-failure": "autotuning could not produce a usable config",
    "compile-error": "the kernel source or its lowering does not compile",
    "arch-mismatch": "the binary or toolchain does not target this GPU",
    "driver-mismatch": "driver older or otherwise incompatible with the runtime/libraries",
    "missing-library": "a needed library, toolkit or driver is absent or unloadable",
    "numerical-mismatch": "it ran, but the numbers are wrong or non-finite",
    "timeout-hang": "the work did not finish in time",
    "hardware-fault": "the device itself failed",
    "collective-comm": "multi-GPU communication failed (not a timeout)",
    "none": "the log shows no failure (warnings alone are not failures)",
    "unknown": "the log shows a failure that no signature explains",
}

ORIGINS: dict[str, str] = {
    "kernel-logic": "the kernel's own code is wrong",
    "runtime-assumption": "the kernel assumed something about its inputs or launch that the caller broke",
    "resource-limit": "a valid kernel asked for more than this device has",
    "environment": "installation, driver, toolkit or library problem",
    "hardware": "the device is faulty",
    "numerics": "precision or tolerance, not a crash",
}

# How a signature takes part in a cascade.
#   root     a cause: wins over symptoms and wrappers
#   symptom  a consequence of an earlier fault (CUBLAS errors on a poisoned context)
#   wrapper  reports that something inner failed (autotuner, NCCL watchdog); used when nothing deeper is found
#   benign   says the failure around it was caught and handled (fallbacks): the log reads as `none`
ROLES = ("root", "symptom", "wrapper", "benign")

# Families whose root explains every other failure line of the log, before or after it: the device
# itself failed (an Xid, fallen off the bus, uncorrectable ECC), so a CUDA error, "no CUDA-capable
# device" or a lost GPU around it is its consequence, not a rival cause (engine._chain: `symptom`).
EXPLAINS_ALL = ("hardware-fault",)

# Families whose failure poisons the CUDA (HIP) context: the error is sticky, so every later call on
# that context fails with the same error (cudaFree in a destructor, cudaStreamSynchronize, a cuBLAS or
# TensorRT call, a finalizer). After such a root, a later report of the root's own family by another
# call is its symptom, not a detail of the root's message (engine._dead_context_call). Not
# launch-config or oom: those errors are not sticky, a later call can succeed.
# A driver older than the runtime is sticky too: every later CUDA call returns the same error 35
# (gunrock's cudaSetDevice, then cudaStreamCreate, g58-009).
POISONS_CONTEXT = ("illegal-memory-access", "device-assert", "hardware-fault", "driver-mismatch")

# Families a reviewer reads as "no answer": never carried by a signature, except `none` by a benign
# one and `unknown` by a NOT_GPU_PREFIX one.
NON_FAILURE = ("none", "unknown")

# A signature of a known failure that is not a GPU failure (host RAM exhausted): its family is
# `unknown`, its id starts with this (signatures/data/not-gpu.toml). is_not_gpu() tells the engine
# such an answer is explained, not a log a signature should be written for.
NOT_GPU_PREFIX = "not-gpu."


def is_not_gpu(family: str, signature: str | None) -> bool:
    return family == "unknown" and (signature or "").startswith(NOT_GPU_PREFIX)

# The ecosystems advice is written for (diagnose/advice/frameworks.toml describes each; a test holds
# the two lists equal). A signature's `fix_for` / `next_step_for` keys are these names.
ECOSYSTEMS = ("neuron", "jax", "tensorflow", "triton", "lua-torch", "julia", "rocm", "pytorch", "python",
              "native", "nvidia", "tpu", "generic")
