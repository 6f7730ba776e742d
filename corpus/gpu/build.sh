#!/usr/bin/env bash
# Build the CUDA GPU scenarios here (nvcc, no GPU needed) into corpus/_work/gpu-bin, with the same flags
# their scenarios.toml commands use, so a GPU machine without nvcc can still run them (carry that folder).
# Also a compile-only check of every GPU .cu file for sm_90.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/corpus/scenarios/gpu
out=${GPU_BIN:-$root/corpus/_work/gpu-bin}
mkdir -p "$out"
build() { local name=$1; shift; nvcc "$@" -I"$src" "$src/$name.cu" -o "$out/$name"; echo "built $out/$name ($*)"; }
build illegal_address -arch=sm_90
build misaligned -arch=sm_90
build device_assert -arch=sm_90
build invalid_config -arch=sm_90
build too_many_resources -arch=sm_90 -maxrregcount=255
build no_kernel_image -gencode arch=compute_80,code=sm_80
build cuda_oom -arch=sm_90
build dynamic_smem -arch=sm_90
build oob_by_one -arch=sm_90 -lineinfo
build smem_race -arch=sm_90 -lineinfo
