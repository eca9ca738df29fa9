#!/usr/bin/env bash
# Undefined calls on the H200 (notebook 01): full-mask __shfl_down_sync / __ballot_sync while lanes
# named in the mask are alive elsewhere, recorded as one observation of undefined behaviour into
# data/diverged_reads.json (stamped); then the GPU tests of the warp API (its three lane states:
# calling, exited, alive elsewhere). Logs go to $OUT/diverged/.
#
#   OUT=/some/dir bash scripts/gpu/diverged.sh           # from the repo root, on the GPU host
#   STEPS=diverged bash scripts/gpu_verify.sh            # the same, packed into $OUT/data.tar.gz
#
# It cannot hang for ever: in every part the lanes elsewhere leave their wait after a fixed number
# of clock cycles, each part runs in its own process under `timeout 30` (a hung part costs only
# itself and is recorded as "no result"), and the tests run under `timeout 200`. Under a minute
# when nothing hangs; at most about nine.
set -uo pipefail
: "${OUT:?set OUT to a writable folder}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
export WARPLAB_RECORD_INTO=${WARPLAB_RECORD_INTO:-data}   # the shipped recordings (scripts/gpu_verify.sh sets $OUT/recordings unless SHIP=1)
LOG="$OUT/diverged"
PARTS="$LOG/parts"
mkdir -p "$PARTS"
status=()
note() { status+=("$1: $2"); echo "== diverged $1: $2"; }

for p in $(python3 -m helpers.recording.record_diverged --list); do
  timeout 30 python3 -m helpers.recording.record_diverged --part "$p" --out "$PARTS/$p.json" > "$LOG/$p.log" 2>&1
  rc=$?; note "$p" "exit $rc$([ $rc -eq 124 ] && echo ' (timed out: the warp may have hung)')"
done
timeout 60 python3 -m helpers.recording.record_diverged --combine "$PARTS" > "$LOG/combine.log" 2>&1
note record "exit $? ($(tail -1 "$LOG/combine.log"))"

timeout 200 python3 -m pytest -q -s -m gpu -p no:cacheprovider tests/gpu/test_equivalence.py \
  tests/gpu/test_ballot_uses_gpu.py > "$LOG/tests.log" 2>&1
note tests "exit $? ($(grep -h EQUIVALENCE "$LOG/tests.log"); $(tail -1 "$LOG/tests.log"))"

echo
echo "== diverged summary (logs in $LOG)"
for s in "${status[@]}"; do echo "  $s"; done
python3 -c 'import helpers.recording.record_diverged as r; print(r.report())' 2>/dev/null | head -40
grep -E "^(FAILED|ERROR)" "$LOG/tests.log" 2>/dev/null | head -20
exit 0
