"""``python3 -m helpers.recording.block_reduce_target KERNEL X Y``: one block reduction on the GPU, for compute-sanitizer.

    compute-sanitizer --tool racecheck --racecheck-report all python3 -m helpers.recording.block_reduce_target seed_y 32 3

KERNEL is one of :data:`helpers.topics.block_reduce.SANITIZER_TARGETS`: ``sum`` (BlockReduce), ``all`` (BlockAllReduce), ``x``
(BlockXReduce), ``y`` (BlockYReduce) and the seeds' ``seed_sum``, ``seed_x``, ``seed_y``. It runs once
on a (Y, X) block of small random integers (int32) and prints one line: whether every thread
promised the result holds NumPy's answer. Exit status 0 when it does (the seeds' bugs give 1).
``b2b`` and ``b2b_nobarrier`` run two BlockReduce calls back to back, with and without the
``__syncthreads()`` between them; they print thread 0's two results and exit 0 (without the barrier
a right answer proves nothing: the race is for racecheck to see).
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

import numpy as np

from helpers.topics.block_reduce import BACK_TO_BACK_TARGETS, SANITIZER_TARGETS, back_to_back_gpu, block_reduce


def run(kernel: str, x: int, y: int) -> bool:
    """Run ``kernel`` on one (x, y) block on the GPU; print the outcome; True when it is correct."""
    if kernel in BACK_TO_BACK_TARGETS:
        ones, twos = np.ones((y, x), np.int32), np.full((y, x), 2, np.int32)
        r1, r2 = back_to_back_gpu(ones, twos, (x, y), barrier=BACK_TO_BACK_TARGETS[kernel])
        print(f"{kernel} block=({x}, {y}): thread 0 got {r1} and {r2} (NumPy: {x * y} and {2 * x * y})", flush=True)
        return True
    kind, version, broadcast = SANITIZER_TARGETS[kernel]
    values = np.random.default_rng(x * 1031 + y).integers(-9, 10, (y, x)).astype(np.int32)
    r = block_reduce(values, (x, y), "sum", kind, version, broadcast, backend="cupy")
    print(f"{kernel} block=({x}, {y}): {'correct' if r.correct else 'WRONG'}, "
          f"{int(r.defined.sum())}/{r.defined.size} threads defined", flush=True)
    return r.correct


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m helpers.recording.block_reduce_target", description=__doc__.splitlines()[0])
    parser.add_argument("kernel", choices=(*SANITIZER_TARGETS, *BACK_TO_BACK_TARGETS))
    parser.add_argument("x", type=int)
    parser.add_argument("y", type=int)
    args = parser.parse_args(argv)
    return 0 if run(args.kernel, args.x, args.y) else 1


if __name__ == "__main__":
    sys.exit(main())
