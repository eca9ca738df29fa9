// reduce_v3: first add during the global load. Improves on v2: no thread idles in the first step.
//
// Each block covers 2 * BLOCK elements: every thread loads two (BLOCK apart, so each load is
// coalesced) and adds them before storing one partial sum to shared memory. Half as many blocks,
// every thread does useful work in the first add, and twice the bytes are in flight per thread.
// Still wrong (what v4 fixes): the tree keeps a __syncthreads() at every step, including the last
// six (s = 32 .. 1), where only warp 0 has anything left to do and a whole-block barrier is pure
// overhead.
//
// Contract: as reduce_v0 except grid = ceil(n / (2 * BLOCK)): block b covers
// in[2*BLOCK*b .. 2*BLOCK*b + 2*BLOCK) clipped to n; out[blockIdx.x] = the block's sum;
// blockDim.x == BLOCK a power of two in [64, 1024], n >= 1.
#include "reduce_common.cuh"

// [anchor:reduce_v3]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_v3(const float* __restrict__ in, float* __restrict__ out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ float smem[BLOCK];
    const unsigned int tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + tid;
    smem[tid] = warplab::reduce::load_or_zero(in, i, n) + warplab::reduce::load_or_zero(in, i + BLOCK, n);
    __syncthreads();

    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {
            smem[tid] += smem[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = smem[0];
}
// [end:reduce_v3]
