#!/usr/bin/env bash
# The reduction ladder on the H200 (notebooks 05-07): GPU tests, benchmark recordings, Nsight Compute
# counters and compute-sanitizer summaries, all written to data/ (stamped), logs to $OUT/reduce/.
#
#   OUT=/some/dir bash scripts/gpu/reduce.sh            # from the repo root, on the GPU host
#   REDUCE_STEPS="tests ladder" OUT=... bash scripts/gpu/reduce.sh   (default: every step)
#
# Steps: tests (pytest -m gpu tests/gpu/test_reduce_*.py), ladder (bench --record), sweep
# (bench --sweep --record, 2^10..2^30), tune (bench --tune --record), ncu (v0..v4 first passes, and
# v9 beside cupy.sum warm at 2^20 and 2^28), sanitizer (memcheck/racecheck/synccheck of every kernel,
# in parallel; racecheck of v4_legacy also with its default report). Every step runs under
# `timeout`; a failing step does not stop the others. Prints a short summary at the end.
# Timings are device time (CUDA graph replay) and host-inclusive time, 5 interleaved repetitions.
set -uo pipefail
: "${OUT:?set OUT to a writable folder}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
export WARPLAB_RECORD_INTO=${WARPLAB_RECORD_INTO:-data}   # the shipped recordings (scripts/gpu_verify.sh sets $OUT/recordings unless SHIP=1)
STEPS=${REDUCE_STEPS:-"tests ladder sweep tune ncu sanitizer"}   # run in this order
LOG="$OUT/reduce"
mkdir -p "$LOG"
exec > >(tee "$LOG/reduce.log") 2>&1  # everything this script prints, also kept beside the step logs
status=()
note() { status+=("$1: $2"); echo "== reduce $1: $2"; }

# Block size and sizes for the counters and the sanitizers: n is not a multiple of any block size
# (nor of 4, so the float4 kernels take their tail path); the seed's n is not a multiple of 256.
BLOCK=256
NCU_N=16777216
SAN_N=100003
SEED_BAD_N=1000
SEED_OK_N=1024
V9_BIG_N=268435459  # v9 launches 528 blocks here, more than 256 (the block-wide collect)
V9_SMALL_N=10007    # v9 launches its one-block instantiation here (reduce_v9<512, true>)

step_tests() {
  # REDUCE_TESTS / TESTS_TIMEOUT narrow the step when device time is short
  timeout "${TESTS_TIMEOUT:-200}" python3 -m pytest -q -m gpu -p no:cacheprovider ${REDUCE_TESTS:-tests/gpu/test_reduce_*.py} \
    > "$LOG/tests.log" 2>&1
  rc=$?; note tests "exit $rc ($(tail -1 "$LOG/tests.log"))"
  [ $rc -ne 0 ] && grep -E "^(FAILED|ERROR) " "$LOG/tests.log" | head -15
}

step_ladder() {
  timeout 240 python3 -m helpers.bench --record --reps 5 --replays 5 > "$LOG/ladder.log" 2>&1
  rc=$?; note ladder "exit $rc"
}

step_sweep() {
  timeout 200 python3 -m helpers.bench --sweep --record --reps 5 --replays 5 > "$LOG/sweep.log" 2>&1
  rc=$?; note sweep "exit $rc"
}

step_tune() {
  timeout 150 python3 -m helpers.bench --tune --record --reps 3 --replays 3 > "$LOG/tune.log" 2>&1
  rc=$?; note tune "exit $rc"
}

