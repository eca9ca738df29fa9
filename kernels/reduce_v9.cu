// reduce_v9: one launch with no round trip after the sum. Improves on onepass: the time from the
// last block's partial sum to the result, and a grid sized for where the data lives.
//
// onepass writes each block's partial, then waits on three round trips to L2 in a row in its last block:
// the __threadfence that waits for the partial's store, the atomicAdd that draws the ticket, and
// the reads of the other partials. At n = 2^20 that chain is a large part of the kernel. Here:
//   - the ticket is drawn when the block STARTS (thread 0, atomicAdd), so the reply returns while
//     the block loads (warp 0 waits for it before its own loads, in ptxas 13.0's SASS). The block
//     that draws the last ticket is the last to draw one: every other block has drawn its ticket,
//     so it is running, and finishes without waiting; so the last block's wait always ends (the
//     dynamic-ticket argument of decoupled look-back; Merrill & Garland, "Single-pass Parallel
//     Prefix Scan with Decoupled Look-back", 2016). The same 64-bit atomicAdd returns the tag: the
//     workspace's one word `state` holds {tag of the last launch (high 32 bits), tickets drawn in
//     this one (low 32 bits)}, so a block learns both from one access;
//   - each block publishes its partial as ONE 64-bit store {tag, value} (st.relaxed.gpu), polled
//     with ld.relaxed.gpu of the same 8 bytes: strong, gpu-scope accesses of the same location are
//     morally strong, and conflicting morally strong accesses are single-copy atomic (PTX ISA,
//     Memory Consistency Model), so a reader sees the tag and the value of one write, and needs no
//     fence to trust the value;
//   - the last-started block polls the slots (ld.relaxed.gpu) until every tag is this launch's,
//     then adds them in a fixed order (each lane its strided share, then a fixed shuffle tree):
//     the same bits on every run, as onepass. Up to 256 slots, warp 0 alone publishes and
//     collects, 8 loads per lane in flight (no block barrier); beyond, the whole last block does;
//   - each block's own tree ends with thread 0 adding the warp sums in order (block_sum_in_order),
//     not a second round of shuffles: a shorter chain of dependent steps;
//   - the input is read through the read-only path (__ldg, ld.global.nc) explicitly: the slots'
//     asm statements keep the compiler from inferring it, as it does for reduce_v8.
// The last block resets the ticket count and keeps its tag in `state` with one store (st.relaxed.gpu,
// as the slots are written), so the next launch on the same stream tags with tag + 1; no access to the
// workspace is a data race in the PTX memory model (the reset follows every ticket: see store_state).
// The dispatcher (helpers/topics/reduce.py: v9_launch, grid_size) sizes the launch from
// measurements: up to 2^14 floats one block (no ticket, no slots); in the L2 blocks of 256 with one
// round of loads each up to 2^20 floats (256 blocks), then 512 (1024 from 2^22) and 128 blocks; from
// HBM 128 blocks of 1024 while one wave would do (more waves from 2^27 on the H200), evict-first
// loads (-DREDUCE_STREAM=1: __ldcs; each byte is read once per call, so its line is the first the
// L2 gives up, instead of displacing other data).
// Still wrong (what nothing here fixes): the launch itself (0.72 us for an empty kernel in a CUDA graph, H200 sweep) and the
// memory system. At large n the loads run at 96 to 97 % of the HBM3e datasheet's 4.8 TB/s, where
// cupy.sum (CUB) runs too; at n = 2^20 the combine across blocks (ticket, publish, poll) still
// cost 0.7 to 1.0 us on top of the loads and the block tree (H200 floor probe, 128 x 512 blocks;
// retired, its notes in git: git show 68e4933^:docs/probes/v9_round4.md).
// Contract: blockDim.x == BLOCK, a power of two in [64, 1024]; any grid >= 1 (reduce_v9<BLOCK, true>:
// a grid of 1, where slots and state are not touched); `slots` holds at
// least gridDim.x 64-bit words and `state` one 64-bit word, all zero when first allocated and
// then owned by one stream with one grid (the last block resets the ticket count and keeps the
// tag); two launches sharing a workspace must not run concurrently; `in` any 4-byte aligned float*
// (as reduce_v8); n >= 1. *out = the sum of in[0 .. n). Build with -DREDUCE_UNROLL=k as reduce_v8
// and -DREDUCE_STREAM=0|1 (read-only or evict-first loads; default 0).
#include "reduce_common.cuh"

