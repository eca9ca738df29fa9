"""The SIMT machine's affine registers (helpers.machine.registers.Affine): values that follow
``base + cta * c + loc * l`` are kept as that rule, and every result computed from one must equal
what per-thread arrays give, bit for bit: wrap-around, sign and zero extension, division and
comparisons at the edges of a type's range, and shapes where the rule does not apply."""
import numpy as np
import pytest

from helpers import machine
from helpers.machine.registers import Affine


def _brute(r: Affine) -> np.ndarray:
    """Every thread's exact integer, one per thread slot."""
    cta = np.repeat(np.arange(r.ncta, dtype=object), r.tpc)
    loc = np.tile(np.arange(r.tpc, dtype=object), r.ncta)
    return r.base + cta * r.cta + loc * r.loc


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_rule_arrays_hold_the_low_bits_of_the_integers(bits):
    rng = np.random.default_rng(bits)
    for _ in range(50):
        r = Affine(int(rng.integers(-2**62, 2**62)) * int(rng.integers(1, 2**12)), int(rng.integers(-2**40, 2**40)),
                   int(rng.integers(-2**40, 2**40)), bits, int(rng.integers(1, 5)), 32 * int(rng.integers(1, 3)))
        want = np.array([int(x) % (1 << bits) for x in _brute(r)], dtype=np.uint64)
        np.testing.assert_array_equal(r.array().astype(np.uint64), want)


def test_within_gives_the_same_bits_as_integers_of_the_range_or_none():
    rng = np.random.default_rng(0)
    for _ in range(300):
        bits = int(rng.choice([8, 32]))
        r = Affine(int(rng.integers(-2**40, 2**40)), int(rng.integers(-300, 300)), int(rng.integers(-300, 300)),
                   bits, int(rng.integers(1, 4)), 32)
        m = 1 << bits
        residues = [int(x) % m for x in _brute(r)]
        for lo, hi in ((-(m >> 1), (m >> 1) - 1), (0, m - 1)):
            w = r.within(lo, hi)
            # the range holds every value as an integer of it exactly when the integers it would
            # give (each residue moved into the range) are again one rule: compare with brute force
            if w is None:
                as_ints = [x if x <= hi else x - m for x in residues] if lo < 0 else residues
                assert not _is_rule(as_ints, r.tpc), (r, lo, hi)
                continue
            got = [int(x) for x in _brute(w)]
            assert all(lo <= x <= hi for x in got)
            assert [x % m for x in got] == residues


def _is_rule(vals: list[int], tpc: int) -> bool:
    """Whether per-slot integers are base + cta * c + loc * l for some integers."""
    a = np.array(vals, dtype=object).reshape(-1, tpc)
    d_loc, d_cta = a[:, 1:] - a[:, :-1], a[1:, :] - a[:-1, :]
    return (d_loc == d_loc.flat[0]).all() and (d_cta.size == 0 or (d_cta == d_cta.flat[0]).all())


# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
SRC = r"""
extern "C" __global__ void index_math(unsigned* out, int k, unsigned shift, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned u = (unsigned)i + shift;                 // wraps past 2^31 or 2^32 for some shifts
    out[0 * n + i] = (unsigned)i * 0x9E3779B9u;       // mul.lo wraps
    out[1 * n + i] = (unsigned)((long long)(int)u * 3 >> 7);      // mul.wide.s32 of u as signed
    out[2 * n + i] = (unsigned)((unsigned long long)u * 5u >> 3); // mul.wide.u32
    out[3 * n + i] = (unsigned)(i % k);
    out[4 * n + i] = (unsigned)(i / k);
    out[5 * n + i] = i < k;
    out[6 * n + i] = (int)u < k;
    out[7 * n + i] = u >= 7u;
    out[8 * n + i] = (unsigned)((long long)(int)u);   // cvt.s64.s32 then low bits
    out[9 * n + i] = (unsigned)((long long)(int)u >> 32);
    out[10 * n + i] = (unsigned)(((unsigned long long)u << 5) >> 33);
}
"""


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17",))


def _expected(T: int, k: int, shift: int) -> np.ndarray:
    i = np.arange(T, dtype=np.int64)
    u = (i + shift) % 2**32
    s = np.where(u >= 2**31, u - 2**32, u)

    def c_div(a, b):
        return np.array([abs(int(x)) // abs(b) * (1 if (x < 0) == (b < 0) else -1) for x in a], np.int64)
    rows = [(i * 0x9E3779B9) % 2**32, ((s * 3) >> 7) % 2**32, ((u * 5) >> 3) % 2**32,
            (i - c_div(i, k) * k) % 2**32, c_div(i, k) % 2**32, i < k, s < k, u >= 7, s % 2**32,
            (s >> 32) % 2**32, ((u << 5) >> 33) % 2**32]
    return np.array([np.asarray(r).astype(np.int64) for r in rows]).astype(np.uint32)


@pytest.mark.needs_nvrtc
@pytest.mark.parametrize("grid, block", [((4,), (32,)), ((3,), (64,)), ((2,), (32, 2)), ((2, 2), (32,))])
@pytest.mark.parametrize("k, shift", [(32, 0), (7, 0), (1000, 0), (1000, 2**31 - 70), (100, 2**31 - 70), (-5, 2**32 - 40), (1, 2**31 + 3)])
def test_index_arithmetic_equals_per_thread_arrays(mod, grid, block, k, shift):
    """One-dimensional launches keep the index as a rule; 2-D blocks and grids do not (tid.y, or
    ctaid.y), and the results must not differ. The shifts put a rule's values across 2^31 or 2^32,
    where widening and signed comparisons cannot use it."""
    T = int(np.prod(grid)) * int(np.prod(block))
    out = np.zeros(11 * T, np.uint32)
    g3, b3 = (*grid, 1, 1)[:3], (*block, 1, 1)[:3]
    fn = mod.get_function("index_math")
    if len(block) == 2 or len(grid) == 2:
        # the kernel indexes with x only: compute what it does with that index
        bx, gx = b3[0], g3[0]
        ix = np.array([(c % gx) * bx + (t % bx) for c in range(int(np.prod(grid))) for t in range(int(np.prod(block)))])
        rep = fn(g3, b3, (out, np.int32(k), np.uint32(shift), np.int32(T)))
        want = _expected(T, k, shift)
        # threads sharing an index write the same values: compare the written slots
        got = out.reshape(11, T)
        np.testing.assert_array_equal(got[:, np.unique(ix)], want[:, np.unique(ix)])
        return
    rep = fn(g3, b3, (out, np.int32(k), np.uint32(shift), np.int32(T)))
    assert rep.clean, rep.issues
    np.testing.assert_array_equal(out.reshape(11, T), _expected(T, k, shift))


@pytest.mark.needs_nvrtc
def test_out_of_bounds_through_a_rule_is_reported_as_before(mod):
    """n larger than the array: the rule's run leaves the allocation, so the store takes the
    per-thread path, which reports the threads past the end."""
    T = 64
    out = np.zeros(11 * T - 3, np.uint32)
    rep = mod.get_function("index_math")((2,), (32,), (out, np.int32(5), np.uint32(0), np.int32(T)))
    oob = [f for f in rep.issues if f.kind == "out_of_bounds"]
    assert oob and oob[0].count == 3
