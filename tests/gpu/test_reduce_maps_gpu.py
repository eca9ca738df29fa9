"""The maps' float32 emulation reproduces the kernels' partial sums bit for bit: the index
arithmetic in helpers/reduce_maps.py is the arithmetic the kernels run."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import reduce as R
from helpers import reduce_maps as M

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("version", ["v0", "v1", "v2", "v3", "v4", "v5"])
@pytest.mark.parametrize("block", R.BLOCKS)
def test_emulation_is_bitwise_exact(version: str, block: int) -> None:
    for n in (1000, 2**20 + 1):
        host = np.random.default_rng(n + block).standard_normal(n).astype(np.float32)
        gpu = R.first_pass(cupy.asarray(host), version, block).get()
        emu = M.emulate_first_pass(host, version, block)
        np.testing.assert_array_equal(gpu.view(np.uint32), emu.view(np.uint32))
