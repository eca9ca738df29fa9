#!/usr/bin/env bash
# The SIMT machine's proof on the H200 (issue 11, "Proof against hardware"): compile every kernel
# module and 2,000 generated programs ONCE to PTX, run that same PTX on the GPU, record the outputs,
# run 250 of the programs under compute-sanitizer racecheck and synccheck, and write it all to
# data/machine_* (stamped). Then, with the time left, replay the recordings on the machine (on the
# host's CPUs). Logs go to $OUT/machine/.
#
#   OUT=/some/dir bash scripts/gpu/machine.sh               # from the repo root, on the GPU host
#   STEPS=machine bash scripts/gpu_verify.sh                # the same, through the verification script
#   MACHINE_STEPS="kernels programs" OUT=... bash scripts/gpu/machine.sh
#
# Steps (default all): kernels (every instantiation of kernels/, ~1-3 min: the driver JIT-compiles
# the largest modules), programs (~1 min), sanitizer (~1-2 min), replay (python3 -m
# helpers.recording.proof.replay over all CPUs, with whatever is left of MACHINE_BUDGET seconds, default 400).
# Every step runs under `timeout`; a failing step does not stop the others.
set -uo pipefail
: "${OUT:?set OUT to a writable folder}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
export WARPLAB_RECORD_INTO=${WARPLAB_RECORD_INTO:-data}   # the shipped recordings (scripts/gpu_verify.sh sets $OUT/recordings unless SHIP=1)
STEPS=${MACHINE_STEPS:-"kernels programs sanitizer replay"}
BUDGET=${MACHINE_BUDGET:-400}
DRY=${MACHINE_DRY_RUN:+--dry-run $MACHINE_DRY_RUN}   # a folder: test this script without a GPU
START=$(date +%s)
LOG="$OUT/machine"
mkdir -p "$LOG"
WORK=$(mktemp -d /tmp/warplab_proof.XXXXXX)
status=()
note() { status+=("$1: $2"); echo "== machine $1: $2"; }
has() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
left() { local l=$(( BUDGET - ($(date +%s) - START) )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 10 ] && l=10; echo "$l"; }

# helpers.engine.nvrtc looks in the nvidia wheels and /usr/local/cuda; otherwise point it at any libnvrtc.
if ! python3 -c 'import helpers.engine.nvrtc as n, sys; sys.exit(0 if n.available() else 1)' 2>/dev/null; then
  lib=$(find / -xdev -name 'libnvrtc.so*' ! -name '*alt*' ! -name '*builtins*' 2>/dev/null | head -1)
  [ -n "$lib" ] && export WARPLAB_NVRTC="$lib"
fi
python3 -c 'import helpers.engine.nvrtc as n; print("NVRTC", n.version())' 2>&1 | tee "$LOG/record.log"

for s in kernels programs sanitizer; do
  if has $s; then
    cap=$([ $s = kernels ] && echo 240 || echo 170)
    timeout "$(left $cap)" python3 -m helpers.recording.proof.record $s --work "$WORK" $DRY >> "$LOG/record.log" 2>&1
    rc=$?; note $s "exit $rc ($(grep -E "^  $s: " "$LOG/record.log" | tail -1 | sed 's/^ *//'))"
  fi
done
# the workers' logs (the sanitizer's output included), small files only
(cd "$WORK" && find . -name '*.log' -size -4M | head -300 | tar czf "$LOG/work_logs.tar.gz" -T - 2>/dev/null)

if has replay; then
  if [ -f helpers/machine/__init__.py ]; then
    timeout "$(left 400)" python3 -m helpers.recording.proof.replay --jobs "$(nproc)" --out "$LOG/replay.json" > "$LOG/replay.log" 2>&1
    rc=$?; note replay "exit $rc"
    grep -E "^(kernels|programs)|mismatch|machine error" "$LOG/replay.log" | head -20
  else
    note replay "skipped: helpers/machine is not in this tree"
  fi
fi

echo
echo "== machine summary ($(( $(date +%s) - START )) s; logs in $LOG)"
for s in "${status[@]}"; do echo "  $s"; done
grep -E "^    " "$LOG/record.log" 2>/dev/null | head -30
ls -la ${MACHINE_DRY_RUN:-data}/machine_* 2>/dev/null
rm -rf "$WORK"
exit 0
