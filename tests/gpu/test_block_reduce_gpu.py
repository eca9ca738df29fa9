"""On a GPU: every block reduce kernel against NumPy over random shapes, the seeds' bugs as measured
on hardware, and the GPU and the SIMT machine agreeing on every value the machine calls defined
(helpers.topics.launch.Launch.disagreements) for every block kernel."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.topics import block_reduce as br
from helpers.topics.launch import launch
from helpers.topics.warp_reduce import BITWISE_OPS, OPS

pytestmark = pytest.mark.gpu
GPU, EMU = "cupy", "emulator"


def _shapes(rng: np.random.Generator) -> list[tuple[int, int]]:
    """1D sizes 32..1024 (multiples of 32 and not), 2D shapes with non-powers of two, and edge cases."""
    one_d = [(int(x), 1) for x in rng.integers(32, 1025, 4)] + [(32, 1), (1024, 1), (48, 1), (1, 1), (20, 1)]
    two_d = []
    while len(two_d) < 6:
        x, y = (int(d) for d in rng.integers(1, 200, 2))
        if x * y <= 1024:
            two_d.append((x, y))
    return one_d + two_d + [(1, 1024), (32, 32), (96, 2), (6, 4), (32, 3), (32, 5), (5, 7), (48, 3)]


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("kind, broadcast", [("sum", False), ("sum", True), ("x", False), ("y", False)])
def test_fixed_kernels_match_numpy_and_the_machine(kind: str, broadcast: bool, dtype: str) -> None:
    rng = np.random.default_rng({"sum": 1, "x": 2, "y": 3}[kind] + 10 * broadcast + (dtype == "float32"))
    for i, block in enumerate(_shapes(rng)):
        ops = [op for op in OPS if not (op in BITWISE_OPS and dtype == "float32")]
        op = ops[i % len(ops)]
        v = rng.integers(-100, 100, (block[1], block[0])).astype(dtype)   # small integers: exact
        r = br.block_reduce(v, block, op, kind, broadcast=broadcast, backend=GPU)
        assert r.source.startswith("GPU") and r.correct and r.defined.all() and not r.findings, (block, op)
        assert r.launch.disagreements() == [], (block, op)               # partials in other threads too


@pytest.mark.parametrize("kind", br.KINDS)
def test_seed_kernels_agree_with_the_machine(kind: str) -> None:
    """Wherever the machine calls a seed's value defined, the hardware gives that very value."""
    rng = np.random.default_rng(42)
    shapes = [(x, 1) for x in (32, 48, 64, 100, 256, 1000)] if kind == "sum" else \
        [(96, 2), (64, 2), (48, 2), (6, 4), (16, 8), (128, 4), (40, 3), (32, 3), (32, 5), (7, 9), (1, 64)]
    for block in shapes:
        v = rng.integers(-100, 100, (block[1], block[0])).astype(np.int32)
        gpu = br.block_reduce(v, block, "sum", kind, "seed", backend=GPU)
        assert gpu.launch.disagreements() == [], block
        emu = br.block_reduce(v, block, "sum", kind, "seed", backend=EMU)
        assert (gpu.values == emu.values).all() and (gpu.defined == emu.defined).all(), block


def test_seed_facts_on_hardware() -> None:
    ones = lambda x, y: np.ones((y, x), np.int32)  # noqa: E731
    assert br.block_reduce(ones(48, 1), version="seed", backend=GPU).result == 32
    x = br.block_reduce(ones(96, 2), kind="x", version="seed", backend=GPU)
    assert x.result_defined[0] and x.result[0] == 128
    assert (br.block_reduce(ones(32, 3), kind="y", version="seed", backend=GPU).result == 2).all()
    assert (br.block_reduce(ones(32, 5), kind="y", version="seed", backend=GPU).result == 4).all()


@pytest.mark.parametrize("barrier", [True, False])
@pytest.mark.parametrize("block", [(128, 1), (96, 3), (1024, 1)])
def test_back_to_back_agrees_with_the_machine(block: tuple[int, int], barrier: bool) -> None:
    """Through helpers.topics.launch with check=True: the GPU's outputs equal the machine's wherever the
    machine calls them defined (without the barrier, the racy first results are not compared)."""
    x, y = block
    rng = np.random.default_rng(x * y)
    a, b = (rng.integers(-9, 10, (y, x)).astype(np.int32) for _ in range(2))
    expr = f"back_to_back_kernel<int, warplab::ops::Sum<int>, {'true' if barrier else 'false'}>"
    run = launch("block_reduce", expr, 1, block, [a.reshape(-1), b.reshape(-1), np.zeros(2 * x * y, np.int32)],
                 backend=GPU, check=True)
    assert run.engine == "cupy" and run.disagreements() == []
    assert bool(run.report.of_kind("race")) == (not barrier)
    if barrier:
        assert br.back_to_back_gpu(a, b, block, barrier=True) == (a.sum(), b.sum())
    r = br.back_to_back(a, b, block, barrier=barrier, backend=GPU)
    assert r.second_defined and r.second == b.sum() and r.first_defined == barrier
