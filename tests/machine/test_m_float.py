"""The SIMT machine: IEEE binary32/binary64 arithmetic with the instruction's rounding, fused fma,
.ftz, .sat, conversions, and refusal of approximate instructions (PTX ISA Floating-Point Instructions, cvt)."""
from fractions import Fraction

import numpy as np
import pytest

from helpers import machine
from helpers.machine import values

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
extern "C" __global__ void f32ops(const float* a, const float* b, const float* c, float* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], z = c[i];
    out[0 * n + i] = fmaf(x, y, z);
    out[1 * n + i] = __fadd_rz(x, y);
    out[2 * n + i] = __fmul_rd(x, y);
    out[3 * n + i] = __fadd_ru(x, y);
    out[4 * n + i] = __fdiv_rn(x, y);
    out[5 * n + i] = __fsqrt_rn(fabsf(x));
    out[6 * n + i] = __saturatef(x);
    out[7 * n + i] = fminf(x, y);
    out[8 * n + i] = fmaxf(x, y);
    out[9 * n + i] = __fmaf_rz(x, y, z);
}

extern "C" __global__ void f64ops(const double* a, const double* b, const double* c, double* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i], z = c[i];
    out[0 * n + i] = fma(x, y, z);
    out[1 * n + i] = __dadd_rz(x, y);
    out[2 * n + i] = x / y;
    out[3 * n + i] = sqrt(fabs(x));
    out[4 * n + i] = (double)(float)x;
}

extern "C" __global__ void conv(const float* a, int* oi, unsigned* ou, float* of, const int* ii, const long long* il, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    oi[0 * n + i] = __float2int_rn(x);
    oi[1 * n + i] = __float2int_rz(x);
    oi[2 * n + i] = __float2int_rd(x);
    oi[3 * n + i] = __float2int_ru(x);
    ou[i] = __float2uint_rz(x);
    of[0 * n + i] = __int2float_rn(ii[i]);
    of[1 * n + i] = __int2float_rz(ii[i]);
    of[2 * n + i] = __ll2float_rn(il[i]);
    of[3 * n + i] = rintf(x);
    of[4 * n + i] = truncf(x);
}

extern "C" __global__ void ftz_add(const float* a, const float* b, float* out) {
    out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}

extern "C" __global__ void approx(const float* a, float* out) {
    out[threadIdx.x] = __sinf(a[threadIdx.x]);
}
"""

# hand-written PTX: a mul.f32 feeding an add.f32, neither with a rounding modifier (ptxas may fuse them)
CONTRACT_PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry contract(.param .u64 p_a, .param .u64 p_out)
{
    .reg .f32 %f<4>;
    .reg .b64 %rd<6>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    mul.f32 %f2, %f1, %f1;
    add.f32 %f3, %f2, %f1;
    add.s64 %rd5, %rd2, %rd3;
    st.global.f32 [%rd5], %f3;
    ret;
}
"""


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17",))


def _hard_floats(seed, n, dtype):
    rng = np.random.default_rng(seed)
    v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, np.finfo(dtype).tiny / 4,
                        np.finfo(dtype).max, 1 + np.finfo(dtype).eps], dtype)
    v[:special.size] = special
    return v


def _exact(op, dtype, mode, *xs):
    return values.exact_op(op, np.dtype(dtype), mode, *xs)


