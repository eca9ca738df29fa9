"""helpers.exercises on a GPU (CuPy): the reference solutions pass on the hardware too, a wrong
answer fails there as on the machine, and the timing lines come back. Skipped without a GPU."""
from __future__ import annotations

import pytest

from helpers import exercises
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


def test_wrong_answer_fails_on_the_gpu_too() -> None:
    src = (EXERCISES_DIR / "wrong" / "block_reduce_sum.wrong_result.cu").read_text()
    r = exercises.check("block_reduce_sum", src, seed=0, engine="gpu")
    assert r.status == "wrong_result"
