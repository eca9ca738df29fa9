// reduce_onepass: the whole sum in one launch, with the last-block-done pattern.
//
// Every block computes its partial sum as reduce_v8 does and writes it to partials[blockIdx.x].
// Thread 0 then fences (__threadfence orders that write before what follows) and takes a ticket
// from a global counter (atomicAdd). The block that draws the last ticket knows every other partial has
// been written; it alone reads partials[0 .. gridDim.x) and writes the final sum to *out. No second
// launch: at small n, where launch latency is most of the time, that is what wins.
//
// Determinism trade-off. The simpler one-launch scheme, atomicAdd(out, block_partial), adds the
// partials in whatever order blocks happen to finish; float addition is not associative, so the
// last bits of the sum change from run to run. Here the partials are added in a fixed order
// (index order, then a fixed shuffle tree) by whichever block finishes last, so for a given n,
// BLOCK and grid the result is bitwise identical run to run. The price: a partials array and a
// counter in global memory, one fence and one atomic per block, and a short serial tail in the
// last block. (The result still depends on the grid, i.e. on the GPU's SM count.)
//
// Contract: blockDim.x == BLOCK, a power of two in [64, 1024]; any grid >= 1; partials holds at
// least gridDim.x floats; *done == 0 at launch (the last block resets it, so launches on one stream
// reuse a workspace; its plain store races with no ticket: they all precede it in causality order, PTX
// ISA "Causality Order"; launches sharing one must not overlap); in any 4-byte aligned float*; n >= 1.
// *out = the sum of in[0 .. n). Build with -DREDUCE_UNROLL=k as reduce_v8.
#include "reduce_common.cuh"

#ifndef REDUCE_UNROLL
#define REDUCE_UNROLL 4
#endif

// [anchor:reduce_onepass]
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_onepass(const float* __restrict__ in, float* partials,
                                                        unsigned int* done, float* out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    __shared__ bool is_last_block;

    float sum = warplab::reduce::thread_sum_vec4<BLOCK, REDUCE_UNROLL>(in, n);
    sum = warplab::reduce::block_sum_shfl<BLOCK>(sum);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
        __threadfence();                                   // release: the partial's store before the ticket
        const unsigned int ticket = atomicAdd(done, 1u);
        is_last_block = (ticket == gridDim.x - 1);
        if (is_last_block) __threadfence();                // acquire: the ticket before the reads below
    }
    __syncthreads();  // carries thread 0's acquire to the block; also separates the two block_sum_shfl calls (shared warp_sums)
    if (!is_last_block) return;  // uniform across the block: the barrier below is safe

    float total = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK) {
        total += __ldcg(&partials[b]);  // a cache hint only: thread 0's fence and the barrier order it (PTX ISA, Release and Acquire Patterns)
    }
    total = warplab::reduce::block_sum_shfl<BLOCK>(total);
    if (threadIdx.x == 0) {
        *out = total;
        *done = 0u;  // every other block has taken its ticket: ready for the next launch
    }
}
// [end:reduce_onepass]
