#!/usr/bin/env bash
# NCCL all-reduce on this host's GPUs (notebook 08), one process per GPU: correctness against NumPy
# and a size sweep 8 B .. 4 GiB (algbw, busbw), a float-order check, and the hierarchical reduce.
# Writes data/allreduce_nccl.json (stamped: GPUs, NCCL version, nvidia-smi topology) and copies it,
# with the log and the topology, into $OUT/allreduce/.
#
#   OUT=/some/dir bash scripts/gpu/allreduce.sh            # from the repo root: every visible GPU
#   ALLREDUCE_WORLD=2 ALLREDUCE_MAX_BYTES=1GiB OUT=... bash scripts/gpu/allreduce.sh
#   bash scripts/gpu/allreduce.sh --print-env              # NCCL_NVLS_ENABLE as each process sees it
#
# NVLink SHARP multicast (NVLS) stays off in every process: NCCL_NVLS_ENABLE=0 is exported first, so
# everything this script starts inherits it; the Python script sets it again for its workers and
# passes it to every subprocess it starts with an environment of its own.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 WARPLAB_BACKEND=cupy
export WARPLAB_RECORD_INTO=${WARPLAB_RECORD_INTO:-data}   # the shipped recordings (scripts/gpu_verify.sh sets $OUT/recordings unless SHIP=1)
PYTHON=${PYTHON:-python3}

if [ "${1:-}" = "--print-env" ]; then
  echo "launcher: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
  exec "$PYTHON" scripts/gpu/nccl_allreduce.py --print-env
fi

: "${OUT:?set OUT to a writable folder}"
LOG="$OUT/allreduce"
mkdir -p "$LOG"
LIMIT=${ALLREDUCE_TIMEOUT:-170}
args=(--max-bytes "${ALLREDUCE_MAX_BYTES:-4GiB}" --timeout "$LIMIT" --copy-to "$LOG")
[ -n "${ALLREDUCE_WORLD:-}" ] && args+=(--world "$ALLREDUCE_WORLD")
nvidia-smi topo -m > "$LOG/topo.txt" 2>&1
timeout --kill-after=15 $((LIMIT + 20)) "$PYTHON" scripts/gpu/nccl_allreduce.py "${args[@]}" 2>&1 | tee "$LOG/run.log"
rc=${PIPESTATUS[0]}
echo "== allreduce: exit $rc (log, topology and recording in $LOG)"
exit "$rc"
