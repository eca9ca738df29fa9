// Warp-aggregated atomics: stream compaction where each warp does ONE atomicAdd instead of one per
// passing lane. A real use of __ballot_sync, __ffs and __popc.
//
// Contract: out has room for n floats; *counter == 0 and *atomics == 0 before the launch;
// blockDim.x is a multiple of 32, so every warp is full. Threads past n still take the ballot
// (their predicate is false), so the full mask names exactly the lanes that call it.
// Afterwards out[0 .. *counter) holds every in[i] > threshold exactly once. Within a warp the
// passing lanes' values are contiguous and in lane order; the order of the warps' runs depends on
// which warp's atomicAdd lands first, so it differs from run to run (compare as sets).
// *atomics counts the atomicAdd calls made on counter: one per warp that has a passing lane.
// compact_cg_kernel does the same with cooperative groups: one atomicAdd per group of passing
// threads that coalesced_threads() finds together, which is one per warp when the passing lanes
// are converged and may be more (never fewer) when the scheduler has split them.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// [anchor:warp_aggregated_append]
__device__ __forceinline__ int warp_aggregated_append(bool pred, int* counter, int* atomics) {
    const unsigned lane = threadIdx.x % 32;
    // Every lane of the warp votes, so the full mask is right even for lanes that do not append.
    const unsigned mask = __ballot_sync(0xffffffffu, pred);
    if (!pred) return -1;
    const int leader = __ffs(mask) - 1;                  // lowest passing lane
    const unsigned below = mask & ((1u << lane) - 1u);   // passing lanes before this one
    int base = 0;
    if (lane == leader) {
        base = atomicAdd(counter, __popc(mask));         // one atomic for the whole warp
        atomicAdd(atomics, 1);
    }
    // Only the passing lanes are here, and `mask` names exactly them: a defined shuffle. The
    // others have returned to the kernel (alive elsewhere), which is fine: mask leaves them out.
    base = __shfl_sync(mask, base, leader);
    return base + __popc(below);
}
// [end:warp_aggregated_append]

// [anchor:compact_kernel]
extern "C" __global__ void compact_kernel(const float* in, long long n, float threshold, float* out,
                                          int* counter, int* atomics) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool pred = i < n && in[i] > threshold;
    const int slot = warp_aggregated_append(pred, counter, atomics);
    if (pred) out[slot] = in[i];
}
// [end:compact_kernel]

// [anchor:warp_aggregated_append_cg]
// The same with cooperative groups, called only by the threads that pass. coalesced_threads() is
// the group of threads executing together right here; its collectives (g.shfl) involve exactly
// that group, so no mask is written by hand and none can name a thread that is elsewhere.
__device__ __forceinline__ int warp_aggregated_append_cg(int* counter, int* atomics) {
    const cg::coalesced_group g = cg::coalesced_threads();
    int base = 0;
    if (g.thread_rank() == 0) {
        base = atomicAdd(counter, static_cast<int>(g.size()));   // one atomic for the group
        atomicAdd(atomics, 1);
    }
    return g.shfl(base, 0) + static_cast<int>(g.thread_rank());
}
// [end:warp_aggregated_append_cg]

extern "C" __global__ void compact_cg_kernel(const float* in, long long n, float threshold, float* out,
                                             int* counter, int* atomics) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n && in[i] > threshold) out[warp_aggregated_append_cg(counter, atomics)] = in[i];
}
