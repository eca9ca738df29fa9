// reduce_v0: interleaved addressing with a divergent branch. The starting point of the ladder.
//
// Each block loads BLOCK consecutive elements into shared memory, one per thread, then halves the
// number of partial sums BLOCK -> 1 in log2(BLOCK) steps: at stride s, thread tid adds
// smem[tid + s] into smem[tid] if tid is a multiple of 2s.
// Still wrong (what v1 sets out to fix): `tid % (2 * s) == 0` picks every 2nd, 4th, 8th... thread, so every
// warp keeps a few working lanes and the rest idle, and all BLOCK/32 warps keep issuing
// instructions while doing ever less work. The body is so short that the compiler predicates it
// instead of branching (ncu counts no divergent branch on the H200): the cost is issue slots with
// few lanes switched on, not a branch.
//
// Contract (the ladder's; see reduce_common.cuh): blockDim.x == BLOCK, a power of two in [64, 1024];
// grid = ceil(n / BLOCK) blocks, block b covers in[b*BLOCK .. b*BLOCK + BLOCK) clipped to n (missing
// elements are 0); out[blockIdx.x] = that block's sum, written by thread 0; n >= 1.
#include "reduce_common.cuh"

// [anchor:reduce_v0]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v0(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ float smem[BLOCK];
    const unsigned int tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + tid;
    smem[tid] = warplab::reduce::load_or_zero(in, i, n);
    __syncthreads();

    for (unsigned int s = 1; s < BLOCK; s *= 2) {
        if (tid % (2 * s) == 0) {  // divergent: 1 lane in 2, then 1 in 4, ... of every warp works
            smem[tid] += smem[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}
// [end:reduce_v0]
