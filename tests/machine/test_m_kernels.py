"""End to end: the project's kernels (kernels/*.cu) on the SIMT machine, against NumPy, and the
acceptance markers of issue 11 (the legacy warp-synchronous tail races; the __syncwarp() version
does not; the seed's BlockYReduce and the back-to-back BlockReduce without its barrier race)."""
import numpy as np
import pytest

from helpers import machine
from helpers.engine import kernels
from helpers.topics import reduce as R
from helpers.topics import warp_reduce

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

SUM_INT = "warplab::ops::Sum<int>"


def test_warp_reduce_sum_float_in_the_kernels_order():
    mod = machine.kernel_module("warp_reduce_sum", ("warp_reduce_sum_kernel<float>", "warp_reduce_sum_kernel<double>"))
    x = np.random.default_rng(0).standard_normal(96).astype(np.float32)
    out = np.zeros(3, np.float32)
    rep = mod.get_function("warp_reduce_sum_kernel<float>")((1,), (96,), (x, out))
    assert rep.clean
    ref = warp_reduce.warp_reduce_sum_trace(x.reshape(3, 32), backend="emulator")
    np.testing.assert_array_equal(out, ref.held[-1, :, 0])  # bit for bit: the same tree of adds
    xd = x.astype(np.float64)
    outd = np.zeros(3, np.float64)
    mod.get_function("warp_reduce_sum_kernel<double>")((1,), (96,), (xd, outd))
    refd = warp_reduce.warp_reduce_sum_trace(xd.reshape(3, 32), backend="emulator")
    np.testing.assert_array_equal(outd, refd.held[-1, :, 0])


@pytest.mark.parametrize("kind, block", [("block_reduce_kernel", (100, 3)), ("block_all_reduce_kernel", (48, 1)),
                                         ("block_x_reduce_kernel", (48, 3)), ("block_y_reduce_kernel", (5, 7))])
def test_block_reductions_are_clean_and_right(kind, block):
    expr = f"{kind}<int, {SUM_INT}>"
    mod = machine.kernel_module("block_reduce", (expr,))
    x, y = block
    v = np.random.default_rng(x * 1031 + y).integers(-9, 10, (y, x)).astype(np.int32)
    out = np.zeros(v.size, np.int32)
    rep = mod.get_function(expr)((1,), block, (v.reshape(-1), out))
    assert rep.clean, rep.summary()
    o = out.reshape(y, x)
    if kind == "block_reduce_kernel":
        assert o[0, 0] == v.sum()
    elif kind == "block_all_reduce_kernel":
        assert (o == v.sum()).all()
    elif kind == "block_x_reduce_kernel":
        assert (o == v.sum(axis=1, keepdims=True)).all()
    else:
        assert (o == v.sum(axis=0, keepdims=True)).all()


def test_seed_block_y_reduce_races():
    expr = f"seed_block_y_reduce_kernel<int, {SUM_INT}>"
    mod = machine.kernel_module("seed_block_reduce", (expr,))
    v = np.ones((3, 32), np.int32)
    out = np.zeros(v.size, np.int32)
    rep = mod.get_function(expr)((1,), (32, 3), (v.reshape(-1), out))
    r = rep.of_kind("race")
    assert r and r[0].detail["space"] == "shared"


@pytest.mark.parametrize("barrier", [True, False])
def test_back_to_back_block_reduce_needs_its_barrier(barrier):
    expr = f"back_to_back_kernel<int, {SUM_INT}, {'true' if barrier else 'false'}>"
    mod = machine.kernel_module("block_reduce", (expr,))
    out = np.zeros(256, np.int32)
    rep = mod.get_function(expr)((1,), (128,), (np.ones(128, np.int32), np.full(128, 2, np.int32), out))
    assert out[1] == 256
    if barrier:
        assert rep.clean and out[0] == 128
    else:
        r = rep.of_kind("race")
        assert r and r[0].detail["hazard"] == "WAR" and len(set(r[0].lines)) == 2
        assert rep.undefined[2][0]  # thread 0's first result: a racing write changed what it read


