// reduce_v4_legacy: v4 as it was written before Volta, "warp-synchronous" with volatile and no
// __syncwarp(). Kept ONLY to be caught by compute-sanitizer racecheck; never use it.
//
// The idiom assumed the 32 lanes of a warp execute each instruction together, so that every lane
// reads smem[tid + s] before any lane writes smem[tid]. Since Volta (independent thread scheduling)
// nothing guarantees that: lane 0 reading smem[16] and lane 16 writing smem[16] race, and
// `volatile` does not help (it stops the compiler caching values in registers; it orders nothing
// between lanes). It may well print the right sum on a given GPU and driver: a data race is
// undefined behaviour whether or not it shows. reduce_v4.cu is the fix (warp_reduce_smem).
//
// Contract: as reduce_v4, except that the result is undefined (the race).
#include "reduce_common.cuh"

// [anchor:warp_reduce_smem_legacy]
// WRONG since Volta: no __syncwarp() between one lane's read and another lane's write.
__device__ __forceinline__ void warp_reduce_smem_legacy(volatile float* smem, unsigned int tid) {
    smem[tid] += smem[tid + 32];
    smem[tid] += smem[tid + 16];
    smem[tid] += smem[tid + 8];
    smem[tid] += smem[tid + 4];
    smem[tid] += smem[tid + 2];
    smem[tid] += smem[tid + 1];
}
// [end:warp_reduce_smem_legacy]

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v4_legacy(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ float smem[BLOCK];
    const unsigned int tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + tid;
    smem[tid] = warplab::reduce::load_or_zero(in, i, n) + warplab::reduce::load_or_zero(in, i + BLOCK, n);
    __syncthreads();

    for (unsigned int s = BLOCK / 2; s > warplab::kWarpSize; s >>= 1) {
        if (tid < s) {
            smem[tid] += smem[tid + s];
        }
        __syncthreads();
    }
    if (tid < warplab::kWarpSize) warp_reduce_smem_legacy(smem, tid);
    if (tid == 0) out[blockIdx.x] = smem[0];
}
