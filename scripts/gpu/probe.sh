#!/usr/bin/env bash
# Exploration run (not a recording): scripts/gpu/reduce_probe.py over v9's settings, then ncu on
# the best setting at 2^20 beside cupy.sum. Prints tables; writes $OUT/probe.json.
set -uo pipefail
: "${OUT:?}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
timeout "${PROBE_TIMEOUT:-360}" python3 scripts/gpu/reduce_probe.py "$OUT/probe.json" ${PROBE_ARGS:-} 2>&1 | tee "$OUT/probe.log"