step_ncu() {
  # Metric sets, widest first (helpers.recording.tool_output.NCU_METRIC_SETS): the full list with the SIMT
  # counters (warp instructions, active and predicated-on lanes per instruction), the list ncu
  # accepted on 2026-11-30, then the four that matter most. The first set ncu accepts is kept.
  mapfile -t metric_sets < <(python3 -m helpers.recording.tool_output metric-sets)
  rc=1; used=none
  for m in "${metric_sets[@]}"; do
    rm -f "$LOG/ncu_ladder.csv"
    timeout 120 ncu --clock-control none --csv --log-file "$LOG/ncu_ladder.csv" --metrics "$m" \
      --kernel-name regex:reduce_v --launch-count 5 \
      python3 -m helpers.recording.reduce_target profile v0,v1,v2,v3,v4 --n $NCU_N --block $BLOCK > "$LOG/ncu_target.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '"ID"' "$LOG/ncu_ladder.csv" 2>/dev/null; then
      used="$(echo "$m" | tr ',' '\n' | wc -l) metrics"; break
    fi
    echo "ncu refused a metric set (exit $rc); trying a smaller one" | tee -a "$LOG/ncu_sets.log"
    tail -3 "$LOG/ncu_target.log" >> "$LOG/ncu_sets.log"
  done
  # v9 and cupy.sum, the last of three launches each, caches NOT flushed (as in repeated calls)
  timeout 120 ncu --clock-control none --cache-control none --csv --log-file "$LOG/ncu_v9.csv" \
    --metrics "$(python3 -m helpers.recording.tool_output beyond-metrics)" --kernel-name regex:"reduce_v9|DeviceReduce" \
    python3 -m helpers.recording.reduce_target profile-v9 --sizes 20,28 > "$LOG/ncu_v9_target.log" 2>&1
  echo "ncu v9 exit $?"
  timeout 60 python3 -m helpers.recording.tool_output ncu "$LOG/ncu_ladder.csv" --n $NCU_N --block $BLOCK \
    --beyond "$LOG/ncu_v9.csv" --record > "$LOG/ncu.log" 2>&1
  rc2=$?; note ncu "ncu exit $rc ($used), record exit $rc2"
}

step_sanitizer() {
  SAN="$LOG/sanitizer"
  rm -rf "$SAN"; mkdir -p "$SAN"
  jobs_file="$SAN/jobs.txt"; : > "$jobs_file"
  for k in v0 v1 v2 v3 v4 v4_legacy v5 v6 v7 v8 onepass v9 seed; do
    for tool in memcheck racecheck synccheck; do
      n=$SAN_N; offsets=0
      case $k in
        v8|onepass|v9) offsets=0,1,2,3 ;;     # every misalignment of the float4 head
        seed) if [ $tool = memcheck ]; then n=$SEED_BAD_N; else n=$SEED_OK_N; fi ;;
      esac
      echo "$tool $k $n $offsets all $k" >> "$jobs_file"
    done
  done
  echo "racecheck v4_legacy $SAN_N 0 default v4_legacy" >> "$jobs_file"   # racecheck's default report, same limit
  for tool in memcheck racecheck synccheck; do   # v9 past 256 blocks (the whole last block collects) and with one
    echo "$tool v9 $V9_BIG_N 0,1 all v9_many_blocks" >> "$jobs_file"
    echo "$tool v9 $V9_SMALL_N 0,1,2,3 all v9_one_block" >> "$jobs_file"
  done
  run_one() {  # tool kernel n offsets report label
    local extra="" name="$1__$6" limit=20
    if [ "$1" = racecheck ]; then
      if [ "$5" = all ]; then extra="--racecheck-report all"; else name="$1__$6__$5"; fi
    fi
    [ "$2" = seed ] && [ "$1" = memcheck ] && limit=1000   # the seed's whole memcheck report, every thread named
    timeout 180 compute-sanitizer --tool "$1" $extra --print-limit $limit \
      python3 -m helpers.recording.reduce_target sanitize "$2" --n "$3" --block 256 --offsets "$4" \
      > "$SAN/$name.log" 2>&1
    echo $? > "$SAN/$name.rc"; echo $limit > "$SAN/$name.limit"
  }
  export -f run_one; export SAN
  timeout 240 xargs -P 8 -L 1 bash -c 'run_one "$@"' _ < "$jobs_file"
  timeout 60 python3 -m helpers.recording.tool_output sanitizer "$SAN" --record > "$LOG/sanitizer.log" 2>&1
  rc=$?; note sanitizer "exit $rc ($(grep -c UNEXPECTED "$LOG/sanitizer.log") unexpected)"
}

for step in $STEPS; do   # in the order given
  case $step in
    tests|ladder|sweep|tune|ncu|sanitizer) "step_$step" ;;
    *) note "$step" "unknown step" ;;
  esac
done

echo
echo "== reduce summary (logs in $LOG)"
for s in "${status[@]}"; do echo "  $s"; done
timeout 60 python3 -m helpers.recording.tool_output summary
