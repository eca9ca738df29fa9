#!/usr/bin/env bash
# The whole H200 verification in one command (run from the repo root on the GPU host, with $OUT set):
# hardware-equivalence tests, recordings into data/, then every topic's scripts/gpu/*.sh.
# Afterwards data/ is packed into $OUT/data.tar.gz; commit what it holds (never edit it by hand).
#   STEPS="core reduce block notebooks" bash scripts/gpu_verify.sh   (default: all)
set -uo pipefail
: "${OUT:?set OUT to a writable folder}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
STEPS=${STEPS:-"core reduce block notebooks"}
summary="$OUT/summary.txt"; : > "$summary"
step() { echo "== $1: $2" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$summary"
python3 -c 'import helpers.engine.backend as b; print(b.report())' | tee -a "$summary"

for s in $STEPS; do
  case $s in
    core)
      timeout 300 python3 -m pytest -q -s -m gpu tests/gpu/test_equivalence.py tests/gpu/test_ballot_uses_gpu.py 2>&1 | tee "$OUT/core.log" | tail -5
      step core "pytest exit ${PIPESTATUS[0]}; $(grep -h EQUIVALENCE "$OUT/core.log")"
      timeout 300 python3 -m helpers.recording.record --only-core 2>&1 | tee -a "$OUT/core.log" | tail -12
      step record "exit ${PIPESTATUS[0]}" ;;
    notebooks)
      if [ -d /tmp/site ]; then
        timeout 240 python3 -m pytest -q --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks \
          -p no:cacheprovider 2>&1 | tee "$OUT/notebooks.log" | tail -15
        step notebooks "nbval exit ${PIPESTATUS[0]}"
      else
        step notebooks "skipped: no notebook stack (carry .whl)"
      fi ;;
    *)
      if [ -f "scripts/gpu/$s.sh" ]; then
        timeout 600 bash "scripts/gpu/$s.sh" 2>&1 | tee "$OUT/$s.log" | tail -25
        step "$s" "exit ${PIPESTATUS[0]}"
      else
        step "$s" "no scripts/gpu/$s.sh"
      fi ;;
  esac
done
tar czf "$OUT/data.tar.gz" data
cat "$summary"
