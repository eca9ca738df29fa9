"""``python -m helpers.recording.record``: record hardware results on any CUDA GPU, stamped with it.

Where: ``$WARPLAB_RECORD_INTO`` if set (the maintainers' H200 scripts set ``data``: the shipped
recordings), else the learner's own, git-ignored ``local-recordings/``
(:func:`helpers.data.record_locally_unless_set`), so ``data/`` keeps only the shipped ones.

Writes, stamped with GPU, driver and CuPy versions:

* ``data/warp_intrinsics.json``  every case of :func:`helpers.engine.cases.fixed_cases`, run on the GPU
* ``data/warp_reduce_sum_trace.json``  WarpReduceSum traced by the instrumented kernel
* ``data/exited_reads.json``  what the hardware returned for shuffle reads of exited lanes (undefined)

then the recordings of notebooks 03-04 (:func:`helpers.recording.record_reduce.record`), and, unless
``--no-bench``, the ladder and the sweep of notebooks 05-07 (``bench_ladder.json``, ``bench_sweep.json``:
:func:`helpers.bench.run_ladder`, :func:`helpers.bench.run_sweep`, sizes this GPU's free memory
holds), which those notebooks' charts draw beside the H200's as "your GPU". CI, with no GPU, checks
that the emulator reproduces each shipped file (tests/recording/test_recorded.py and the per-topic tests).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from helpers import data
from helpers.engine import backend
from helpers.engine import cases
from helpers.topics.warp_reduce import warp_reduce_sum_trace


def trace_inputs() -> dict[str, np.ndarray]:
    """The WarpReduceSum inputs recorded as traces (the notebooks animate these)."""
    rng = np.random.default_rng(7)
    return {
        "ones_int32": np.ones(32, np.int32),
        "lane_int32": np.arange(32, dtype=np.int32),
        "random_float32": rng.integers(-9, 10, 32).astype(np.float32),
    }


def exited_read_inputs(n_warps: int = 4096, seed: int = 11) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, active, delta per warp) for the exited-lane experiment: full mask, about one lane in
    five exited, every value distinct (warp * 32 + lane) so a read can be traced to its origin."""
    rng = np.random.default_rng(seed)
    values = np.arange(n_warps * 32, dtype=np.int32).reshape(n_warps, 32)
    active = rng.random((n_warps, 32)) >= 0.2
    deltas = rng.integers(1, 17, n_warps)
    return values, active, deltas


def classify_exited_reads(values: np.ndarray, active: np.ndarray, deltas: np.ndarray,
                          got: np.ndarray) -> dict[str, int]:
    """Count what the hardware returned to active lanes whose ``shfl_down`` source lane had exited:
    the caller's own value, the exited lane's value, another lane's value, or none of these."""
    lane = np.arange(32)
    src = lane[None, :] + deltas[:, None]
    in_range = src < 32
    src_c = np.minimum(src, 31)
    reads = active & in_range & ~np.take_along_axis(active, src_c, axis=1)
    own = got == values
    exited_value = got == np.take_along_axis(values, src_c, axis=1)
    row_values = [set(r.tolist()) for r in values]
    other = np.array([[g in row_values[w] for g in got[w]] for w in range(got.shape[0])]) & ~own & ~exited_value
    return {"reads": int(reads.sum()), "caller_own_value": int((reads & own).sum()),
            "exited_lane_value": int((reads & exited_value).sum()),
            "another_lane_value": int((reads & other).sum()),
            "none_of_these": int((reads & ~own & ~exited_value & ~other).sum())}


def record_exited_reads() -> list:
    """On the GPU: shfl_down with a full mask whose source lane has exited (undefined), measured."""
    from helpers.engine import warp_cupy
    from helpers.engine.emulator import lane_state

    values, active, deltas = exited_read_inputs()
    counts: dict[str, int] = {}
    for d in np.unique(deltas):  # one launch per delta, over the warps that use it
        rows = deltas == d
        operand = np.full(values[rows].shape, int(d))
        mask = np.full(int(rows.sum()), 0xFFFFFFFF, np.uint32)
        got, _ = warp_cupy.shuffle_raw("down", values[rows], operand, 32, mask, lane_state(active[rows], ~active[rows]))
        for k, v in classify_exited_reads(values[rows], active[rows], deltas[rows], got).items():
            counts[k] = counts.get(k, 0) + v
    return [data.write("exited_reads", {"experiment": "shfl_down, full mask, width 32, ~20% of lanes exited, "
                                                      "delta 1..16, 4096 warps, int32 values all distinct",
                                        "counts": counts}, backend.stamp())]


