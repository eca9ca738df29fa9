#!/usr/bin/env bash
# The GPU verification in one command, on whichever GPU the host has (H100, H200, ...): from the
# repo root, with $OUT set to a writable folder:
#
#   OUT=/some/dir bash scripts/gpu_verify.sh
#
# Default steps, in this order (STEPS="..." picks others; each runs under `timeout`, a failing step
# does not stop the rest):
#   tests      every GPU test (pytest -m gpu tests/gpu tests/exercises/test_exercises_gpu.py), $OUT/tests.log; its CEILING line is this
#              GPU's memory ceiling as tests/gpu/test_reduce_tools_gpu.py read it from the device
#   bench      python -m helpers.bench --record: the ladder 2^20..2^28 on this GPU, the line naming
#              its memory ceiling and source, the relative verdicts (the H200's absolute goals only
#              on an H200), $OUT/bench.log; the run recorded, stamped with this GPU, in $OUT/recordings/
#   record     python -m helpers.recording.record --no-bench --no-sanitizer: the core and notebook 03-04 recordings,
#              stamped with this GPU, into $OUT/recordings/ (what a learner's local-recordings/ holds)
#   notebooks  strict nbval of every notebook on the GPU against the stored outputs (needs the
#              notebook stack in /tmp/site: /work/shared/gpu-host/README.md), $OUT/notebooks.log
# Further steps: sweep (bench --sweep --record into $OUT/recordings/), and the H200's data/ refresh:
#   core (equivalence tests + record --only-core), reduce, block, ... (scripts/gpu/<step>.sh).
# Recordings go to $OUT/recordings/ (WARPLAB_RECORD_INTO), never data/, unless SHIP=1 (on the H200
# only: refresh the shipped recordings in data/, packed into $OUT/data.tar.gz to commit; never by hand).
# One `run` call is limited to 600 s: run STEPS="tests" and STEPS="bench record notebooks" as two calls.
# Everything lands under $OUT: summary.txt (one line per step, the GPU, the ceiling), the logs, the
# recordings (and $OUT/recordings.tar.gz).
set -uo pipefail
: "${OUT:?set OUT to a writable folder}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
if [ "${SHIP:-0}" = 1 ]; then
  export WARPLAB_RECORD_INTO=data
else
  export WARPLAB_RECORD_INTO="$OUT/recordings"
  mkdir -p "$WARPLAB_RECORD_INTO"
fi
STEPS=${STEPS:-"tests bench record notebooks"}
summary="$OUT/summary.txt"; : > "$summary"
step() { echo "== $1: $2" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.mem --format=csv | tee -a "$summary"
python3 -c 'import helpers.engine.backend as b; print(b.report())' | tee -a "$summary"
echo "recordings into: $WARPLAB_RECORD_INTO" | tee -a "$summary"

for s in $STEPS; do
  case $s in
    tests)
      timeout 400 python3 -m pytest -q -s -m gpu -p no:cacheprovider tests/gpu tests/exercises/test_exercises_gpu.py > "$OUT/tests.log" 2>&1
      rc=$?
      step tests "pytest exit $rc: $(tail -1 "$OUT/tests.log")"
      grep -h "^CEILING\|EQUIVALENCE" "$OUT/tests.log" | tee -a "$summary"
      [ $rc -ne 0 ] && grep -E "^(FAILED|ERROR) " "$OUT/tests.log" | head -20 | tee -a "$summary" ;;
    bench)
      timeout 240 python3 -m helpers.bench --record > "$OUT/bench.log" 2> "$OUT/bench.err"
      step bench "exit $? ($(grep -c '^PASS' "$OUT/bench.log") PASS, $(grep -c '^FAIL' "$OUT/bench.log") FAIL)"
      grep -h "^memory ceiling" "$OUT/bench.log" | tee -a "$summary"
      grep -h "^FAIL\|^PASS  best" "$OUT/bench.log" | tee -a "$summary"
      grep -h "^recorded:" "$OUT/bench.err" | tee -a "$summary" ;;
    sweep)
      timeout 300 python3 -m helpers.bench --sweep --record > "$OUT/sweep.log" 2> "$OUT/sweep.err"
      step sweep "exit $? ($(grep -c '^PASS' "$OUT/sweep.log") PASS, $(grep -c '^FAIL' "$OUT/sweep.log") FAIL)" ;;
    record)
      timeout 240 python3 -m helpers.recording.record --no-bench --no-sanitizer > "$OUT/record.log" 2>&1
      step record "exit $? ($(grep -c '^wrote' "$OUT/record.log") files written)"
      grep -h "^wrote" "$OUT/record.log" | tee -a "$summary" ;;
    core)
      timeout 300 python3 -m pytest -q -s -m gpu tests/gpu/test_equivalence.py tests/gpu/test_ballot_uses_gpu.py 2>&1 | tee "$OUT/core.log" | tail -5
      step core "pytest exit ${PIPESTATUS[0]}; $(grep -h EQUIVALENCE "$OUT/core.log")"
      timeout 300 python3 -m helpers.recording.record --only-core 2>&1 | tee -a "$OUT/core.log" | tail -12
      step core-record "exit ${PIPESTATUS[0]}" ;;
    notebooks)
      if [ -d /tmp/site ]; then
        timeout 240 python3 -m pytest -q --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks \
          -p no:cacheprovider > "$OUT/notebooks.log" 2>&1
        step notebooks "nbval exit $?: $(tail -1 "$OUT/notebooks.log")"
      else
        step notebooks "skipped: no notebook stack in /tmp/site (carry .whl: /work/shared/gpu-host/README.md)"
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
if [ "${SHIP:-0}" = 1 ]; then
  tar czf "$OUT/data.tar.gz" data
else
  tar czf "$OUT/recordings.tar.gz" -C "$OUT" recordings
fi
cat "$summary"