def _full_reduction(version, x, block=64):
    spec = R.SPECS[version]
    expr = R.kernel_name(version, block)
    mod = machine.kernel_module(spec.file, (expr,), ("REDUCE_UNROLL=4",) if spec.vector else ())
    k = mod.get_function(expr)
    grids = R.pass_grids(version, x.size, block, 8)
    kinds = set()
    if version == "onepass":
        partials, done, out = np.zeros(grids[0], np.float32), np.zeros(1, np.uint32), np.zeros(1, np.float32)
        rep = k((grids[0],), (block,), (x, partials, done, out, np.int64(x.size)))
        return out[0], rep.kinds(), rep.undefined[3][0]
    if version == "v9":  # one launch: tagged {tag, value} slot per block, ticket and launch tag
        slots, state, out = np.zeros(grids[0], np.uint64), np.zeros(1, np.uint64), np.zeros(1, np.float32)
        rep = k((grids[0],), (block,), (x, slots, state, out, np.int64(x.size)))
        return out[0], rep.kinds(), rep.undefined[3][0]
    src, n = x, x.size
    for g in grids:
        buf = np.zeros(g, np.float32)
        rep = k((g,), (block,), (src, buf, np.int64(n)))
        kinds |= rep.kinds()
        src, n = buf, g
    return src[0], kinds, rep.undefined[1][0]


@pytest.mark.parametrize("version", R.VERSIONS)
def test_every_ladder_version_sums_exactly_and_cleanly(version):
    x = np.random.default_rng(5).integers(-4, 5, 3001).astype(np.float32)  # exact in float32: any order
    x = x[1:]  # a view 4 bytes into its allocation: v8/onepass/v9 take their unaligned head path
    total, kinds, undefined = _full_reduction(version, x)
    assert not kinds and not undefined
    assert total == x.sum()


def test_v9_workspace_reset_is_strong() -> None:
    # v9's slots and its ticket atomic are strong on both sides; so is the last block's reset of the
    # workspace (st.relaxed.gpu): no weak/strong pair is left, so no data race in the PTX memory
    # model. With a plain store of the tag the machine reported one and called the sum undefined.
    text = kernels.source("reduce_v9")
    assert "*state = " not in text and "store_state(state, " in text
    x = np.random.default_rng(5).integers(-4, 5, 3001).astype(np.float32)[1:]
    total, kinds, undefined = _full_reduction("v9", x)
    assert total == x.sum() and not kinds and not undefined


@pytest.mark.parametrize("n", [1, 63, 1000, 3001])
def test_v9_one_block_instantiation_sums_exactly_and_traps_on_a_larger_grid(n):
    # reduce_v9<BLOCK, true>, what the dispatcher launches when one block does: the sum, nothing
    # else touched; its contract is a grid of 1, and a grid of 2 traps rather than adding twice.
    expr = R.kernel_name("v9", 64, grid=1)
    assert expr == "reduce_v9<64, true>"
    k = machine.kernel_module("reduce_v9", (expr,), ("REDUCE_UNROLL=4",)).get_function(expr)
    x = np.random.default_rng(n).integers(-4, 5, n + 1).astype(np.float32)[1:]
    slots, state, out = np.zeros(1, np.uint64), np.zeros(1, np.uint64), np.zeros(1, np.float32)
    rep = k((1,), (64,), (x, slots, state, out, np.int64(n)))
    assert rep.clean and out[0] == x.sum() and not slots.any() and not state.any()
    with pytest.raises(machine.MachineError, match="trap"):
        k((2,), (64,), (x, slots, state, out, np.int64(n)))


def test_legacy_warp_synchronous_tail_is_a_race():
    x = np.random.default_rng(6).standard_normal(512).astype(np.float32)
    total, kinds, undefined = _full_reduction("v4_legacy", x)
    assert "race" in kinds and undefined


def test_seed_reduce_v4_reads_past_the_end():
    mod = machine.kernel_module("seed_reduce_v4", ("seed_reduce_v4<128>",))
    x = np.ones(300, np.float32)
    out = np.zeros(2, np.float32)
    rep = mod.get_function("seed_reduce_v4<128>")((2,), (128,), (x, out))
    f = rep.of_kind("out_of_bounds")
    assert len(f) == 2 and sum(x.count for x in f) == 2 * 256 - 300  # one finding per load instruction
    assert not rep.of_kind("race")
