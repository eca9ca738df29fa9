// reduce_v6: several elements per thread. Improves on v5: a fixed, small grid that strides.
//
// The grid is sized from the GPU, not from n: just enough blocks to fill every SM once
// (blocks per SM at full occupancy x the SM count), and each thread walks the input with a
// grid-sized stride, adding two elements (BLOCK apart) per iteration in a register. A block pays
// for its tree and its store once, however large n is; consecutive threads still read
// consecutive addresses, so every load stays coalesced. The tree is v5's.
// Still wrong (what v7 fixes): the block-wide tree still goes through shared memory with
// log2(BLOCK) - 5 __syncthreads() and a shared-memory warp step, where registers and
// shuffles need one barrier in all.
//
// Contract: blockDim.x == BLOCK, a power of two in [64, 1024]; ANY grid >= 1 is correct (the loop
// covers in[0 .. n) whatever gridDim.x is); the dispatcher launches
// min(ceil(n / (2 * BLOCK)), blocks per SM x SMs). out[blockIdx.x] = the sum of the elements this
// block visited: out[0 .. gridDim.x) sums to the total. n >= 1.
#include "reduce_common.cuh"

// [anchor:reduce_v6]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v6(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ float smem[BLOCK];
    const unsigned int tid = threadIdx.x;
    const long long stride = static_cast<long long>(gridDim.x) * (2 * BLOCK);
    float sum = 0.0f;
    for (long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + tid; i < n; i += stride) {
        sum += in[i];
        if (i + BLOCK < n) sum += in[i + BLOCK];
    }
    smem[tid] = sum;
    __syncthreads();

    warplab::reduce::block_tree_unrolled<BLOCK>(smem, tid, sum);
    if (tid == 0) out[blockIdx.x] = smem[0];
}
// [end:reduce_v6]
