// reduce_v4: unroll the last warp. Improves on v3: six fewer block-wide barriers per block.
//
// Once 64 partial sums are left, only warp 0 has work, so the last six steps (s = 32 .. 1) run in
// warp 0 alone with __syncwarp() (a barrier for 32 lanes) instead of __syncthreads() (a barrier
// for the whole block): warp_reduce_smem in reduce_common.cuh, the seed's WarpSharedMemReduce.
// The __syncwarp() calls are not optional: without them (reduce_v4_legacy.cu, the pre-Volta
// idiom) the lanes race on shared memory and compute-sanitizer racecheck reports it.
// Still wrong (what v5 changes): the tree is a loop over s. BLOCK is a compile-time constant, so the
// compiler unrolls it anyway (its PTX and SASS have no loop branch) and v5 gains little; and
// the last warp still works in shared memory where registers and shuffles would do (v7).
//
// Contract: as reduce_v3 (grid = ceil(n / (2 * BLOCK)), two elements per thread, out[blockIdx.x] =
// the block's sum, blockDim.x == BLOCK a power of two in [64, 1024], n >= 1).
#include "reduce_common.cuh"

// [anchor:reduce_v4]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v4(const float* __restrict__ in, float* __restrict__ out, long long n) {
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
    if (tid < warplab::kWarpSize) warplab::reduce::warp_reduce_smem(smem, tid);  // all of warp 0
    if (tid == 0) out[blockIdx.x] = smem[0];
}
// [end:reduce_v4]
