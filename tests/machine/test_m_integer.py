"""The SIMT machine: integer arithmetic, bit operations and conversions against NumPy (PTX ISA
Integer Arithmetic, Logic and Shift Instructions, cvt)."""
import numpy as np
import pytest

from helpers import machine

# These tests compile CUDA C to PTX for the machine: they skip where NVRTC is absent (a Mac).
pytestmark = pytest.mark.needs_nvrtc

SRC = r"""
extern "C" __global__ void arith(const int* a, const int* b, int* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    out[0 * n + i] = x + y;
    out[1 * n + i] = x - y;
    out[2 * n + i] = x * y;
    out[3 * n + i] = __mulhi(x, y);
    out[4 * n + i] = (int)__umulhi((unsigned)x, (unsigned)y);
    out[5 * n + i] = y != 0 ? x / y : 0;
    out[6 * n + i] = y != 0 ? x % y : 0;
    out[7 * n + i] = min(x, y);
    out[8 * n + i] = max(x, y);
    out[9 * n + i] = abs(x);
    out[10 * n + i] = (int)((unsigned)x / ((unsigned)y | 1u));
    out[11 * n + i] = (int)((unsigned)x % ((unsigned)y | 1u));
}

extern "C" __global__ void bits(const unsigned* a, const unsigned* s, unsigned* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i];
    unsigned k = s[i] & 31u;
    out[0 * n + i] = x << k;
    out[1 * n + i] = x >> k;
    out[2 * n + i] = (unsigned)((int)x >> k);
    out[3 * n + i] = __popc(x);
    out[4 * n + i] = __clz(x);
    out[5 * n + i] = __brev(x);
    out[6 * n + i] = __ffs(x);
    out[7 * n + i] = x & ~s[i];
    out[8 * n + i] = x ^ (s[i] | 7u);
    out[9 * n + i] = __byte_perm(x, s[i], 0x3210 + (k & 3));
}

extern "C" __global__ void wide(const long long* a, const long long* b, long long* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    long long x = a[i], y = b[i];
    out[0 * n + i] = x + y;
    out[1 * n + i] = x * y;
    out[2 * n + i] = (long long)(int)x * (long long)(int)y;     // mul.wide.s32
    out[3 * n + i] = __mul64hi(x, y);
    out[4 * n + i] = y != 0 ? x / y : 0;
    out[5 * n + i] = (long long)(short)x;                       // cvt sign extension
    out[6 * n + i] = (long long)(unsigned char)x;               // truncation, zero extension
}

extern "C" __global__ void sad(const int* a, const int* b, const unsigned* c, unsigned* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    out[0 * n + i] = __sad(a[i], b[i], c[i]);                        // sad.s32
    out[1 * n + i] = __usad((unsigned)a[i], (unsigned)b[i], c[i]);   // sad.u32
}

extern "C" __global__ void sad_unwritten(const int* a, unsigned* out) {
    __shared__ int s[64];
    if (threadIdx.x < 16) s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = __sad(s[threadIdx.x], 0, 1u);   // threads 16.. read a slot nobody wrote
}

extern "C" __global__ void divzero(const int* a, const int* b, int* out) {
    out[threadIdx.x] = a[threadIdx.x] / b[threadIdx.x];
}
"""


@pytest.fixture(scope="module")
def mod():
    return machine.RawModule(code=SRC, options=("-std=c++17",))


def _cdiv(x: int, y: int) -> int:
    """C division: truncate toward zero."""
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _ints(seed, n, lo=-2**31, hi=2**31 - 1, dtype=np.int32):
    r = np.random.default_rng(seed).integers(lo, hi, n, endpoint=True).astype(dtype)
    r[:4] = np.array([0, 1, -1, lo], dtype=np.int64).astype(dtype)[:4] if dtype != np.uint32 else r[:4]
    return r