def runnable_cases(compute_capability: tuple[int, int]) -> tuple[list[dict], list[str]]:
    """The fixed cases a GPU of ``compute_capability`` runs, and the ops left out: ``__reduce_*_sync``
    needs 8.0 (:data:`helpers.topics.warp_reduce.REDUCE_SYNC_CC`)."""
    from helpers.topics.warp_reduce import REDUCE_SYNC_CC

    fixed = cases.fixed_cases()
    if compute_capability >= REDUCE_SYNC_CC:
        return fixed, []
    left_out = sorted({c["op"] for c in fixed if c["op"].startswith("reduce_")})
    return [c for c in fixed if c["op"] not in left_out], left_out


def record_intrinsics() -> list:
    stamp = backend.stamp()
    fixed, left_out = runnable_cases(backend.compute_capability())
    if left_out:
        print(f"  intrinsics: {', '.join(left_out)} left out: they need compute capability 8.0, this GPU has "
              f"{stamp['compute_capability']}", file=sys.stderr)
    results = []
    for i, case in enumerate(fixed):
        results.append({**case, "result": cases.run(case, "cupy")})
        if i % 20 == 0:
            print(f"  intrinsics: {i + 1}/{len(fixed)}", file=sys.stderr)
    out = [data.write("warp_intrinsics", {"cases": results}, stamp)]
    traces = {name: warp_reduce_sum_trace(v, backend="cupy").to_dict() for name, v in trace_inputs().items()}
    out.append(data.write("warp_reduce_sum_trace", {"traces": traces}, stamp))
    return out


def sweep_sizes(free_bytes: int) -> list[int]:
    """The sizes of :data:`helpers.bench.runs.SWEEP_SIZES` a GPU with ``free_bytes`` of free memory
    holds in a sweep (:func:`fits`)."""
    from helpers.bench.runs import SWEEP_SIZES

    return [n for n in SWEEP_SIZES if fits(n, free_bytes)]


def fits(n: int, free_bytes: int) -> bool:
    """Whether a benchmark of n floats fits in ``free_bytes``: the input, the copy's output and
    the partials, three float32 arrays of n."""
    return 3 * 4 * n <= free_bytes


def record_bench() -> list:
    """On the GPU: the ladder and a sweep (notebooks 05-07), recorded with this GPU's ceiling."""
    import cupy

    from helpers import bench
    from helpers.bench.runs import DEFAULT_SIZES

    free, _ = cupy.cuda.runtime.memGetInfo()
    out = [bench.record(bench.run_ladder(sizes=[n for n in DEFAULT_SIZES if fits(n, free)]))]
    out.append(bench.record(bench.run_sweep(sizes=sweep_sizes(free))))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only-core", action="store_true", help="skip the per-topic recorders and the benchmarks")
    parser.add_argument("--no-bench", action="store_true", help="skip the ladder and sweep of notebooks 05-07")
    parser.add_argument("--no-sanitizer", action="store_true", help="skip the compute-sanitizer runs of notebook 04")
    args = parser.parse_args(argv)
    d = backend.detect()
    if not d.usable:
        print(f"helpers.recording.record needs a CUDA GPU and found none: {d.reason}.", file=sys.stderr)
        return 2
    into = data.record_locally_unless_set()
    print(backend.report("cupy"), file=sys.stderr)
    print(f"recording into {into}", file=sys.stderr)
    written = record_intrinsics() + record_exited_reads()
    if not args.only_core:
        from helpers.recording import record_reduce

        written += record_reduce.record(sanitizer=not args.no_sanitizer)
        if not args.no_bench:
            written += record_bench()
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
