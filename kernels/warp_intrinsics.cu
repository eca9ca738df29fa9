// Warp intrinsics, one lane per thread, for helpers.warp's cupy backend.
//
// Contract (every kernel here):
//   * Data is laid out as n_warps rows of 32 lanes: element i belongs to warp i / 32, lane i % 32.
//   * blockDim.x is a multiple of 32, so a hardware warp is exactly one row.
//   * state[i] is the lane's state at the call (helpers.emulator): kExited (0) returns at once;
//     kCalling (1) calls the intrinsic; kElsewhere (2) stays alive in other code (a short
//     bounded busy-wait) and returns without calling.
//   * A calling lane that is not named in masks[warp] returns instead: calling from outside
//     `mask` is undefined (PTX ISA, shfl.sync / vote.sync), so it never happens here and the
//     Python side flags the lane as undefined.
//   * The host never launches a warp whose mask names a kElsewhere lane: that call is undefined
//     for every lane (Programming Guide: all non-exited threads named in mask must execute the
//     same intrinsic with the same mask) and may hang. So every call made here is well-defined;
//     whether the value a lane *reads* is (its source may have exited) is decided in Python.
//   * Shuffles also shuffle the lane id, so src_out records the lane the hardware read from.
#include "warplab_common.cuh"

namespace warplab {

enum ShuffleMode { kIdx = 0, kUp = 1, kDown = 2, kXor = 3 };

// [anchor:shuffle_dispatch]
template <typename T, int Mode>
__device__ __forceinline__ T shuffle(unsigned mask, T v, int b, int width) {
    if (Mode == kIdx) return __shfl_sync(mask, v, b, width);
    if (Mode == kUp) return __shfl_up_sync(mask, v, static_cast<unsigned>(b), width);
    if (Mode == kDown) return __shfl_down_sync(mask, v, static_cast<unsigned>(b), width);
    return __shfl_xor_sync(mask, v, b, width);
}
// [end:shuffle_dispatch]

enum LaneState { kExited = 0, kCalling = 1, kElsewhere = 2 };

// A lane that is alive but elsewhere: other work for a bounded time, then back to the caller
// (which returns). Bounded, so it can never keep its warp waiting for ever.
__device__ __forceinline__ void elsewhere() {
    const long long t0 = clock64();
    while (clock64() - t0 < 2000) {
    }
}

// Returns true when this thread calls the intrinsic; sets the warp's mask.
__device__ __forceinline__ bool caller(const unsigned* masks, const unsigned char* state,
                                       int n_warps, unsigned& mask) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int warp = i / 32;
    if (warp >= n_warps || state[i] == kExited) return false;
    if (state[i] == kElsewhere) {
        elsewhere();
        return false;
    }
    mask = masks[warp];
    return (mask >> (i % 32)) & 1u;
}

}  // namespace warplab

// [anchor:shuffle_kernel]
template <typename T, int Mode>
__global__ void shuffle_kernel(const T* in, const int* arg, const unsigned* masks,
                               const unsigned char* state, int width, int n_warps,
                               T* out, int* src_out) {
    unsigned mask;
    if (!warplab::caller(masks, state, n_warps, mask)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = i % 32;
    out[i] = warplab::shuffle<T, Mode>(mask, in[i], arg[i], width);
    src_out[i] = warplab::shuffle<int, Mode>(mask, lane, arg[i], width);
}
// [end:shuffle_kernel]

// [anchor:vote_kernel]
// One kernel for the votes: out holds, per calling lane, __ballot_sync, __any_sync,
// __all_sync and __activemask (in that order, 4 words per lane).
__global__ void vote_kernel(const int* pred, const unsigned* masks, const unsigned char* state,
                            int n_warps, unsigned* out) {
    unsigned mask;
    if (!warplab::caller(masks, state, n_warps, mask)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int p = pred[i];
    out[4 * i + 0] = __ballot_sync(mask, p);
    out[4 * i + 1] = __any_sync(mask, p);
    out[4 * i + 2] = __all_sync(mask, p);
    out[4 * i + 3] = __activemask();
}
// [end:vote_kernel]

// [anchor:match_reduce_kernel]
// __match_any_sync and the compute-capability-8.0 integer reductions, per calling lane:
// out[4*i + 0..3] = match_any, reduce_add, reduce_min, reduce_max.
template <typename T>
__global__ void match_reduce_kernel(const T* in, const unsigned* masks,
                                    const unsigned char* state, int n_warps, T* out) {
    unsigned mask;
    if (!warplab::caller(masks, state, n_warps, mask)) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const T v = in[i];
    out[4 * i + 0] = static_cast<T>(__match_any_sync(mask, v));
#if __CUDA_ARCH__ >= 800
    out[4 * i + 1] = __reduce_add_sync(mask, v);
    out[4 * i + 2] = __reduce_min_sync(mask, v);
    out[4 * i + 3] = __reduce_max_sync(mask, v);
#endif
}
// [end:match_reduce_kernel]
