"""On a GPU, the hardware and the SIMT machine agree on every defined value of the ladder: every pass
of every version (and v4_legacy, where the machine says which partials are defined) run through
helpers.topics.launch with check=True, at small sizes (the machine runs each launch too)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.topics import reduce as R
from helpers.topics import reduce_maps as M

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("version", R.VERSIONS + R.RACY)
@pytest.mark.parametrize("block", (64, 256, 1024))
def test_gpu_and_machine_agree_where_defined(version: str, block: int) -> None:
    for n in (1000, 2**14 + 3):
        x = np.random.default_rng(n + block).standard_normal(n).astype(np.float32)
        run = R.run_passes(x, version, block, backend="cupy", check=True)
        assert run.engine == "cupy" and len(run.passes) == len(run.grids)
        assert run.disagreements() == [], run.disagreements()
        if version not in R.RACY + ("v9",):
            assert run.defined


def test_the_maps_count_what_the_gpu_runs() -> None:
    """The machine's maps come from the same kernels the GPU runs: v0's and v2's first passes on the
    GPU give the partials the machine computes for one block each."""
    x = np.random.default_rng(1).standard_normal(256).astype(np.float32)
    for v in ("v0", "v2"):
        gpu = R.first_pass(cupy.asarray(x), v, 256).get()
        mach = R.first_pass(x, v, 256, backend="emulator")
        np.testing.assert_array_equal(gpu.view(np.uint32), mach.view(np.uint32))
        assert M.measure(v, 256).steps
