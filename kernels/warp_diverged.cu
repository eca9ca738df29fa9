// A full-mask call that some lanes make while the others it names are elsewhere, run on purpose to
// record what one GPU does (helpers/recording/record_diverged.py). With Later == false it is undefined.
//
// A *_sync intrinsic with the FULL mask is executed by the lanes named in callers[w], while the
// other lanes of the warp, which the mask also names, are alive but elsewhere. The PTX ISA
// (shfl.sync, vote.sync): the executing thread waits until every non-exited thread named in
// membermask has executed shfl.sync/vote.sync with the same qualifiers and mask, so a warp may wait
// as long as those lanes are alive. Later == false (they return without calling): undefined, the
// recording is one observation of undefined behaviour. Later == true (they call from another line):
// defined on sm_70+ (the "same instruction" requirement is for .target sm_6x or below only).
// Contract:
//   * blockDim.x == 32 (block w is warp w), n_warps blocks; in[i] is lane i % 32's value.
//   * The lanes in callers[w] call the intrinsic at once. The other lanes busy-wait `spin` clock
//     cycles (a finite loop, so nothing can wait on them for ever), then, with Later == false,
//     return without calling; with Later == true they call the same intrinsic with the same mask
//     from another line, then return.
//   * Op kShflDown: __shfl_down_sync(FULL, v, delta); Op kBallot: __ballot_sync(FULL, 1).
//   * Per lane i: got[i] what its call returned (untouched if it never called); amask[i] the
//     __activemask() a caller saw just before its call (untouched otherwise); t[3i + 0..2] the
//     lane's clock64 on entry, just before its call (or at the end of its wait), and after its
//     call (or when it left). Lanes of one warp share an SM, so their clocks compare.
#include "warplab_common.cuh"

namespace warplab {
enum DivergedOp { kShflDown = 0, kBallot = 1 };

template <int Op>
__device__ __forceinline__ int diverged_call(int v, int delta) {
    if (Op == kShflDown) return __shfl_down_sync(kFullMask, v, static_cast<unsigned>(delta));
    return static_cast<int>(__ballot_sync(kFullMask, 1));
}
}  // namespace warplab

// [anchor:diverged_kernel]
template <int Op, bool Later>
__global__ void diverged_kernel(const int* in, const unsigned* callers, int delta, long long spin,
                                int* got, unsigned* amask, long long* t) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % warplab::kWarpSize;
    const int v = in[i];
    const long long t0 = clock64();
    t[3 * i + 0] = t0;
    if ((callers[blockIdx.x] >> lane) & 1u) {
        amask[i] = __activemask();
        t[3 * i + 1] = clock64();
        got[i] = warplab::diverged_call<Op>(v, delta);   // the mask names lanes that are elsewhere
        t[3 * i + 2] = clock64();
    } else {
        while (clock64() - t0 < spin) {
        }
        t[3 * i + 1] = clock64();
        if (Later) got[i] = warplab::diverged_call<Op>(v, delta);   // the same intrinsic, another line
        t[3 * i + 2] = clock64();
    }
}
// [end:diverged_kernel]
