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
if command -v diagnose >/dev/null; then DIAG=(diagnose); else DIAG=($PY -m diagnose); fi
timeout 60 "${DIAG[@]}" env --json > "$cap/env.json" 2> "$cap/env.stderr"; echo "diagnose env --json exit $?"
left=$(( LIMIT - ($(date +%s) - start) - 20 ))
# the generator stops starting scenarios, and caps the running one, at --deadline; timeout is the backstop
timeout -k 5 $(( left + 15 )) $PY -m corpus.generate --gpu --jobs 1 --deadline "$left"
rc=$?
echo "== generator exit $rc after $(( $(date +%s) - start )) s"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/logs"
  cp corpus/logs/gpu-*.log "$OUT/logs/" 2>/dev/null
  cp corpus/manifest.tsv "$OUT/" && cp -r "$cap" "$OUT/"
fi
exit $rc
