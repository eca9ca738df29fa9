#!/usr/bin/env bash
# Warp reduce trees and block reductions on the H200 (notebooks 03/04): GPU tests, recordings into
# data/ (warp_reduce_traces.json, block_reduce.json, sanitizer_block.json, stamped), then the CPU
# tests that check the emulator reproduces what was just recorded. Logs go to $OUT/block/.
#
#   OUT=/some/dir bash scripts/gpu/block.sh             # from the repo root, on the GPU host
#   BLOCK_STEPS="tests record" OUT=... bash scripts/gpu/block.sh   (default: every step)
#
# Steps: tests (pytest -m gpu tests/gpu/test_{warp,block}_reduce_gpu.py), record
# (python3 -m helpers.recording.record_reduce: traces, block results, and compute-sanitizer racecheck, in its
# default report mode and with --racecheck-report all, and synccheck of every corrected block kernel,
# of the seed's BlockYReduce and of two back-to-back BlockReduce calls, 8 processes at a time),
# replay (the CPU tests against the fresh recordings). Every step runs under `timeout`; a failing
# step does not stop the others. About 3-4 minutes in all.
set -uo pipefail
: "${OUT:?set OUT to a writable folder}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
export WARPLAB_RECORD_INTO=${WARPLAB_RECORD_INTO:-data}   # the shipped recordings (scripts/gpu_verify.sh sets $OUT/recordings unless SHIP=1)
STEPS=${BLOCK_STEPS:-"tests record replay"}
LOG="$OUT/block"
mkdir -p "$LOG"
status=()
note() { status+=("$1: $2"); echo "== block $1: $2"; }
has() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if has tests; then
  timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/gpu/test_warp_reduce_gpu.py tests/gpu/test_block_reduce_gpu.py > "$LOG/tests.log" 2>&1
  rc=$?; note tests "exit $rc ($(tail -1 "$LOG/tests.log"))"
fi

if has record; then
  timeout 360 python3 -m helpers.recording.record_reduce > "$LOG/record.log" 2>&1
  rc=$?; note record "exit $rc ($(grep -c UNEXPECTED "$LOG/record.log") unexpected sanitizer outcomes)"
fi

if has replay; then
  # The emulator must reproduce every recording: run the CPU tests on the emulator backend.
  WARPLAB_BACKEND=emulator timeout 120 python3 -m pytest -q -p no:cacheprovider \
    tests/topics/test_warp_reduce.py tests/topics/test_block_reduce.py -k "recorded" > "$LOG/replay.log" 2>&1
  rc=$?; note replay "exit $rc ($(tail -1 "$LOG/replay.log"))"
fi

echo
echo "== block summary (logs in $LOG)"
for s in "${status[@]}"; do echo "  $s"; done
grep -E "^  (racecheck|synccheck) " "$LOG/record.log" 2>/dev/null
grep -E "^(FAILED|ERROR)" "$LOG/tests.log" "$LOG/replay.log" 2>/dev/null | head -20
exit 0
