// reduce_v5: complete unroll with a templated block size. Improves on v4: no loop left in the tree.
//
// BLOCK is a template parameter, so the whole tree can be written out once for every block size
// and the compiler keeps only the steps this BLOCK needs (block_tree_unrolled, `if constexpr`):
// no loop in the source (the compiler had already unrolled v4's, in its PTX), and each thread carries its running sum
// in a register so a step reads one shared value instead of two. The last warp is v4's warp_reduce_smem.
// Still wrong (what v6 fixes): one block per 2 * BLOCK elements means millions of blocks for a
// large input, each paying its launch, its tree and its store for only two loads per thread:
// too few bytes in flight per thread, and the tree's fixed cost is paid once per 2 * BLOCK elements.
//
// Contract: as reduce_v3 (grid = ceil(n / (2 * BLOCK)), two elements per thread, out[blockIdx.x] =
// the block's sum, blockDim.x == BLOCK a power of two in [64, 1024], n >= 1).
#include "reduce_common.cuh"

// [anchor:reduce_v5]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v5(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ float smem[BLOCK];
    const unsigned int tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + tid;
    const float sum = warplab::reduce::load_or_zero(in, i, n) + warplab::reduce::load_or_zero(in, i + BLOCK, n);
    smem[tid] = sum;
    __syncthreads();

    warplab::reduce::block_tree_unrolled<BLOCK>(smem, tid, sum);
    if (tid == 0) out[blockIdx.x] = smem[0];
}
// [end:reduce_v5]
