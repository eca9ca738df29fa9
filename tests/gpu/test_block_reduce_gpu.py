"""On a GPU: every block reduce kernel against NumPy over random shapes, the seeds' bugs as measured
on hardware, and the emulated model agreeing with the hardware wherever it calls a value defined."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import block_reduce as br
from helpers.warp_reduce import BITWISE_OPS, OPS

pytestmark = pytest.mark.gpu
GPU, EMU = "cupy", "emulator"


def _shapes(rng: np.random.Generator) -> list[tuple[int, int]]:
    """1D sizes 32..1024 (multiples of 32 and not), 2D shapes with non-powers of two, and edge cases."""
    one_d = [(int(x), 1) for x in rng.integers(32, 1025, 6)] + [(32, 1), (1024, 1), (48, 1), (1, 1), (20, 1)]
    two_d = []
    while len(two_d) < 10:
        x, y = (int(d) for d in rng.integers(1, 200, 2))
        if x * y <= 1024:
            two_d.append((x, y))
    return one_d + two_d + [(1, 1024), (32, 32), (96, 2), (6, 4), (32, 3), (32, 5), (5, 7), (48, 3)]


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("kind, broadcast", [("sum", False), ("sum", True), ("x", False), ("y", False)])
def test_fixed_kernels_match_numpy(kind: str, broadcast: bool, dtype: str) -> None:
    rng = np.random.default_rng({"sum": 1, "x": 2, "y": 3}[kind] + 10 * broadcast + (dtype == "float32"))
    for block in _shapes(rng):
        for op in OPS:
            if op in BITWISE_OPS and dtype == "float32":
                continue
            v = rng.integers(-100, 100, (block[1], block[0])).astype(dtype)   # small integers: exact
            r = br.block_reduce(v, block, op, kind, broadcast=broadcast, backend=GPU)
            assert r.correct and r.defined.all(), (block, op)
            emu = br.block_reduce(v, block, op, kind, broadcast=broadcast, backend=EMU)
            assert (r.values == emu.values).all(), (block, op)      # partials in other threads too


def test_seed_facts_on_hardware() -> None:
    ones = lambda x, y: np.ones((y, x), np.int32)  # noqa: E731
    assert br.block_reduce(ones(48, 1), version="seed", backend=GPU).result == 32
    x = br.block_reduce(ones(96, 2), kind="x", version="seed", backend=GPU)
    assert x.result_defined[0] and x.result[0] == 128
    assert (br.block_reduce(ones(32, 3), kind="y", version="seed", backend=GPU).result == 2).all()
    assert (br.block_reduce(ones(32, 5), kind="y", version="seed", backend=GPU).result == 4).all()


@pytest.mark.parametrize("kind", br.KINDS)
def test_seed_model_agrees_with_hardware(kind: str) -> None:
    """Wherever the model calls a seed's value defined, the hardware gives that very value."""
    rng = np.random.default_rng(42)
    shapes = [(x, 1) for x in (32, 48, 64, 100, 256, 1000)] if kind == "sum" else \
        [(96, 2), (64, 2), (48, 2), (6, 4), (16, 8), (128, 4), (40, 3), (32, 3), (32, 5), (7, 9), (1, 64)]
    for block in shapes:
        v = rng.integers(-100, 100, (block[1], block[0])).astype(np.int32)
        gpu = br.block_reduce(v, block, "sum", kind, "seed", backend=GPU)
        emu = br.block_reduce(v, block, "sum", kind, "seed", backend=EMU)
        assert (gpu.values == emu.values).all(), block


@pytest.mark.gpu
@pytest.mark.parametrize("block", [(128, 1), (96, 3), (1024, 1)])
def test_back_to_back_with_barrier_gives_both_sums(block: tuple[int, int]) -> None:
    x, y = block
    rng = np.random.default_rng(x * y)
    a, b = (rng.integers(-9, 10, (y, x)).astype(np.int32) for _ in range(2))
    assert br.back_to_back_gpu(a, b, block, barrier=True) == (a.sum(), b.sum())