def test_int32_arithmetic_wraps_and_truncates_like_c(mod):
    n = 64
    a, b = _ints(1, n), _ints(2, n)
    b[5] = 0
    out = np.zeros(12 * n, np.int32)
    rep = mod.get_function("arith")((1,), (n,), (a, b, out, np.int32(n)))
    assert rep.clean
    o = out.reshape(12, n)
    A, B = a.astype(np.int64), b.astype(np.int64)
    wrap = lambda v: ((v + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(o[0], wrap(A + B))
    np.testing.assert_array_equal(o[1], wrap(A - B))
    np.testing.assert_array_equal(o[2], wrap(A * B))
    np.testing.assert_array_equal(o[3], ((A * B) >> 32).astype(np.int32))
    ua, ub = a.view(np.uint32).astype(np.uint64), b.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(o[4].view(np.uint32), ((ua * ub) >> 32).astype(np.uint32))
    exp_q = [_cdiv(int(x), int(y)) if y else 0 for x, y in zip(A, B)]
    exp_r = [int(x) - int(y) * q_ if y else 0 for x, y, q_ in zip(A, B, exp_q)]
    np.testing.assert_array_equal(o[5], wrap(np.array(exp_q)))
    np.testing.assert_array_equal(o[6], wrap(np.array(exp_r)))
    np.testing.assert_array_equal(o[7], np.minimum(a, b))
    np.testing.assert_array_equal(o[8], np.maximum(a, b))
    np.testing.assert_array_equal(o[9], np.where(a == -2**31, a, np.abs(a)))
    ubo = (b.view(np.uint32) | 1).astype(np.uint64)
    np.testing.assert_array_equal(o[10].view(np.uint32), (ua // ubo).astype(np.uint32))
    np.testing.assert_array_equal(o[11].view(np.uint32), (ua % ubo).astype(np.uint32))


def test_bit_operations(mod):
    n = 64
    a = np.random.default_rng(3).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    a[0], a[1] = 0, 0x80000000
    s = np.random.default_rng(4).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(10 * n, np.uint32)
    mod.get_function("bits")((1,), (n,), (a, s, out, np.int32(n)))
    o = out.reshape(10, n)
    k = (s & 31).astype(np.uint64)
    A = a.astype(np.uint64)
    np.testing.assert_array_equal(o[0], ((A << k) & 0xFFFFFFFF).astype(np.uint32))
    np.testing.assert_array_equal(o[1], (A >> k).astype(np.uint32))
    np.testing.assert_array_equal(o[2], (a.view(np.int32).astype(np.int64) >> k.astype(np.int64)).astype(np.int32).view(np.uint32))
    np.testing.assert_array_equal(o[3], [bin(int(x)).count("1") for x in a])
    np.testing.assert_array_equal(o[4], [32 - int(x).bit_length() for x in a])
    np.testing.assert_array_equal(o[5], [int(f"{int(x):032b}"[::-1], 2) for x in a])
    np.testing.assert_array_equal(o[6], [(int(x) & -int(x)).bit_length() for x in a])
    np.testing.assert_array_equal(o[7], a & ~s)
    np.testing.assert_array_equal(o[8], a ^ (s | 7))
    exp = []
    for x, y, kk in zip(a, s, k):
        sel = 0x3210 + (int(kk) & 3)
        src = int(x) | (int(y) << 32)
        v = 0
        for j in range(4):
            nib = (sel >> (4 * j)) & 0xF
            byte = (src >> (8 * (nib & 7))) & 0xFF
            if nib & 8:
                byte = 0xFF if byte & 0x80 else 0
            v |= byte << (8 * j)
        exp.append(v)
    np.testing.assert_array_equal(o[9], exp)


def test_64_bit_integers_and_integer_conversions(mod):
    n = 32
    a = np.random.default_rng(5).integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    b = np.random.default_rng(6).integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    b[3] = 0
    out = np.zeros(7 * n, np.int64)
    mod.get_function("wide")((1,), (n,), (a, b, out, np.int32(n)))
    o = out.reshape(7, n)
    w = lambda v: np.array([((int(x) + 2**63) % 2**64) - 2**63 for x in v], np.int64)
    np.testing.assert_array_equal(o[0], w([int(x) + int(y) for x, y in zip(a, b)]))
    np.testing.assert_array_equal(o[1], w([int(x) * int(y) for x, y in zip(a, b)]))
    a32, b32 = a.astype(np.int32).astype(np.int64), b.astype(np.int32).astype(np.int64)
    np.testing.assert_array_equal(o[2], a32 * b32)
    np.testing.assert_array_equal(o[3], [(int(x) * int(y)) >> 64 for x, y in zip(a, b)])
    q = [0 if y == 0 else _cdiv(int(x), int(y)) for x, y in zip(a, b)]
    np.testing.assert_array_equal(o[4], w(q))
    np.testing.assert_array_equal(o[5], a.astype(np.int16).astype(np.int64))
    np.testing.assert_array_equal(o[6], a.astype(np.uint8).astype(np.int64))


def test_sad_adds_the_absolute_difference_and_wraps(mod):
    """__sad and __usad compile to sad.s32 and sad.u32 (PTX ISA sad): c + |a - b|, the difference
    taken in the signed or unsigned order, everything modulo 2^32."""
    assert "sad.s32" in mod.ptx and "sad.u32" in mod.ptx
    n = 64
    a, b = _ints(3, n), _ints(4, n)
    c = np.random.default_rng(5).integers(0, 2**32 - 1, n, endpoint=True).astype(np.uint32)
    out = np.zeros(2 * n, np.uint32)
    rep = mod.get_function("sad")((1,), (n,), (a, b, c, out, np.int32(n)))
    assert rep.clean
    o = out.reshape(2, n).astype(np.int64)
    A, B, C = a.astype(np.int64), b.astype(np.int64), c.astype(np.int64)
    np.testing.assert_array_equal(o[0], (C + np.abs(A - B)) % 2**32)
    UA, UB = a.view(np.uint32).astype(np.int64), b.view(np.uint32).astype(np.int64)
    np.testing.assert_array_equal(o[1], (C + np.abs(UA - UB)) % 2**32)


def test_sad_of_an_unwritten_operand_is_undefined(mod):
    a = np.arange(-8, 56, dtype=np.int32)
    out = np.zeros(64, np.uint32)
    rep = mod.get_function("sad_unwritten")((1,), (64,), (a, out))
    np.testing.assert_array_equal(rep.undefined[1], np.arange(64) >= 16)
    np.testing.assert_array_equal(out[:16], np.abs(a[:16]) + 1)


def test_division_by_zero_is_undefined_not_invented(mod):
    a = np.arange(32, dtype=np.int32)
    b = np.ones(32, np.int32)
    b[7] = 0
    out = np.zeros(32, np.int32)
    rep = mod.get_function("divzero")((1,), (32,), (a, b, out))
    assert rep.undefined[2][7] and rep.undefined[2].sum() == 1
    np.testing.assert_array_equal(np.delete(out, 7), np.delete(a, 7))


def test_funnel_shifts_rotate():
    src = r'''extern "C" __global__ void rot(const unsigned* a, const unsigned* s, unsigned* out) {
        int i = threadIdx.x;
        out[3 * i] = __funnelshift_l(a[i], a[i], s[i]);
        out[3 * i + 1] = __funnelshift_rc(a[i], ~a[i], s[i]);
        out[3 * i + 2] = (a[i] << (s[i] & 31)) | (a[i] >> ((32 - s[i]) & 31));
    }'''
    mod = machine.RawModule(code=src)
    assert "shf.l.wrap" in mod.ptx and "shf.r.clamp" in mod.ptx
    a = np.random.default_rng(7).integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    s = np.arange(32, dtype=np.uint32) * 3
    out = np.zeros(96, np.uint32)
    mod.get_function("rot")((1,), (32,), (a, s, out))
    o = out.reshape(32, 3)
    A, S = a.astype(np.uint64), s.astype(np.uint64)
    rotl = ((A << (S & 31)) | (A >> ((32 - (S & 31)) & 31))) & 0xFFFFFFFF
    rotl = np.where((S & 31) == 0, A, rotl)
    np.testing.assert_array_equal(o[:, 0], rotl.astype(np.uint32))
    v = ((~a).astype(np.uint64) << 32) | A
    np.testing.assert_array_equal(o[:, 1], ((v >> np.minimum(S, 32)) & 0xFFFFFFFF).astype(np.uint32))


def test_64_bit_signed_division_at_the_most_negative_integer():
    """C's truncating / and % where an absolute value would overflow: INT64_MIN over INT64_MAX is
    -1 remainder -1; MIN / -1 wraps to MIN with remainder 0; the other signs as C."""
    from helpers.machine import values

    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    a = np.array([lo, lo, lo, -7, 7, -7, lo + 1], np.int64)
    b = np.array([hi, -1, 1, 2, -2, -2, lo], np.int64)
    q, zero = values.int_div(a, b, signed=True)
    r, _ = values.int_rem(a, b, signed=True)
    assert q.tolist() == [-1, lo, lo, -3, -3, 3, 0] and not zero.any()
    assert r.tolist() == [-1, 0, 0, -1, 1, -1, lo + 1]
    assert (q * b + r == a).all()
