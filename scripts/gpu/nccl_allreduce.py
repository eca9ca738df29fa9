#!/usr/bin/env python3
"""NCCL all-reduce through CuPy, one process per GPU: records data/allreduce_nccl.json (notebook 08).

    bash scripts/gpu/allreduce.sh                       # the launcher: use it (NVLS off, logs, $OUT)
    python3 scripts/gpu/nccl_allreduce.py --help        # options: --world, --max-bytes, --repeat, ...
    python3 scripts/gpu/nccl_allreduce.py --import FILE # check a recording brought back, copy it to data/

Everything it does is in helpers/recording/allreduce_nccl.py (importable by the spawned workers, and tested).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from helpers.recording.allreduce_nccl import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
