#!/usr/bin/env bash
# Run every GPU scenario on a GPU machine under a hard overall limit (default 450 s, under 8 minutes
# on an H200), capture `diagnose env --json`, write corpus/logs/gpu-*.log and their manifest rows
# (machine = GPU name, driver, date). Copies the results to $OUT when set (the device tool's folder).
#   usage: corpus/gpu/run.sh            LIMIT=300 corpus/gpu/run.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
LIMIT=${LIMIT:-450}
start=$(date +%s)
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=${PYTHON:-python3}; fi
export GPU_BIN=${GPU_BIN:-$root/corpus/_work/gpu-bin}
cap=corpus/gpu/captured
mkdir -p "$cap"
echo "== $(date -u +%FT%TZ) python: $($PY -V 2>&1); nvcc: $(command -v nvcc || echo none); limit ${LIMIT}s"
timeout 30 nvidia-smi > "$cap/nvidia-smi.txt" 2>&1; echo "nvidia-smi exit $?"
# the environment snapshot, as the project's own probe sees this machine
if command -v diagnose >/dev/null; then DIAG=(diagnose); else DIAG=($PY -m cli); fi
timeout 60 "${DIAG[@]}" env --json > "$cap/env.json" 2> "$cap/env.stderr"; echo "diagnose env --json exit $?"
left=$(( LIMIT - ($(date +%s) - start) - 20 ))
# the generator stops starting scenarios, and caps the running one, at --deadline; timeout is the backstop
timeout -k 5 $(( left + 15 )) $PY -m corpus.generate --gpu --jobs 1 --deadline "$left"
rc=$?
echo "== generator exit $rc after $(( $(date +%s) - start )) s"
# Profiles of real kernels for `diagnose profile` (tests read corpus/gpu/profiles/* when present): ncu
# details + raw CSV and an nsys SQLite export of three transposes, and a torch.profiler trace.
prof=corpus/gpu/profiles
mkdir -p "$prof" "$GPU_BIN"
left=$(( LIMIT - ($(date +%s) - start) ))
if [ "$left" -gt 90 ] && command -v nvcc >/dev/null && nvcc -O3 -arch=native corpus/gpu/profile/transpose.cu -o "$GPU_BIN/transpose"; then
  if command -v ncu >/dev/null; then
    timeout 120 ncu --csv --page details --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section MemoryWorkloadAnalysis_Tables -k regex:transpose -c 3 "$GPU_BIN/transpose" > "$prof/ncu_transpose_details.csv" 2>&1
    echo "ncu details exit $?"
    timeout 120 ncu --csv --page raw -c 3 --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_shared_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct \
      "$GPU_BIN/transpose" > "$prof/ncu_transpose_raw.csv" 2>&1
    echo "ncu raw exit $?"
  fi
  if command -v nsys >/dev/null; then
    timeout 120 nsys profile --trace cuda -o "$prof/transpose" --force-overwrite true --export sqlite "$GPU_BIN/transpose" > /dev/null 2>&1
    echo "nsys exit $?"; rm -f "$prof/transpose.nsys-rep"
  fi
fi
timeout 120 $PY corpus/gpu/profile/torch_trace.py "$prof/torch_trace.json"; echo "torch trace exit $?"
cp "$cap/env.json" "$prof/env.json" 2>/dev/null
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/logs"
  cp corpus/logs/gpu-*.log "$OUT/logs/" 2>/dev/null
  cp corpus/manifest.tsv "$OUT/" && cp -r "$cap" "$OUT/"
  # the device tool returns at most 8 files two folders down: the profiles travel as one archive
  tar czf "$OUT/profiles.tgz" -C corpus/gpu profiles 2>/dev/null
fi
exit $rc
