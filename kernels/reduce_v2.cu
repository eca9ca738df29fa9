// reduce_v2: sequential addressing. Improves on v1: no shared-memory bank conflicts.
//
// The stride starts at BLOCK/2 and halves: thread tid < s adds smem[tid + s] into smem[tid]. A
// warp's 32 lanes read 32 consecutive words (32 different banks) and the working threads stay
// contiguous, so there is neither divergence (until s < 32) nor a bank conflict.
// Still wrong (what v3 fixes): half of the threads are idle from the very first step: each thread
// loaded one element and, at s = BLOCK/2, only the first half of them add anything. The block
// spends its first step with half its threads doing nothing but the load.
//
// Contract: as reduce_v0 (grid = ceil(n / BLOCK), one element per thread, out[blockIdx.x] = the
// block's sum, blockDim.x == BLOCK a power of two in [64, 1024], n >= 1).
#include "reduce_common.cuh"

// [anchor:reduce_v2]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v2(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ float smem[BLOCK];
    const unsigned int tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + tid;
    smem[tid] = warplab::reduce::load_or_zero(in, i, n);
    __syncthreads();

    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {  // consecutive lanes, consecutive words: conflict-free
            smem[tid] += smem[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}
// [end:reduce_v2]
