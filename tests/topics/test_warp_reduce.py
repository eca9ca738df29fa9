"""Warp reduce trees on the emulator: against NumPy, who holds the result, the seed's ballot mask,
the library methods, float order, validation, the kernels' PTX, and the H200 recordings."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.engine import kernels
from helpers.topics import warp_reduce as wr
from helpers.engine.trace import Trace
from recordings import needs
from warp_reduce_cases import tree_configs

EMU = "emulator"
RNG = np.random.default_rng(2026)


def _values(dtype: str, shape=(3, 32)) -> np.ndarray:
    if dtype == "float32":
        return RNG.integers(-50, 50, shape).astype(np.float32)      # small integers: every order is exact
    if dtype == "uint32":
        return RNG.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    return RNG.integers(-(2**31), 2**31, shape, dtype=np.int64).astype(np.int32)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32"])
@pytest.mark.parametrize("op", wr.OPS)
def test_trees_match_numpy(op: str, dtype: str) -> None:
    v = _values(dtype)
    for tree, width, n_valid in tree_configs(op, dtype, lambda width: {1, max(1, width // 2 + 1), width}):
        r = wr.warp_reduce(v, op, width, tree, n_valid, backend=EMU)
        assert r.correct, (tree, width, n_valid)
        assert r.defined.all()


def test_who_holds_the_result() -> None:
    v = np.arange(32, dtype=np.int32)
    down = wr.warp_reduce(v, "sum", 8, "down", backend=EMU)
    assert np.flatnonzero(down.holders[0]).tolist() == [0, 8, 16, 24]
    assert down.result[0].tolist() == [28, 92, 156, 220]
    assert not np.all(down.values[0] == np.repeat(down.result[0], 8))   # other lanes hold partials
    xor = wr.warp_reduce(v, "sum", 8, "xor", backend=EMU)
    assert xor.holders.all() and (xor.values[0] == np.repeat(xor.result[0], 8)).all()


def test_max_pads_with_lowest() -> None:
    v = np.full(32, -5, np.int32)
    r = wr.warp_reduce(v, "max", 32, "down", n_valid=3, backend=EMU)
    assert r.result[0, 0] == -5                                   # identity never wins
    assert wr.identity("max", np.float32) == -np.inf and wr.identity("bit_and", np.int32) == -1
    assert wr.identity("bit_and", np.uint32) == 0xFFFFFFFF and wr.identity("min", np.int32) == 2**31 - 1


def test_trace_shape_and_labels() -> None:
    t = wr.warp_reduce_trace(np.arange(64, dtype=np.int32).reshape(2, 32), "sum", 16, "xor", backend=EMU)
    assert t.labels == ("input", "shfl_xor 8", "shfl_xor 4", "shfl_xor 2", "shfl_xor 1")
    assert t.held.shape == (5, 2, 32) and t.defined.all()
    assert t.meta["result_lanes"] == list(range(32))
    assert t.held[-1, 1, 16] == sum(range(48, 64))
    assert Trace.from_dict(t.to_dict()).same_as(t)
    assert wr.warp_reduce_trace(np.ones(32, np.int32), width=1, backend=EMU).labels == ("input",)


def test_seed_ballot_mask_is_undefined_below_32() -> None:
    v = np.arange(32, dtype=np.int32)
    for n in (1, 16, 20, 31):
        r = wr.warp_reduce(v, "sum", n_valid=n, partial="ballot", backend=EMU)
        assert not r.result_defined[0, 0], n                      # lane 0 read from outside the mask
    full = wr.warp_reduce(v, "sum", n_valid=32, partial="ballot", backend=EMU)
    assert full.correct
    t = wr.warp_reduce_trace(v, "sum", n_valid=20, partial="ballot", backend=EMU)
    assert int(t.in_mask[0, 0].sum()) == 20 and not t.active[0, 0, 20:].any()
    # step 1 (offset 16): lanes 0..3 read lanes 16..19 (in the mask), lanes 4..15 read lanes 20..31 (not)
    assert t.defined[1, 0, :4].all() and not t.defined[1, 0, 4:16].any() and t.defined[1, 0, 16:20].all()
    assert (t.held[:, 0][~t.defined[:, 0] & t.active[:, 0]] == 0).all()     # undefined is stored as 0
    pad = wr.warp_reduce(v, "sum", n_valid=20, partial="pad", backend=EMU)
    assert pad.correct and pad.result[0, 0] == sum(range(20))


def test_seed_warp_reduce_is_the_down_tree_when_converged() -> None:
    v = _values("int32", (2, 32))
    seed, down = wr.seed_warp_reduce(v, "max", backend=EMU), wr.warp_reduce(v, "max", backend=EMU)
    assert seed.method == "seed" and seed.correct and (seed.values == down.values).all()


@pytest.mark.parametrize("method", wr.LIBRARY_METHODS)
def test_library_methods(method: str) -> None:
    v = _values("int32", (2, 32))
    for op in wr.OPS:
        r = wr.library_reduce(v, op, method, backend=EMU)
        assert r.correct
        assert r.holders[:, 0].all() and (r.holders.all() if method != "cub" else r.holders.sum() == 2)


def test_compare_methods_float_orders() -> None:
    v = np.random.default_rng(0).standard_normal(32).astype(np.float32) * 1000
    res = wr.compare_methods(v, "sum", backend=EMU)
    assert set(res) == {"down", "xor", "cg", "cub"}               # no __reduce_*_sync for floats
    assert res["cg"].values[0, 0] == res["xor"].values[0, 0]       # cg's shuffle path is the butterfly
    assert set(wr.compare_methods(v.astype(np.int32), backend=EMU)) == set(wr.METHODS)


def test_float_order() -> None:
    v = np.random.default_rng(5).standard_normal(32).astype(np.float32)
    f = wr.float_order(v, backend=EMU)
    assert f.tree == float(wr.warp_reduce(v, backend=EMU).values[0, 0])
    seq = np.float32(0)
    for x in v:
        seq = np.float32(seq + x)
    assert f.sequential == float(seq)
    assert abs(f.exact - float(v.astype(np.float64).sum())) < 1e-12
    assert f.ulps >= 0 and (f.ulps == 0) == (f.tree == f.sequential)
    exact = wr.float_order(np.ones(32, np.float32), backend=EMU)
    assert exact.ulps == 0 and exact.tree == exact.sequential == exact.exact == 32.0


def test_reference_wraps_integers() -> None:
    v = np.full(32, 2**30, np.int32)
    assert wr.reference(v) == np.int32(0)                          # 32 * 2**30 = 2**35 wraps to 0
    assert wr.warp_reduce(v, backend=EMU).result[0, 0] == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"op": "prod"}, "op must be one of 'sum', 'max', 'min', 'bit_and', 'bit_or', 'bit_xor'; got 'prod'"),
    ({"width": 3}, r"width must be a power of two in \[1, 32\] \(1, 2, 4, 8, 16, 32\); got 3"),
    ({"width": 64}, r"width must be a power of two in \[1, 32\]"),
    ({"n_valid": 0}, r"n_valid must be an integer in \[1, width\] = \[1, 32\]"),
    ({"width": 8, "n_valid": 9}, r"n_valid must be an integer in \[1, width\] = \[1, 8\]"),
    ({"tree": "up"}, "tree must be one of 'down', 'xor'; got 'up'"),
    ({"partial": "mask"}, "partial must be one of 'pad', 'ballot'; got 'mask'"),
    ({"partial": "ballot", "tree": "xor"}, "partial='ballot' is the seed's shuffle-down code"),
    ({"partial": "ballot", "width": 16}, "needs tree='down' and width=32"),
    ({"backend": "gpu"}, "backend must be None"),
])
def test_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wr.warp_reduce_trace(np.arange(32, dtype=np.int32), **kwargs)


def test_validation_dtypes() -> None:
    with pytest.raises(ValueError, match=r"op 'bit_and' needs an integer dtype \(int32, uint32\); got float32"):
        wr.warp_reduce(np.ones(32, np.float32), "bit_and")
    with pytest.raises(ValueError, match="method='intrinsic'.*needs dtype int32 or uint32; got float32"):
        wr.library_reduce(np.ones(32, np.float32), method="intrinsic", backend=EMU)
    with pytest.raises(ValueError, match="method must be one of 'intrinsic', 'cg', 'cub'"):
        wr.library_reduce(np.ones(32, np.int32), method="thrust", backend=EMU)
    with pytest.raises(ValueError, match=r"values must be 32 float32 values"):
        wr.float_order(np.ones(32, np.int32))


# ---------------------------------------------------------------- the kernels themselves

def _ptx(arch: str, expr: str, defines: tuple[str, ...] = ()) -> str:
    return kernels.ptx("warp_reduce_ops", arch, [expr], defines)


@pytest.mark.slow
@pytest.mark.needs_nvrtc
def test_reduce_intrinsic_only_from_sm80() -> None:
    expr = "warp_reduce_intrinsic_kernel<int, warplab::ops::Sum<int>>"
    assert "redux.sync" not in _ptx("sm_70", expr) and "trap" in _ptx("sm_70", expr)
    assert "redux.sync" in _ptx("sm_80", expr)


@pytest.mark.needs_nvrtc
def test_trace_shuffles_exist_only_when_tracing() -> None:
    expr = "warp_reduce_kernel<float, warplab::ops::Sum<float>, true>"
    assert _ptx("sm_90", expr).count("shfl.sync.bfly") == 1 + 2 + 3 + 4 + 5          # widths 2..32
    assert _ptx("sm_90", expr, ("WARPLAB_TRACE",)).count("shfl.sync.bfly") == 2 * 15


def test_anchors_exist() -> None:
    assert {"warp_reduce_sum", "reduce_ops", "warp_reduce", "warp_all_reduce", "warp_reduce_partial"} <= \
        set(kernels.anchors("warp_reduce.cuh"))
    assert {"warp_reduce_kernel", "warp_reduce_intrinsic", "warp_reduce_cg", "warp_reduce_cub"} <= \
        set(kernels.anchors("warp_reduce_ops"))


# ---------------------------------------------------------------- the H200 recordings

def test_emulator_reproduces_recorded_traces() -> None:
    rec = needs("warp_reduce_traces")
    assert rec["traces"]
    for name, entry in rec["traces"].items():
        cfg = dict(entry["config"])
        cfg["values"] = np.asarray(cfg["values"], dtype=cfg.pop("dtype"))
        assert wr.warp_reduce_trace(**cfg, backend=EMU).same_as(Trace.from_dict(entry["trace"])), name


def test_emulator_reproduces_recorded_methods() -> None:
    rec = needs("warp_reduce_traces")
    for name, entry in rec["methods"].items():
        v = np.asarray(entry["config"]["values"], dtype=entry["config"]["dtype"])
        emulated = wr.compare_methods(v, entry["config"]["op"], backend=EMU)
        for method, got in entry["results"].items():
            r = emulated[method]
            assert r.defined.astype(int).tolist() == got["defined"], (name, method)
            assert (r.values == np.asarray(got["values"], dtype=v.dtype)).all(), (name, method)


def test_64_bit_values_take_two_shfl_sync_per_shuffle() -> None:
    """Notebook 02: 'one shfl.sync per shuffle' holds for 32-bit types only (PTX shfl.sync is .b32)."""
    from helpers.engine.nvrtc import NvrtcUnavailable

    try:
        by_type = {d: wr.shuffle_ptx(d) for d in ("int32", "float32", "float64")}
    except NvrtcUnavailable as exc:
        pytest.skip(f"no NVRTC: {exc}")
    assert by_type["int32"].count == by_type["float32"].count == 5
    d = by_type["float64"]
    assert d.count == 10 and len(d.first_step) == 4
    assert d.first_step[0].startswith("mov.b64 {") and d.first_step[-1].startswith("mov.b64 %fd")
    assert all(line.startswith("shfl.sync.down.b32") and ", 16, 31, -1" in line for line in d.first_step[1:3])
    with pytest.raises(ValueError, match="dtype must be one of"):
        wr.shuffle_ptx("int64")


# ---------------------------------------------------------------- one engine: the kernels on the machine

def test_results_and_traces_come_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every topic function launches its kernel from kernels/ (no Python copy of the tree)."""
    from helpers.topics import launch as L

    seen: list[tuple[str, str]] = []
    real = L.launch

    def spy(name, expr, *a, **k):
        seen.append((name, expr))
        return real(name, expr, *a, **k)

    from helpers.topics import warp_kernels

    monkeypatch.setattr(warp_kernels, "launch", spy)
    v = _values("int32", (2, 32))
    assert wr.warp_reduce_trace(v, "max", 8, "xor", backend=EMU).source == "SIMT machine"
    wr.warp_reduce(v, "sum", n_valid=20, partial="ballot", backend=EMU)
    wr.seed_warp_reduce(v, backend=EMU)
    wr.compare_methods(v, "min", backend=EMU)
    wr.warp_reduce_sum(v, backend=EMU)
    assert seen == [
        ("warp_reduce_ops", "warp_reduce_kernel<int, warplab::ops::Max<int>, true>"),
        ("seed_block_reduce", "seed_partial_warp_kernel<int, warplab::ops::Sum<int>>"),
        ("seed_block_reduce", "seed_warp_reduce_kernel<int, warplab::ops::Sum<int>>"),
        ("warp_reduce_ops", "warp_reduce_kernel<int, warplab::ops::Min<int>, false>"),
        ("warp_reduce_ops", "warp_reduce_kernel<int, warplab::ops::Min<int>, true>"),
        *(("warp_reduce_ops", f"warp_reduce_{m}_kernel<int, warplab::ops::Min<int>>") for m in wr.LIBRARY_METHODS),
        ("warp_reduce_sum", "warp_reduce_sum_kernel<int>"),
    ]
    assert {e for _, e in seen} <= {e for exprs in (*warp_kernels.WARP_REDUCE_KERNELS.values(), warp_kernels.SEED_KERNELS) for e in exprs}


