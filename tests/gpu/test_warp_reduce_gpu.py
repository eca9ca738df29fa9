"""On a GPU: every warp reduce kernel against NumPy; the hardware's values equal the SIMT machine's
wherever the machine says they are defined, in results and in traces."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.engine import backend
from helpers.engine import ops
from helpers.topics import warp_kernels
from helpers.topics import warp_reduce as wr
from warp_reduce_cases import tree_configs

pytestmark = pytest.mark.gpu
GPU, EMU = "cupy", "emulator"
RNG = np.random.default_rng(303)


def _values(dtype: str, n_warps: int = 4) -> np.ndarray:
    if dtype == "float32":
        return RNG.integers(-50, 50, (n_warps, 32)).astype(np.float32)   # exact in any order
    return RNG.integers(-(2**31), 2**31, (n_warps, 32), dtype=np.int64).astype(np.int32)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("op", wr.OPS)
def test_trees_match_numpy(op: str, dtype: str) -> None:
    v = _values(dtype)
    for tree, width, n_valid in tree_configs(op, dtype, lambda width: {1, int(RNG.integers(1, width + 1)), width}):
        r = wr.warp_reduce(v, op, width, tree, n_valid, backend=GPU)
        assert r.correct, (tree, width, n_valid)
        emu = wr.warp_reduce(v, op, width, tree, n_valid, backend=EMU)
        assert (r.values == emu.values).all(), (tree, width, n_valid)     # every lane, partials too


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("method", wr.LIBRARY_METHODS)
def test_library_methods_match_numpy(method: str, dtype: str) -> None:
    if method == "intrinsic" and (dtype != "int32" or float(backend.detect().compute_capability) < 8.0):
        pytest.skip("__reduce_*_sync: int32 on compute capability 8.0+")
    v = _values(dtype)
    for op in wr.OPS:
        if op in wr.BITWISE_OPS and dtype == "float32":
            continue
        r = wr.library_reduce(v, op, method, backend=GPU)
        assert r.correct, op


def test_seed_warp_reduce_matches() -> None:
    v = _values("int32")
    for op in wr.OPS:
        gpu, emu = wr.seed_warp_reduce(v, op, backend=GPU), wr.seed_warp_reduce(v, op, backend=EMU)
        assert gpu.correct and (gpu.values == emu.values).all(), op


@pytest.mark.parametrize("method", ["down", "xor", "cg", "cub"])
def test_float_sum_order_is_modelled(method: str) -> None:
    """The emulator rounds float sums in each method's own order, bit for bit."""
    v = (np.random.default_rng(9).standard_normal((8, 32)) * 1000).astype(np.float32)
    gpu = wr.compare_methods(v, "sum", backend=GPU)[method]
    emu = wr.compare_methods(v, "sum", backend=EMU)[method]
    assert (gpu.values == emu.values).all() and (gpu.defined == emu.defined).all()


CONFIGS = [
    {"op": "sum", "tree": "down"}, {"op": "sum", "tree": "xor"}, {"op": "max", "width": 8},
    {"op": "min", "width": 4, "tree": "xor"}, {"op": "bit_xor", "width": 16}, {"op": "bit_and", "width": 2},
    {"op": "sum", "n_valid": 20}, {"op": "sum", "width": 16, "tree": "xor", "n_valid": 5},
    {"op": "sum", "n_valid": 20, "partial": "ballot"}, {"op": "max", "n_valid": 31, "partial": "ballot"},
    {"op": "sum", "n_valid": 32, "partial": "ballot"},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_emulator_traces_equal_gpu_traces(config: dict) -> None:
    for dtype in ("int32", "float32"):
        if config["op"] in wr.BITWISE_OPS and dtype == "float32":
            continue
        v = _values(dtype, 3) if dtype == "int32" else np.random.default_rng(1).standard_normal((3, 32)).astype(np.float32)
        gpu = wr.warp_reduce_trace(v, **config, backend=GPU)
        emu = wr.warp_reduce_trace(v, **config, backend=EMU)
        assert gpu.same_as(emu), dtype
        assert gpu.source.startswith("GPU")


def test_float_order_on_gpu() -> None:
    v = np.random.default_rng(11).standard_normal(32).astype(np.float32)
    assert wr.float_order(v, backend=GPU) == wr.float_order(v, backend=EMU)


def _kernel_inputs(expr: str, n_warps: int = 3) -> list:
    """Inputs for any registered warp kernel of this module: (in, [scalars,] out), full warps."""
    t = next(d for d, c in ops.CTYPES.items() if f"<{c}," in expr or f"<{c}>" in expr)
    op = next((o for o, c in ops.CPP_OPS.items() if f"ops::{c}<" in expr), "sum")
    v = np.random.default_rng(len(expr)).integers(-1000, 1000, n_warps * 32)
    if op in ("sum",) and t.startswith("float"):
        v = np.random.default_rng(len(expr)).standard_normal(n_warps * 32) * 1000   # rounding order shows
    v = v.astype(t)
    if expr.startswith("warp_reduce_kernel"):
        return [[v, np.int32(w), np.int32(nv), np.zeros_like(v)] for w in (1, 4, 32) for nv in {1, w // 2 + 1, w}]
    if expr.startswith("seed_partial_warp_kernel"):
        return [[v, np.int32(nv), np.zeros_like(v)] for nv in (1, 20, 31, 32)]
    if expr.startswith("warp_reduce_sum_kernel"):
        return [[v, np.zeros(n_warps, v.dtype)]]
    return [[v, np.zeros_like(v)]]


WARP_KERNELS = [(f, e) for f, exprs in warp_kernels.WARP_REDUCE_KERNELS.items() for e in exprs] + \
    [("seed_block_reduce", e) for e in warp_kernels.SEED_KERNELS if e.startswith(("seed_warp_reduce", "seed_partial_warp"))]


@pytest.mark.parametrize("file, expr", WARP_KERNELS, ids=[e for _, e in WARP_KERNELS])
def test_gpu_and_machine_agree_on_every_defined_value(file: str, expr: str) -> None:
    """Issue 12: the hardware's values equal the SIMT machine's wherever the machine says they are
    defined, bit for bit, for every registered warp kernel of warp_reduce (ballot-mask reads included)."""
    from helpers.topics import launch as L

    if "intrinsic" in expr and float(backend.detect().compute_capability) < 8.0:
        pytest.skip("__reduce_*_sync needs compute capability 8.0+")
    for args in _kernel_inputs(expr):
        r = L.launch(file, expr, 3, 32, args, backend=GPU, check=True)
        assert r.engine == "cupy" and r.report is not None
        assert r.disagreements() == [], (expr, [a for a in args if np.isscalar(a)])
