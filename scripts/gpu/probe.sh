#!/usr/bin/env bash
# Exploration runs (not recordings) on the H200: scripts/gpu/reduce_probe.py over v9's settings at
# every size, then scripts/gpu/one_block_probe.py (one-block tree and load variants). Prints tables;
# writes $OUT/probe.json and $OUT/one_block.json; scripts/gpu/floor_probe.py (what the launch, the
# loads, the block tree and the combine each cost) writes $OUT/floor.json. "sass" last reads back, from
# CuPy's kernel cache (fresh for the run), the SASS the probes ran: loads in flight and registers per
# kernel (scripts/gpu/cupy_sass.py, $OUT/sass.json). What they showed: docs/probes/.
#   PROBES="one_block floor sass" OUT=... bash scripts/gpu/probe.sh     (default: "v9 one_block")
set -uo pipefail
: "${OUT:?}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-$(mktemp -d /tmp/warplab_cupy_cache.XXXXXX)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
for p in ${PROBES:-v9 one_block}; do
  case $p in
    v9) timeout "${PROBE_TIMEOUT:-360}" python3 scripts/gpu/reduce_probe.py "$OUT/probe.json" ${PROBE_ARGS:-} 2>&1 | tee "$OUT/probe.log" ;;
    one_block) timeout 300 python3 scripts/gpu/one_block_probe.py "$OUT/one_block.json" 2>&1 | tee "$OUT/one_block.log" ;;
    floor) timeout "${PROBE_TIMEOUT:-420}" python3 scripts/gpu/floor_probe.py "$OUT/floor.json" ${PROBE_ARGS:-} 2>&1 | tee "$OUT/floor.log" ;;
    sass) timeout 120 python3 scripts/gpu/cupy_sass.py "$CUPY_CACHE_DIR" "$OUT/sass.json" 2>&1 | tee "$OUT/sass.log" ;;
    *) echo "unknown probe $p" ;;
  esac
done
