// Warp-level reductions built from shuffles.
//
// Contract: every lane of the (logical) warp calls with the same Width; lanes are all active
// and the mask is full (pad missing elements with the operator's identity instead of shrinking
// the mask). After the shuffle-down tree only lane 0 of each Width-lane segment holds the
// result; the other lanes hold partial results that nobody reads. After the xor butterfly every
// lane holds the result. WarpReducePartial is the one exception to "all 32 lanes": it serves the
// tail warp of a block whose size is not a multiple of 32, where the missing lanes do not exist.
//
// Operators are CUB-style functors: op(a, b) combines two values and Op::identity() is the value
// that changes nothing (0 for Sum, the lowest value for Max, ...). Bitwise operators are for
// integer types only.
#pragma once
#include "warplab_common.cuh"

namespace warplab {

// [anchor:warp_reduce_sum]
// PyTorch's WarpReduceSum: five __shfl_down_sync steps; lane 0 ends with the sum of all 32.
template <typename T>
__device__ __forceinline__ T WarpReduceSum(T val) {
    WARPLAB_TRACE_STEP(0, val, val, static_cast<int>(threadIdx.x % kWarpSize));
    int step = 1;
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2, ++step) {
        const T other = __shfl_down_sync(kFullMask, val, offset, kWarpSize);
        WARPLAB_TRACE_STEP(step, val + other, other,
                           __shfl_down_sync(kFullMask, static_cast<int>(threadIdx.x % kWarpSize), offset, kWarpSize));
        val += other;
    }
    (void)step;  // read only by the trace
    return val;
}
// [end:warp_reduce_sum]

// The hardware lane of the calling thread (0..31), whatever the block's shape.
__device__ __forceinline__ int lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return static_cast<int>(lane);
}

// Lowest and highest values of the supported element types (identities of Max and Min).
template <typename T> struct Limits;
template <> struct Limits<int> {
    __device__ static int lowest() { return -2147483647 - 1; }
    __device__ static int highest() { return 2147483647; }
};
template <> struct Limits<unsigned> {
    __device__ static unsigned lowest() { return 0u; }
    __device__ static unsigned highest() { return 0xffffffffu; }
};
template <> struct Limits<float> {
    __device__ static float lowest() { return -__int_as_float(0x7f800000); }  // -infinity
    __device__ static float highest() { return __int_as_float(0x7f800000); }  // +infinity
};
template <> struct Limits<double> {
    __device__ static double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
    __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};

// The operators live in their own namespace, so that passing one to a function does not drag
// every warplab:: function into overload resolution (argument-dependent lookup).
namespace ops {
// [anchor:reduce_ops]
template <typename T> struct Sum {
    __device__ static T identity() { return T(0); }
    __device__ T operator()(const T& a, const T& b) const { return a + b; }
};
template <typename T> struct Max {
    __device__ static T identity() { return Limits<T>::lowest(); }
    __device__ T operator()(const T& a, const T& b) const { return (a < b) ? b : a; }
};
template <typename T> struct Min {
    __device__ static T identity() { return Limits<T>::highest(); }
    __device__ T operator()(const T& a, const T& b) const { return (b < a) ? b : a; }
};
template <typename T> struct BitAnd {
    __device__ static T identity() { return ~T(0); }
    __device__ T operator()(const T& a, const T& b) const { return a & b; }
};
template <typename T> struct BitOr {
    __device__ static T identity() { return T(0); }
    __device__ T operator()(const T& a, const T& b) const { return a | b; }
};
template <typename T> struct BitXor {
    __device__ static T identity() { return T(0); }
    __device__ T operator()(const T& a, const T& b) const { return a ^ b; }
};
// [end:reduce_ops]
}  // namespace ops

template <int Width>
struct IsLogicalWarpWidth {
    static constexpr bool value = Width >= 1 && Width <= kWarpSize && (Width & (Width - 1)) == 0;
};

// [anchor:warp_reduce]
// Shuffle-down tree over each Width-lane segment: log2(Width) steps, offsets Width/2 ... 1.
// Afterwards lane 0 of each segment holds op over the segment's Width values.
template <typename T, typename Op, int Width = kWarpSize>
__device__ __forceinline__ T WarpReduce(T val, Op op) {
    static_assert(IsLogicalWarpWidth<Width>::value, "Width must be a power of two in [1, 32]");
    WARPLAB_TRACE_STEP(0, val, val, lane_id());
    int step = 1;
#pragma unroll
    for (int offset = Width / 2; offset > 0; offset /= 2, ++step) {
        const T other = __shfl_down_sync(kFullMask, val, offset, Width);
        WARPLAB_TRACE_STEP(step, op(val, other), other,
                           __shfl_down_sync(kFullMask, lane_id(), offset, Width));
        val = op(val, other);
    }
    return val;
}
// [end:warp_reduce]

// [anchor:warp_all_reduce]
// Xor butterfly over each Width-lane segment: lane l combines with lane l ^ mask, masks Width/2
// ... 1. Both partners compute op of the same two values, so every lane ends with the result.
template <typename T, typename Op, int Width = kWarpSize>
__device__ __forceinline__ T WarpAllReduce(T val, Op op) {
    static_assert(IsLogicalWarpWidth<Width>::value, "Width must be a power of two in [1, 32]");
    WARPLAB_TRACE_STEP(0, val, val, lane_id());
    int step = 1;
#pragma unroll
    for (int mask = Width / 2; mask > 0; mask /= 2, ++step) {
        const T other = __shfl_xor_sync(kFullMask, val, mask, Width);
        WARPLAB_TRACE_STEP(step, op(val, other), other,
                           __shfl_xor_sync(kFullMask, lane_id(), mask, Width));
        val = op(val, other);
    }
    return val;
}
// [end:warp_all_reduce]

// [anchor:warp_reduce_partial]
// Shuffle-down tree over the first `valid` lanes of a hardware warp (1 <= valid <= 32): the tail
// warp of a block whose size is not a multiple of 32. The member mask names exactly the lanes
// that exist, and a lane combines only what it read from a lane below `valid`: a read past the
// end is undefined, so its value is dropped, never used. Lane 0 ends with op over lanes [0, valid).
template <typename T, typename Op>
__device__ __forceinline__ T WarpReducePartial(T val, Op op, int valid) {
    const unsigned mask = valid == kWarpSize ? kFullMask : (1u << valid) - 1u;
    const int lane = lane_id();
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        const T other = __shfl_down_sync(mask, val, offset);
        if (lane + offset < valid) val = op(val, other);
    }
    return val;
}
// [end:warp_reduce_partial]

}  // namespace warplab