def _same(a, b):
    """Bit-identical, treating any NaN as equal to any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    both_nan = np.isnan(a) & np.isnan(b)
    ub = np.uint32 if a.dtype == np.float32 else np.uint64
    return np.all(both_nan | (a.view(ub) == b.view(ub)))


def test_fma_f32_is_fused_with_one_rounding():
    # cases where a*b+c rounded twice differs from the fused result
    rng = np.random.default_rng(11)
    a = (1 + rng.integers(1, 2**23, 600) * 2.0**-23).astype(np.float32)
    b = (1 + rng.integers(1, 2**23, 600) * 2.0**-23).astype(np.float32)
    c = (-(a.astype(np.float64) * b)).astype(np.float32)
    got = values.fma_f32(a, b, c)
    exact = [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) for x, y, z in zip(a, b, c)]
    ref = _exact("fma", np.float32, "rn", a, b, c)
    assert _same(got, ref)
    assert np.any(got != (a * b + c))  # the unfused result differs in some cases
    assert np.all(np.isfinite(exact))


def test_f32_instructions_round_as_the_instruction_says(mod):
    n = 96
    a, b, c = _hard_floats(1, n, np.float32), _hard_floats(2, n, np.float32), _hard_floats(3, n, np.float32)
    out = np.zeros(10 * n, np.float32)
    rep = mod.get_function("f32ops")((1,), (n,), (a, b, c, out, np.int32(n)))
    assert rep.clean
    o = out.reshape(10, n)
    with np.errstate(all="ignore"):
        assert _same(o[0], _exact("fma", np.float32, "rn", a, b, c))
        assert _same(o[1], _exact("add", np.float32, "rz", a, b))
        assert _same(o[2], _exact("mul", np.float32, "rm", a, b))
        assert _same(o[3], _exact("add", np.float32, "rp", a, b))
        assert _same(o[4], a / b)
        assert _same(o[5], np.sqrt(np.abs(a)))
        assert _same(o[6], np.where(np.isnan(a), 0, np.clip(a, 0, 1)).astype(np.float32) + np.float32(0))
        assert _same(o[9], _exact("fma", np.float32, "rz", a, b, c))
    # fminf/fmaxf: a NaN operand is ignored; -0 is below +0
    assert o[7][4] == b[4] or np.isnan(b[4])
    assert np.signbit(values.exact_op("add", np.dtype(np.float32), "rm", np.float32([1.0]), np.float32([-1.0]))[0])


def test_f64_fma_is_exact(mod):
    n = 64
    a, b, c = _hard_floats(4, n, np.float64), _hard_floats(5, n, np.float64), _hard_floats(6, n, np.float64)
    c[20:] = -(a[20:] * b[20:])  # products whose low bits the fused result keeps
    out = np.zeros(5 * n, np.float64)
    mod.get_function("f64ops")((1,), (n,), (a, b, c, out, np.int32(n)))
    o = out.reshape(5, n)
    with np.errstate(all="ignore"):
        assert _same(o[0], _exact("fma", np.float64, "rn", a, b, c))
        assert _same(o[1], _exact("add", np.float64, "rz", a, b))
        assert _same(o[2], a / b)
        assert _same(o[3], np.sqrt(np.abs(a)))
        assert _same(o[4], a.astype(np.float32).astype(np.float64))
    assert np.any(o[0][20:] != 0)


def test_float_to_int_saturates_and_nan_becomes_zero(mod):
    n = 64
    a = _hard_floats(7, n, np.float32)
    a[10:14] = [2.5, -2.5, 3e9, -3e9]
    ii = np.random.default_rng(8).integers(-2**31, 2**31 - 1, n).astype(np.int32)
    il = np.random.default_rng(9).integers(-2**63, 2**63 - 1, n).astype(np.int64)
    oi = np.zeros(4 * n, np.int32)
    ou = np.zeros(n, np.uint32)
    of = np.zeros(5 * n, np.float32)
    mod.get_function("conv")((1,), (n,), (a, oi, ou, of, ii, il, np.int32(n)))
    oi = oi.reshape(4, n)
    def sat(r, lo, hi):
        r = np.where(np.isnan(r), 0, r)
        return np.clip(r, lo, hi)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(oi[0], sat(np.rint(a.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int64))
        np.testing.assert_array_equal(oi[1], sat(np.trunc(a.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int64))
        np.testing.assert_array_equal(oi[2], sat(np.floor(a.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int64))
        np.testing.assert_array_equal(oi[3], sat(np.ceil(a.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int64))
        np.testing.assert_array_equal(ou, sat(np.trunc(a.astype(np.float64)), 0, 2**32 - 1).astype(np.uint64))
    of = of.reshape(5, n)
    assert _same(of[0], ii.astype(np.float32))
    rz = [values.round_fraction(Fraction(int(x)), np.dtype(np.float32), "rz") for x in ii]
    assert _same(of[1], np.array(rz, np.float32))
    rn64 = [values.round_fraction(Fraction(int(x)), np.dtype(np.float32), "rn") for x in il]
    assert _same(of[2], np.array(rn64, np.float32))
    with np.errstate(all="ignore"):
        assert _same(of[3], np.rint(a))
        assert _same(of[4], np.trunc(a))


def test_ftz_flushes_subnormal_inputs_and_results():
    mod = machine.RawModule(code=SRC, options=("-std=c++17", "-ftz=true"))
    assert ".ftz" in mod.ptx
    tiny = np.finfo(np.float32).tiny
    a = np.array([tiny / 2, tiny, -tiny / 4, 1.0] * 8, np.float32)
    b = np.full(32, -0.0, np.float32)  # -0 + -0 keeps the sign of the flushed -tiny/4
    out = np.ones(32, np.float32)
    mod.get_function("ftz_add")((1,), (32,), (a, b, out))
    np.testing.assert_array_equal(out[:4], np.array([0, tiny, -0.0, 1.0], np.float32))
    assert np.signbit(out[2])


def test_approximate_instruction_is_refused_with_its_line(mod):
    a = np.ones(32, np.float32)
    with pytest.raises(machine.UnsupportedInstruction) as exc:
        mod.get_function("approx")((1,), (32,), (a, np.zeros(32, np.float32)))
    assert "sin.approx" in str(exc.value) and exc.value.line is not None
    assert "approximate" in str(exc.value)


def test_mul_feeding_add_without_rounding_modifiers_is_flagged():
    mod = machine.RawModule(ptx=CONTRACT_PTX)
    a = np.linspace(-2, 2, 32).astype(np.float32)
    out = np.zeros(32, np.float32)
    rep = mod.get_function("contract")((1,), (32,), (a, out))
    assert len(rep.fma_contractable) == 1 and "add.f32" in rep.fma_contractable[0][1]
    np.testing.assert_array_equal(out, a * a + a)


def test_min_max_order_signed_zeros_and_give_the_canonical_nan():
    """docs/machine.md, Values: min/max ignore one NaN, order -0 below +0, and give the canonical NaN
    0x7fffffff for two NaNs (PTX ISA min, max; checked here bit for bit, not only as "a NaN")."""
    src = r"""
extern "C" __global__ void mm(const float* a, const float* b, unsigned* out) {
    int i = threadIdx.x;
    out[2 * i] = __float_as_uint(fminf(a[i], b[i]));
    out[2 * i + 1] = __float_as_uint(fmaxf(a[i], b[i]));
}"""
    nan = np.float32(np.nan)
    other_nan = np.uint32(0x7FC00001).view(np.float32)
    a = np.array([-0.0, 0.0, nan, nan, 1.0], np.float32)
    b = np.array([0.0, -0.0, other_nan, 2.0, nan], np.float32)
    out = np.zeros(2 * a.size, np.uint32)
    machine.RawModule(code=src).get_function("mm")((1,), (a.size,), (a, b, out))
    bits = lambda x: int(np.float32(x).view(np.uint32))  # noqa: E731
    assert out.tolist() == [bits(-0.0), bits(0.0), bits(-0.0), bits(0.0), 0x7FFFFFFF, 0x7FFFFFFF,
                            bits(2.0), bits(2.0), bits(1.0), bits(1.0)]


def test_an_arch_below_compute_70_is_refused():
    with pytest.raises(ValueError, match="compute_70 or newer"):
        machine.RawModule(code='extern "C" __global__ void k() {}', options=("-arch=compute_60",))