def test_64_bit_traces_join_the_two_32_bit_shuffles() -> None:
    v = np.random.default_rng(7).standard_normal((2, 32))
    t, g = wr.warp_reduce_sum_trace(v, backend=EMU), wr.warp_reduce_trace(v, backend=EMU)
    assert t.held.dtype == np.float64 and t.n_steps == 6 and t.defined.all()
    assert t.same_as(g)                                       # WarpReduceSum is WarpReduce<double, Sum, 32>
    assert (t.held[-1, :, 0] == wr.warp_reduce_sum(v, backend=EMU)).all()
    assert t.src_lane[1, 0, :16].tolist() == list(range(16, 32))


def test_chunks_give_what_one_launch_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers.engine import params

    v = _values("int32", (7, 32))
    whole = wr.compare_methods(v, "sum", backend=EMU)
    monkeypatch.setattr(params, "CHUNK_WARPS", 3)             # 3 + 3 + 1 warps
    for method, r in wr.compare_methods(v, "sum", backend=EMU).items():
        assert (r.values == whole[method].values).all() and (r.defined == whole[method].defined).all(), method


def test_cub_defines_lane_0_only_and_the_machine_flags_the_seed_lanes() -> None:
    v = _values("int32", (2, 32))
    cub = wr.library_reduce(v, "sum", "cub", backend=EMU)
    assert cub.defined[:, 0].all() and not cub.defined[:, 1:].any() and (cub.values[:, 1:] == 0).all()
    seed = wr.warp_reduce(v, "sum", n_valid=20, partial="ballot", backend=EMU)
    # lanes >= n_valid write nothing; each of the others read a lane in [20, 32) at some step
    assert not seed.defined.any() and (seed.values == 0).all()


def test_the_machine_trace_flags_what_a_lane_holds_between_shuffles() -> None:
    t = wr.warp_reduce_trace(np.arange(32, dtype=np.int32), "sum", n_valid=20, partial="ballot", backend=EMU)
    # lane 8 receives lane 16's defined value at step 2, but holds its own undefined sum from step 1
    assert t.defined[2, 0, 8] and not t.defined[1, 0, 8] and t.held[2, 0, 8] == 0


def test_ops_module_is_the_one_operator_table() -> None:
    from helpers.engine import ops

    assert wr.OPS is ops.OPS and wr.identity is ops.identity and wr.reference is ops.reference
    assert ops.op_exprs("k<{t}, {op}>", ("float32",)) == tuple(
        f"k<float, warplab::ops::{c}<float>>" for c in ("Sum", "Max", "Min"))
    assert ops.ulps_apart(np.float32(1), np.nextafter(np.float32(1), np.float32(2))) == 1
    assert ops.ulps_apart(np.float32(-0.0), np.float32(0.0)) == 0
    with pytest.raises(ValueError, match="dtype must be one of int32, uint32, float32, float64"):
        ops.ctype(np.int64)