#ifndef REDUCE_UNROLL
#define REDUCE_UNROLL 4
#endif

namespace warplab {
namespace reduce {

// [anchor:v9_slots]
// Relaxed, gpu-scope (morally strong) accesses: they see each other across blocks without a fence.
__device__ __forceinline__ void store_slot(unsigned long long* slot, unsigned int tag, float value) {
    const unsigned long long word = (static_cast<unsigned long long>(tag) << 32) | __float_as_uint(value);
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slot), "l"(word) : "memory");
}
__device__ __forceinline__ unsigned long long load_slot(const unsigned long long* slot) {
    unsigned long long word;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(slot) : "memory");
    return word;
}
// The last block's reset of the workspace, by the thread that drew the last ticket: every other
// block's ticket atomic precedes that draw in observation order, so the reset in causality order (PTX
// ISA, Memory Consistency Model: "Causality Order"); a plain store would be no data race either.
__device__ __forceinline__ void store_state(unsigned long long* state, unsigned int tag) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state), "l"(static_cast<unsigned long long>(tag) << 32)
                 : "memory");
}
// [end:v9_slots]

// [anchor:v9_collect]
// The last-started block's THREADS threads read the gridDim.x slots, K per thread per pass (all K
// loads in flight), until every slot carries this launch's tag; each thread adds its values in
// index order, so the result's bits depend only on n and the grid.
template <int THREADS, int K>
__device__ __forceinline__ float collect_slots(const unsigned long long* slots, unsigned int want, unsigned int t) {
    float total = 0.0f;
    for (unsigned int b0 = 0; b0 < gridDim.x; b0 += K * THREADS) {
        unsigned long long word[K];
        bool ready;
        do {
            ready = true;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const unsigned int b = b0 + k * THREADS + t;
                word[k] = b < gridDim.x ? load_slot(&slots[b]) : static_cast<unsigned long long>(want) << 32;
                ready &= static_cast<unsigned int>(word[k] >> 32) == want;
            }
        } while (!ready);
#pragma unroll
        for (int k = 0; k < K; ++k) total += __uint_as_float(static_cast<unsigned int>(word[k]));
    }
    return total;
}
// [end:v9_collect]

// [anchor:block_sum_in_order]
// The block's sum, valid in thread 0: each warp reduces its 32 values with WarpReduceSum, lane 0
// parks the warp's sum in shared memory, and after one __syncthreads() thread 0 adds the BLOCK/32
// warp sums in index order. block_sum_shfl's second WarpReduceSum is five shuffles, each waiting
// for the one before; here the shared-memory loads are independent and the adds take a few cycles
// each: one block of 128 to 512 threads measured 0.05 to 0.18 us faster on the H200
// (H200 timing runs, 2026-12-04). Called by every thread of the block (it contains a barrier); a
// caller that calls it again must put a __syncthreads() between the two calls.
template <int BLOCK>
__device__ __forceinline__ float block_sum_in_order(float v) {
    constexpr int kWarps = BLOCK / kWarpSize;
    __shared__ float warp_sums[kWarps];
    v = WarpReduceSum(v);
    if (threadIdx.x % kWarpSize == 0) warp_sums[threadIdx.x / kWarpSize] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        v = warp_sums[0];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) v += warp_sums[w];
    }
    return v;
}
// [end:block_sum_in_order]

}  // namespace reduce
}  // namespace warplab

#ifndef REDUCE_STREAM
#define REDUCE_STREAM 0
#endif

