"""helpers.exercises on a GPU (CuPy): the reference solutions pass on the hardware too, a wrong
answer fails there as on the machine, and the timing lines come back. Skipped without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import exercises
from helpers.engine import kernels
from helpers.exercises import run
from helpers.exercises.spec import EXERCISES_DIR

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", exercises.names())
def test_reference_solution_passes_on_the_gpu(name: str) -> None:
    ex = exercises.get(name)
    r = exercises.check(name, ex.solution, seed=0, engine="gpu")
    assert r.passed, r.feedback
    assert any(line.startswith("On ") and "every result right" in line for line in r.feedback.splitlines())
    if ex.bench is not None:
        assert r.timings and "device time per launch (CUDA events" in r.timings[0], r.timings
        print(name, r.timings[0])


# Wrong answers whose results are wrong on every run (not races, which the hardware may hide).
@pytest.mark.parametrize("wrong", ["block_reduce_sum.wrong_result", "last_block_sum.wrong_result",
                                   "last_block_sum.not_reset", "thread_sum_vec4_any.wrong_result"])
def test_wrong_answer_fails_on_the_gpu_too(wrong: str) -> None:
    src = (EXERCISES_DIR / "wrong" / f"{wrong}.cu").read_text()
    r = exercises.check(wrong.split(".")[0], src, seed=0, engine="gpu")
    assert r.status == "wrong_result", r.feedback
    assert any(line.startswith("On ") and "launches wrong" in line for line in r.feedback.splitlines()), r.feedback


def test_code_that_would_fault_is_not_run_on_the_gpu() -> None:
    """A misaligned float4 load found by the machine is not launched on the hardware (the fault would
    leave CUDA unusable in the process), and the GPU still works afterwards."""
    src = (EXERCISES_DIR / "wrong" / "thread_sum_vec4_any.misaligned.cu").read_text()
    r = exercises.check("thread_sum_vec4_any", src, seed=0, engine="gpu")
    assert r.status == "hazard" and run.NOT_ON_GPU in r.feedback, r.feedback
    ex = exercises.get("thread_sum_vec4_any")
    assert exercises.check(ex.name, ex.solution, seed=0, engine="gpu").passed


def test_last_block_sum_gives_the_same_bits_every_launch() -> None:
    """The hint's claim: the last block adds the partials in index order, so whichever block
    finishes last, *out has the same bits launch after launch (and *done is reset each time)."""
    import cupy as cp

    ex = exercises.get("last_block_sum")
    opts = tuple(o for o in run.OPTIONS if not o.startswith("-arch")) + tuple(kernels.include_options())
    kernel = cp.RawModule(code=run.program(ex, ex.solution), options=opts).get_function(ex.kernel)
    grid = 8192
    sums = cp.asarray((np.random.default_rng(0).standard_normal(grid) * 100).astype(np.float32))
    partials, done, out = cp.empty(grid, cp.float32), cp.zeros(1, cp.uint32), cp.empty(1, cp.float32)
    bits = set()
    for _ in range(50):
        kernel((grid,), (128,), (sums, partials, done, out))
        cp.cuda.Device().synchronize()
        assert int(done[0]) == 0
        bits.add(int(out.view(cp.uint32)[0]))
    assert len(bits) == 1, bits
    expected = np.float32(0)
    for v in cp.asnumpy(sums):      # index order, in float32: what the solution computes
        expected = np.float32(expected + v)
    assert int(np.asarray(expected).view(np.uint32)) in bits
