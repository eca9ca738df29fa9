"""``python3 -m helpers.recording.reduce_target``: small launch drivers for compute-sanitizer and Nsight Compute.

    python3 -m helpers.recording.reduce_target sanitize v4 --n 100003 --block 256 --offsets 0,1
    python3 -m helpers.recording.reduce_target sanitize seed --n 1000
    python3 -m helpers.recording.reduce_target profile v0,v1,v2,v3,v4 --n 16777216 --block 256
    python3 -m helpers.recording.reduce_target profile-v9 --sizes 20,28

``sanitize`` runs one kernel's full reduction (the seed: its first pass, as the seed launches it,
out of bounds allowed) on integer-valued input whose sum is exact, once per offset: the input is
``base[offset:]`` of a fresh allocation, so offsets 1..3 start it off a 16-byte boundary (the float4
head path of v8/onepass) while its end is still the allocation's end. CuPy's memory pool is switched
off, so every array is its own cudaMalloc of exactly its size and memcheck sees any read past it.
Exit status 0 when every sum was right.

``profile`` launches the first pass of each version once (nothing else matches ``reduce_v``), for
``ncu --kernel-name regex:reduce_v``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

import numpy as np

from helpers.topics import reduce as R

KERNELS: tuple[str, ...] = R.ALL_VERSIONS + ("seed",)


def _input(n: int, offset: int) -> tuple[object, float]:
    """A device array of n integer-valued floats in [-4, 4] starting ``offset`` floats into its own
    allocation, and its exact sum."""
    import cupy

    host = np.random.default_rng(n + offset).integers(-4, 5, n + offset).astype(np.float32)
    base = cupy.asarray(host)
    return base[offset:], float(host[offset:].sum(dtype=np.float64))


def sanitize(kernel: str, n: int, block: int, offsets: Sequence[int]) -> bool:
    """Run ``kernel`` on n elements at each offset; print one line per run; True if all sums are exact."""
    import cupy

    cupy.cuda.set_allocator(None)  # exact-size allocations: memcheck must see a read one past the end
    ok = True
    for offset in offsets:
        x, want = _input(n, offset)
        if kernel == "seed":
            got = float(cupy.asnumpy(R.seed_first_pass(x, allow_out_of_bounds=True)).sum(dtype=np.float64))
        else:
            plan = R.make_plan(kernel, n, None if kernel == "v9" else block)
            got = float(plan(x)[0])
        cupy.cuda.runtime.deviceSynchronize()
        ok &= got == want
        threads = R.SEED_BLOCK if kernel == "seed" else plan.block   # v9: the dispatcher's block
        print(f"{kernel} n={n} block={threads} offset={offset}: sum {got:.1f}, exact {want:.1f}, "
              f"{'ok' if got == want else 'WRONG'}", flush=True)
    return ok


def profile(versions: Sequence[str], n: int, block: int) -> None:
    """One first-pass launch of each version on n random floats."""
    import cupy

    x = cupy.random.RandomState(0).random_sample(size=n, dtype=cupy.float32)
    for v in versions:
        R.make_plan(v, n, block).first_pass(x)
        cupy.cuda.runtime.deviceSynchronize()
        print(f"profiled {R.kernel_name(v, block)} n={n}", flush=True)


def profile_one_launch(sizes: Sequence[int], warm: int = 2) -> None:
    """For ``ncu --cache-control none``: at each size, v9 and cupy.sum launched ``warm`` + 1 times
    each on the same input (so the last launch of each sees the L2 as a repeated call does)."""
    import cupy

    for n in sizes:
        x = cupy.random.RandomState(n).random_sample(size=n, dtype=cupy.float32)
        plan = R.make_plan("v9", n)
        for _ in range(warm + 1):
            plan(x)
        for _ in range(warm + 1):
            cupy.sum(x)
        cupy.cuda.runtime.deviceSynchronize()
        print(f"profiled {R.kernel_name('v9', plan.block)} grid {plan.grids[0]} and cupy.sum, n={n}", flush=True)
        del x
        cupy.get_default_memory_pool().free_all_blocks()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m helpers.recording.reduce_target", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sanitize", help="one kernel's reduction, for compute-sanitizer")
    s.add_argument("kernel", choices=KERNELS)
    s.add_argument("--n", type=int, default=100_003)
    s.add_argument("--block", type=int, default=R.DEFAULT_BLOCK)
    s.add_argument("--offsets", default="0", help="comma list of start offsets in floats, e.g. 0,1,2,3")
    p = sub.add_parser("profile", help="first passes, for Nsight Compute")
    p.add_argument("versions", help="comma list, e.g. v0,v1,v2,v3,v4")
    p.add_argument("--n", type=int, default=2**24)
    p.add_argument("--block", type=int, default=R.DEFAULT_BLOCK)
    q = sub.add_parser("profile-v9", help="v9 and cupy.sum, warm, for Nsight Compute")
    q.add_argument("--sizes", default="20,28", help="comma list of log2 sizes")
    args = parser.parse_args(argv)
    if args.command == "profile-v9":
        profile_one_launch([2 ** int(k) for k in args.sizes.split(",")])
        return 0
    R.check_block(args.block)
    R.check_n(args.n)
    if args.command == "sanitize":
        return 0 if sanitize(args.kernel, args.n, args.block, [int(o) for o in args.offsets.split(",")]) else 1
    versions = args.versions.split(",")
    for v in versions:
        R.check_version(v, racy_ok=True)
    profile(versions, args.n, args.block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
