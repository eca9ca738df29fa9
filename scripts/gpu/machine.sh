#!/usr/bin/env bash
# The SIMT machine's proof on the H200 (issue 11, "Proof against hardware"): compile every kernel
# module and 2,000 generated programs ONCE to PTX, run that same PTX on the GPU, record the outputs,
# run 250 of the programs under compute-sanitizer racecheck and synccheck, and write it all to
# data/machine_* (stamped). Then, where the machine exists, replay the recordings on it (CPU).
# Logs go to $OUT/machine/.
#
#   OUT=/some/dir bash scripts/gpu/machine.sh               # from the repo root, on the GPU host
#   STEPS=machine bash scripts/gpu_verify.sh                # the same, through the verification script
#   MACHINE_STEPS="record" OUT=... bash scripts/gpu/machine.sh   (default: "record replay")
#
# Steps: record (python3 -m helpers.proof.record all: kernels, programs, sanitizer; about 3 min),
# replay (the proof tests in full on the fresh recordings, on the host's CPUs; at most 2.5 min).
# Every step runs under `timeout`; a failing step does not stop the others.
set -uo pipefail
: "${OUT:?set OUT to a writable folder}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
STEPS=${MACHINE_STEPS:-"record replay"}
LOG="$OUT/machine"
mkdir -p "$LOG"
WORK=$(mktemp -d /tmp/warplab_proof.XXXXXX)
status=()
note() { status+=("$1: $2"); echo "== machine $1: $2"; }
has() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# helpers.nvrtc looks in the nvidia wheels and /usr/local/cuda; otherwise point it at any libnvrtc.
if ! python3 -c 'import helpers.nvrtc as n, sys; sys.exit(0 if n.available() else 1)' 2>/dev/null; then
  lib=$(find / -xdev -name 'libnvrtc.so*' ! -name '*alt*' ! -name '*builtins*' 2>/dev/null | head -1)
  [ -n "$lib" ] && export WARPLAB_NVRTC="$lib"
fi
python3 -c 'import helpers.nvrtc as n; print("NVRTC", n.version())'

if has record; then
  timeout 330 python3 -m helpers.proof.record all --work "$WORK" > "$LOG/record.log" 2>&1
  rc=$?; note record "exit $rc ($(grep -E '^  (kernels|programs|sanitizer): .*(not ok|programs;)' "$LOG/record.log" | tr '\n' ';'))"
  # the workers' logs (sanitizer output included), small files only
  (cd "$WORK" && find . -name '*.log' -size -4M | head -200 | tar czf "$LOG/work_logs.tar.gz" -T - 2>/dev/null)
fi

if has replay; then
  if [ -f helpers/machine/__init__.py ]; then
    WARPLAB_PROOF=full timeout 150 python3 -m pytest -q -p no:cacheprovider tests/machine/ -k proof \
      > "$LOG/replay.log" 2>&1
    rc=$?; note replay "exit $rc ($(tail -1 "$LOG/replay.log"))"
  else
    note replay "skipped: helpers/machine is not in this tree"
  fi
fi

echo
echo "== machine summary (logs in $LOG)"
for s in "${status[@]}"; do echo "  $s"; done
grep -E "^  (kernels|programs|sanitizer|    )" "$LOG/record.log" 2>/dev/null | head -40
ls -la data/machine_* 2>/dev/null
rm -rf "$WORK"
exit 0