// [anchor:reduce_v9]
// ONE_BLOCK (reduce_v9<BLOCK, true>): the instantiation the dispatcher launches when one block does
// (up to 2^14 floats): the loads, the block tree and one store, and none of the code below, which a
// one-block launch of the general kernel skips but still carries (0.03 to 0.2 us more per launch on
// the H200, in a timing run since retired). It requires gridDim.x == 1 and traps otherwise.
template <int BLOCK, bool ONE_BLOCK = false>
__global__ void __launch_bounds__(BLOCK) reduce_v9(const float* __restrict__ in, unsigned long long* slots,
                                                   unsigned long long* state, float* out, long long n) {
    static_assert(warplab::reduce::valid_block(BLOCK), "BLOCK must be a power of two in [64, 1024]");
    namespace wr = warplab::reduce;
    constexpr wr::Loads kLoads = REDUCE_STREAM ? wr::Loads::kEvictFirst : wr::Loads::kReadOnly;
    if constexpr (ONE_BLOCK) {
        if (gridDim.x != 1) __trap();  // the contract of this instantiation: nobody else adds to *out
        const float sum = wr::block_sum_in_order<BLOCK>(wr::thread_sum_vec4<BLOCK, REDUCE_UNROLL, kLoads>(in, n));
        if (threadIdx.x == 0) *out = sum;
        return;
    }
    constexpr int kWarpLoads = 8;                                          // slots per lane, in flight
    constexpr unsigned int kWarpSlots = kWarpLoads * warplab::kWarpSize;  // what warp 0 collects in one pass
    __shared__ bool is_last_block;
    __shared__ unsigned int launch_tag;
    const bool one_block = gridDim.x == 1;  // uniform: nobody to wait for, no ticket
    unsigned int ticket = 0, tag = 0;
    if (threadIdx.x == 0 && !one_block) {
        // drawn at the start, off the critical path: {last launch's tag, tickets drawn so far}
        const unsigned long long drawn = atomicAdd(state, 1ull);
        ticket = static_cast<unsigned int>(drawn);
        tag = static_cast<unsigned int>(drawn >> 32) + 1u;  // this launch's tag
    }
    float sum = wr::thread_sum_vec4<BLOCK, REDUCE_UNROLL, kLoads>(in, n);
    sum = wr::block_sum_in_order<BLOCK>(sum);         // valid in thread 0
    if (one_block) {
        if (threadIdx.x == 0) *out = sum;
        return;
    }
    if (gridDim.x <= kWarpSlots) {  // uniform. Few slots: warp 0 alone publishes and collects, no barrier
        if (threadIdx.x >= warplab::kWarpSize) return;
        if (threadIdx.x == 0) wr::store_slot(&slots[blockIdx.x], tag, sum);  // value and tag in one store
        ticket = __shfl_sync(0xffffffffu, ticket, 0);
        tag = __shfl_sync(0xffffffffu, tag, 0);
        if (ticket != gridDim.x - 1) return;          // uniform in the warp
        const float total =
            warplab::WarpReduceSum(wr::collect_slots<warplab::kWarpSize, kWarpLoads>(slots, tag, threadIdx.x));
        if (threadIdx.x == 0) {
            *out = total;
            wr::store_state(state, tag);  // every block has drawn its ticket: count 0, tag kept
        }
        return;
    }
    if (threadIdx.x == 0) {  // many slots: the whole last block collects them
        wr::store_slot(&slots[blockIdx.x], tag, sum);
        is_last_block = (ticket == gridDim.x - 1);
        launch_tag = tag;
    }
    __syncthreads();  // also separates the two block_sum_in_order calls (they share warp_sums)
    if (!is_last_block) return;  // uniform across the block
    const float total = wr::block_sum_in_order<BLOCK>(wr::collect_slots<BLOCK, 4>(slots, launch_tag, threadIdx.x));
    if (threadIdx.x == 0) {
        *out = total;
        wr::store_state(state, launch_tag);
    }
}
// [end:reduce_v9]
