"""The GPU side of a check (CuPy): the same launches on the hardware, and the time of the learner's
kernel against the reference solution and CuPy's own function.

Kept thin on purpose: the machine has already judged hazards and results; here the hardware's
results are judged the same way (without undefined masks), and timed. This path cannot run on a
machine without a GPU, so CI does not exercise it; tests/gpu would, on the H200.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from helpers.engine import kernels
from helpers.exercises.run import OPTIONS, program
from helpers.exercises.spec import Case, Exercise, Mismatch

REPEATS = 20
WARMUP = 3
BATCH = 10   # launches between one pair of events: the host queues the next launch while the GPU runs one


def _module(cp: Any, code: str) -> Any:
    opts = tuple(o for o in OPTIONS if not o.startswith("-arch")) + tuple(kernels.include_options())
    return cp.RawModule(code=code, options=opts)


def run(ex: Exercise, code: str, cases: Sequence[Case]) -> tuple[list[Optional[Mismatch]], list[str], tuple[str, ...]]:
    """(mismatch of each launch on the GPU, lines for the feedback, timing lines)."""
    import cupy as cp

    from helpers.engine import backend

    gpu = backend.detect().gpu_name or "the GPU"
    kernel = _module(cp, code).get_function(ex.kernel)
    mismatches: list[Optional[Mismatch]] = []
    for case in cases:
        case.reset()
        dev = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in case.args)
        kernel(case.grid, case.block, dev, shared_mem=case.shared_mem)
        cp.cuda.Device().synchronize()
        case.args = tuple(cp.asnumpy(d) if isinstance(d, cp.ndarray) else d for d in dev)
        machine_masks = case.data.get("undefined")
        case.data["undefined"] = None
        mismatches.append(ex.judge(case))
        case.data["undefined"] = machine_masks
    wrong = [m for m in mismatches if m is not None]
    lines = [f"On {gpu}: every result right." if not wrong else
             f"On {gpu}: {len(wrong)} of {len(cases)} launches wrong; the first: {wrong[0].summary}"]
    timings = _timings(cp, ex, kernel, gpu) if ex.bench is not None and not wrong else ()
    return mismatches, lines, timings


def _timings(cp: Any, ex: Exercise, kernel: Any, gpu: str) -> tuple[str, ...]:
    """Device time of one launch on a large input: CUDA events around BATCH back-to-back launches,
    divided by BATCH (events around a single launch would also count the time the GPU waits for the
    host to submit it); medians of interleaved repeats after warm-up."""
    bench = ex.bench(cp)
    reference = _module(cp, program(ex, ex.solution)).get_function(ex.kernel)
    runs = {"yours": lambda: kernel(bench.grid, bench.block, bench.args, shared_mem=bench.shared_mem),
            "the reference solution": lambda: reference(bench.grid, bench.block, bench.args, shared_mem=bench.shared_mem)}
    if bench.yardstick is not None:
        runs[bench.yardstick_label] = bench.yardstick
    times: dict[str, list[float]] = {k: [] for k in runs}
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for rep in range(WARMUP + REPEATS):
        for label, fn in runs.items():   # interleaved, so drift hits every contender alike
            start.record()
            for _ in range(BATCH):
                fn()
            end.record()
            end.synchronize()
            if rep >= WARMUP:
                times[label].append(cp.cuda.get_elapsed_time(start, end) / BATCH)
    parts = ", ".join(f"{label} {float(np.median(t)):.3f} ms" for label, t in times.items())
    return (f"Time on {gpu}, {bench.what}: device time per launch (CUDA events around {BATCH} back-to-back "
            f"launches, so the host's launch overhead hides behind the kernels), median of {REPEATS} interleaved "
            f"runs after {WARMUP} warm-up runs: {parts}.",)
