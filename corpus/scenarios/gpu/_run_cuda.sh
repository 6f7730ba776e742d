#!/usr/bin/env bash
# Build a CUDA scenario with nvcc and run it; on a GPU machine without nvcc, run the binary that
# corpus/gpu/build.sh built from the same source and flags (carried in corpus/_work/gpu-bin).
# usage: _run_cuda.sh NAME.cu [nvcc flags...] [-- runner...]
set -u
src=$1; shift
flags=(); runner=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; runner=("$@"); break; fi
  flags+=("$1"); shift
done
name=${src%.cu}
if command -v nvcc >/dev/null; then
  nvcc "${flags[@]}" "$src" -o "$name" || exit $?
else
  bin=${GPU_BIN:-}/$name
  [ -x "$bin" ] || { echo "no nvcc and no prebuilt $bin" >&2; exit 3; }
  cp "$bin" "./$name"
fi
exec "${runner[@]}" "./$name"
