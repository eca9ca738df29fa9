// reduce_v1: strided index. Meant to improve on v0 (whole warps work or skip); slower on the H200 (x0.81 at 2^25).
//
// Same pairs as v0 (smem[index] += smem[index + s] with index = 2 * s * tid), but the work goes to
// the first BLOCK / (2s) threads, contiguously: whole warps work or whole warps skip the branch, so
// no warp diverges until fewer than 32 threads are left (in the PTX; ptxas predicates it as v0's).
// Still wrong (what v2 fixes): the addresses a warp touches are 2s words apart, so 2s lanes of a
// warp hit the same shared-memory bank (32 banks of 4 bytes): 2-way bank conflicts at s = 1,
// 4-way at s = 2, ... up to 32-way. Conflicting accesses are serialised.
//
// Contract: as reduce_v0 (grid = ceil(n / BLOCK), one element per thread, out[blockIdx.x] = the
// block's sum, blockDim.x == BLOCK a power of two in [64, 1024], n >= 1).
#include "reduce_common.cuh"

// [anchor:reduce_v1]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v1(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ float smem[BLOCK];
    const unsigned int tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + tid;
    smem[tid] = warplab::reduce::load_or_zero(in, i, n);
    __syncthreads();

    for (unsigned int s = 1; s < BLOCK; s *= 2) {
        const unsigned int index = 2 * s * tid;  // lanes of a warp are 2s words apart: bank conflicts
        if (index < BLOCK) {
            smem[index] += smem[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}
// [end:reduce_v1]
