// Floor probe (exploration on the H200, not a shipped kernel): what part of a one-launch sum's
// time is the launch, the loads, the block tree and the combine across blocks. Every kernel here
// reads m float4 vectors of an aligned array (n = 4m floats) the way reduce_v9's thread_sum_vec4
// does (grid-stride, UNROLL loads in flight), and then:
//   MODE 0: nothing: the thread's sum is written only if it equals `sentinel` (never, for the
//           probe's positive inputs; the test keeps the compiler from dropping the loads);
//   MODE 1: the block's sum (block_sum_in_order, as v9) to out[blockIdx.x]: v9 without the combine.
// LOADS picks the load instruction (PTX ISA, "Data Movement and Conversion Instructions: ld"):
//   0 ld.global.nc (what v9 uses in the L2), 1 ld.global.cs (evict-first, v9 from HBM),
//   2 ld.global.nc.L1::no_allocate.L2::256B, 3 ld.global.nc.L2::128B, 4 ld.global.nc.L1::no_allocate.
// floor_tma reads each block's contiguous share with one or more bulk copies (cp.async.bulk, the
// Tensor Memory Accelerator's non-tensor form, sm_90) into shared memory, then sums it from there.
#include "reduce_v9.cu"

namespace probe {

// The two 32-bit workspace words of v9 before it drew ticket and tag with one 64-bit atomic.
__device__ __forceinline__ unsigned int load_u32(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_u32(unsigned int* p, unsigned int v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

template <int LOADS>
__device__ __forceinline__ float4 ld4(const float4* p) {
    float4 v;
    if constexpr (LOADS == 0) {
        v = __ldg(p);
    } else if constexpr (LOADS == 1) {
        v = __ldcs(p);
    } else if constexpr (LOADS == 2) {
        asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    } else if constexpr (LOADS == 3) {
        asm("ld.global.nc.L2::128B.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    } else {
        asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    }
    return v;
}

// MODE 0: keep the loads alive (the thread's sum is written only if it equals `sentinel`);
// MODE 1: the block's sum (block_sum_in_order, as v9) to out[blockIdx.x].
template <int BLOCK, int MODE>
__device__ __forceinline__ void finish(float sum, float* out, float sentinel) {
    if constexpr (MODE == 0) {
        if (sum == sentinel) out[blockIdx.x] = sum;
    } else {
        sum = warplab::reduce::block_sum_in_order<BLOCK>(sum);
        if (threadIdx.x == 0) out[blockIdx.x] = sum;
    }
}

// This launch's tag, read with one ld.relaxed of the workspace word (the last launch's tag + 1),
// for the variants that draw no ticket at the start.
__device__ __forceinline__ unsigned int launch_tag(const unsigned long long* state) {
    return static_cast<unsigned int>(warplab::reduce::load_slot(state) >> 32) + 1u;
}

// The block's sum as v9 computes it (valid in thread 0): loads, then block_sum_in_order.
template <int BLOCK, int UNROLL, int STREAM>
__device__ __forceinline__ float block_partial(const float* __restrict__ in, long long n) {
    namespace wr = warplab::reduce;
    constexpr wr::Loads kLoads = STREAM ? wr::Loads::kEvictFirst : wr::Loads::kReadOnly;
    return wr::block_sum_in_order<BLOCK>(wr::thread_sum_vec4<BLOCK, UNROLL, kLoads>(in, n));
}

// Warp 0 of the collecting block: v9's collect of every slot with this launch's tag, the result,
// and the workspace reset that keeps the tag (count 0).
template <int K>
__device__ __forceinline__ void collect_and_finish(const unsigned long long* slots, unsigned long long* state,
                                                   float* out, unsigned int tag) {
    namespace wr = warplab::reduce;
    const float total = warplab::WarpReduceSum(wr::collect_slots<warplab::kWarpSize, K>(slots, tag, threadIdx.x));
    if (threadIdx.x == 0) {
        *out = total;
        wr::store_state(state, tag);
    }
}

}  // namespace probe

template <int BLOCK, int UNROLL, int LOADS, int MODE>
__global__ void __launch_bounds__(BLOCK) floor_kernel(const float4* __restrict__ in, float* out, long long m,
                                                      float sentinel) {
    const long long t = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * BLOCK;
    float sum = 0.0f;
    long long i = t;
    for (; i + (UNROLL - 1) * threads < m; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = probe::ld4<LOADS>(in + i + u * threads);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < m; i += threads) {
        const float4 v = probe::ld4<LOADS>(in + i);
        sum += (v.x + v.y) + (v.z + v.w);
    }
    probe::finish<BLOCK, MODE>(sum, out, sentinel);
}

// The same launch shape doing nothing: what the launch of BLOCK-thread blocks costs.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) floor_empty(float* out, float sentinel) {
    if (sentinel == 1.0f && threadIdx.x == 0) out[blockIdx.x] = sentinel;
}

// Block b sums vectors [b * kVecs, (b + 1) * kVecs): BYTES bytes, in COPIES bulk copies of
// BYTES / COPIES each, issued by thread 0 and awaited on one mbarrier (PTX ISA, "cp.async.bulk",
// "mbarrier"). Then MODE as above.
template <int BLOCK, int BYTES, int COPIES, int MODE>
__global__ void __launch_bounds__(BLOCK) floor_tma(const float4* __restrict__ in, float* out, float sentinel) {
    static_assert(BYTES % (16 * COPIES) == 0, "each copy must be a multiple of 16 bytes");
    constexpr int kVecs = BYTES / 16;
    __shared__ alignas(128) float4 buf[kVecs];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned int bar_a = static_cast<unsigned int>(__cvta_generic_to_shared(&bar));
    const unsigned int buf_a = static_cast<unsigned int>(__cvta_generic_to_shared(buf));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_a) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_a), "r"(BYTES) : "memory");
        const float4* src = in + static_cast<long long>(blockIdx.x) * kVecs;
#pragma unroll
        for (int c = 0; c < COPIES; ++c) {
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                    buf_a + c * (BYTES / COPIES)),
                "l"(src + c * (kVecs / COPIES)), "r"(BYTES / COPIES), "r"(bar_a)
                : "memory");
        }
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
        "@!p bra WAIT;\n"
        "}\n" ::"r"(bar_a)
        : "memory");
    float sum = 0.0f;
#pragma unroll 4
    for (int k = threadIdx.x; k < kVecs; k += BLOCK) {
        const float4 v = buf[k];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    probe::finish<BLOCK, MODE>(sum, out, sentinel);
}

// Where v9's combine spends its time (STREAM: evict-first loads; up to 128 blocks: warp 0 publishes and collects, as v9).
// VARIANT 0: v9's own logic (ticket and tag drawn at the start, {tag, value} slots polled by the
//            last-started block); 1: the slot stored, nobody collects (no ticket, no tag);
//            2: ticket and tag at the start and the slot stored, nobody collects (the last-ticket
//            block only resets the workspace); 3: as 0, but the last block reads every slot once
//            without checking tags (wrong in general: timing only); 4: the ticket drawn at the END,
//            after the slot's store, with no fence (the tags say when a value is there), and the
//            tag read at the start; 5: the block sums added with red.global.add.f32 into out[0]
//            (no order: not deterministic; the floor of any combine); 6: as 0 without the tag's
//            load (tag fixed: timing only); 7, 8, 9: ticket and tag drawn together by ONE 64-bit
//            atomicAdd on {tag, count} (the count in the low word), and warp 0 collecting up to 128,
//            256, 512 slots with 4, 8, 16 loads per lane in flight.

template <int BLOCK, int UNROLL, int STREAM, int VARIANT>
__global__ void __launch_bounds__(BLOCK) floor_v9(const float* __restrict__ in, unsigned long long* slots,
                                                  unsigned int* state, float* out, long long n) {
    namespace wr = warplab::reduce;
    unsigned int ticket = 0, tag = 1;
    if (VARIANT >= 7 && threadIdx.x == 0) {
        const unsigned long long old = atomicAdd(reinterpret_cast<unsigned long long*>(state), 1ull);
        ticket = static_cast<unsigned int>(old);
        tag = static_cast<unsigned int>(old >> 32) + 1u;
    }
    if (VARIANT < 7 && threadIdx.x == 0) {
        if constexpr (VARIANT == 0 || VARIANT == 2 || VARIANT == 3 || VARIANT == 6) ticket = atomicAdd(&state[0], 1u);
        if constexpr (VARIANT == 0 || VARIANT == 2 || VARIANT == 3 || VARIANT == 4) tag = probe::load_u32(&state[1]) + 1u;
    }
    float sum = wr::thread_sum_vec4<BLOCK, UNROLL, STREAM ? wr::Loads::kEvictFirst : wr::Loads::kReadOnly>(in, n);
    sum = wr::block_sum_in_order<BLOCK>(sum);
    if (threadIdx.x >= warplab::kWarpSize) return;
    if constexpr (VARIANT == 5) {
        if (threadIdx.x == 0) asm volatile("red.global.add.f32 [%0], %1;" ::"l"(out), "f"(sum) : "memory");
        return;
    }
    if (threadIdx.x == 0) wr::store_slot(&slots[blockIdx.x], tag, sum);
    if constexpr (VARIANT == 1) return;
    if constexpr (VARIANT == 4) {
        if (threadIdx.x == 0) ticket = atomicAdd(&state[0], 1u);
    }
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    tag = __shfl_sync(0xffffffffu, tag, 0);
    if (ticket != gridDim.x - 1) return;
    float total = 0.0f;
    if constexpr (VARIANT >= 7) {
        total = warplab::WarpReduceSum(wr::collect_slots<warplab::kWarpSize, (VARIANT == 7 ? 4 : VARIANT == 8 ? 8 : 16)>(slots, tag, threadIdx.x));
        if (threadIdx.x == 0) {
            *out = total;
            asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state), "l"(static_cast<unsigned long long>(tag) << 32) : "memory");
        }
        return;
    }
    if constexpr (VARIANT == 0 || VARIANT == 4 || VARIANT == 6) {
        total = warplab::WarpReduceSum(wr::collect_slots<warplab::kWarpSize, 4>(slots, tag, threadIdx.x));
    } else if constexpr (VARIANT == 3) {
        for (unsigned int b = threadIdx.x; b < gridDim.x; b += warplab::kWarpSize)
            total += __uint_as_float(static_cast<unsigned int>(wr::load_slot(&slots[b])));
        total = warplab::WarpReduceSum(total);
    }
    if (threadIdx.x == 0) {
        if constexpr (VARIANT != 2) *out = total;
        probe::store_u32(&state[0], 0u);
        if constexpr (VARIANT != 6) probe::store_u32(&state[1], tag);
    }
}

// v9's logic with warp 0 collecting up to 32 * K slots, K loads per lane in flight, the ticket
// and the tag drawn by two accesses (PACKED 0: atomicAdd on state[0], ld.relaxed of state[1]), by
// one 64-bit atomicAdd on {tag, count} (PACKED 1, v9's code), or by the same atomic kept out of
// ptxas's warp aggregation and decoded only after the block sum (PACKED 2). The body of floor_v9k
// and floor_v9m.
namespace probe {
template <int BLOCK, int UNROLL, int STREAM, int PACKED, int K>
__device__ __forceinline__ void v9k(const float* __restrict__ in, unsigned long long* slots, unsigned int* state,
                                    float* out, long long n) {
    namespace wr = warplab::reduce;
    unsigned int ticket = 0, tag = 0;
    unsigned long long drawn = 0;
    if (threadIdx.x == 0) {
        if constexpr (PACKED == 2) {
            // Thread 0 is lane 0 of warp 0 (Programming Guide, SIMT Architecture: the first warp holds
            // thread 0), so state + %laneid is state. Indexed so, ptxas cannot prove the address uniform
            // across the warp and does not aggregate the atomic (VOTE, one ATOMG, a SHFL of the reply):
            // that SHFL waits for the reply before the warp issues its loads. Decoded after the block sum.
            unsigned int lane;
            asm("mov.u32 %0, %%laneid;" : "=r"(lane));
            drawn = atomicAdd(reinterpret_cast<unsigned long long*>(state) + lane, 1ull);
        } else if constexpr (PACKED) {
            const unsigned long long old = atomicAdd(reinterpret_cast<unsigned long long*>(state), 1ull);
            ticket = static_cast<unsigned int>(old);
            tag = static_cast<unsigned int>(old >> 32) + 1u;
        } else {
            ticket = atomicAdd(&state[0], 1u);
            tag = load_u32(&state[1]) + 1u;
        }
    }
    float sum = wr::thread_sum_vec4<BLOCK, UNROLL, STREAM ? wr::Loads::kEvictFirst : wr::Loads::kReadOnly>(in, n);
    sum = wr::block_sum_in_order<BLOCK>(sum);
    if constexpr (PACKED == 2) {
        ticket = static_cast<unsigned int>(drawn);
        tag = static_cast<unsigned int>(drawn >> 32) + 1u;
    }
    if (threadIdx.x >= warplab::kWarpSize) return;
    if (threadIdx.x == 0) wr::store_slot(&slots[blockIdx.x], tag, sum);
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    tag = __shfl_sync(0xffffffffu, tag, 0);
    if (ticket != gridDim.x - 1) return;
    const float total = warplab::WarpReduceSum(wr::collect_slots<warplab::kWarpSize, K>(slots, tag, threadIdx.x));
    if (threadIdx.x == 0) {
        *out = total;
        if constexpr (PACKED) {
            asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state), "l"(static_cast<unsigned long long>(tag) << 32) : "memory");
        } else {
            store_u32(&state[0], 0u);
            store_u32(&state[1], tag);
        }
    }
}
}  // namespace probe

template <int BLOCK, int UNROLL, int STREAM, int PACKED, int K>
__global__ void __launch_bounds__(BLOCK) floor_v9k(const float* __restrict__ in, unsigned long long* slots,
                                                   unsigned int* state, float* out, long long n) {
    probe::v9k<BLOCK, UNROLL, STREAM, PACKED, K>(in, slots, state, out, n);
}

// floor_v9k (PACKED 1: v9's own code) under __launch_bounds__(BLOCK, MINB): with a minimum of MINB
// resident blocks per SM declared, ptxas 13.0 keeps every one of a round's UNROLL float4 loads in
// flight in the grid-stride loop's SASS (up to 8 a round, and 16 below 1024 threads); floor_v9k,
// with the maximum block size alone, keeps 3 to 8 of 8 (helpers.engine.sass; docs/probes/v9_round5.md,
// section 3). Does the hardware see the difference?
template <int BLOCK, int UNROLL, int STREAM, int K, int MINB>
__global__ void __launch_bounds__(BLOCK, MINB) floor_v9m(const float* __restrict__ in, unsigned long long* slots,
                                                         unsigned int* state, float* out, long long n) {
    probe::v9k<BLOCK, UNROLL, STREAM, 1, K>(in, slots, state, out, n);
}

// v9 with the ticket drawn at the END (the last block to finish collects): the tag is read when a
// block starts (ld.relaxed of the workspace word), each block publishes {tag, value}, then draws
// its ticket with one 64-bit atomicAdd; with SPEC 1 warp 0 issues its loads of every slot beside
// the atomic, before knowing whether it is last, so the last block's first look at the slots costs
// no round trip after the atomic's.
template <int BLOCK, int UNROLL, int STREAM, int K, int SPEC>
__global__ void __launch_bounds__(BLOCK) floor_v9e(const float* __restrict__ in, unsigned long long* slots,
                                                   unsigned long long* state, float* out, long long n) {
    namespace wr = warplab::reduce;
    unsigned int tag = 0;
    if (threadIdx.x == 0) tag = probe::launch_tag(state);
    const float sum = probe::block_partial<BLOCK, UNROLL, STREAM>(in, n);
    if (threadIdx.x >= warplab::kWarpSize) return;
    tag = __shfl_sync(0xffffffffu, tag, 0);
    const float own = __shfl_sync(0xffffffffu, sum, 0);
    if (threadIdx.x == 0) wr::store_slot(&slots[blockIdx.x], tag, sum);
    unsigned long long word[K];
    if constexpr (SPEC) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const unsigned int b = k * warplab::kWarpSize + threadIdx.x;
            word[k] = (b < gridDim.x && b != blockIdx.x) ? wr::load_slot(&slots[b]) : static_cast<unsigned long long>(tag) << 32;
        }
    }
    unsigned int ticket = 0;
    if (threadIdx.x == 0) ticket = static_cast<unsigned int>(atomicAdd(state, 1ull));
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    if (ticket != gridDim.x - 1) return;
    bool ready;
    bool first = SPEC != 0;
    do {
        ready = true;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const unsigned int b = k * warplab::kWarpSize + threadIdx.x;
            if (!first || static_cast<unsigned int>(word[k] >> 32) != tag)
                word[k] = (b < gridDim.x && b != blockIdx.x) ? wr::load_slot(&slots[b]) : static_cast<unsigned long long>(tag) << 32;
            ready &= static_cast<unsigned int>(word[k] >> 32) == tag;
        }
        first = false;
    } while (!__all_sync(0xffffffffu, ready));
    float total = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const unsigned int b = k * warplab::kWarpSize + threadIdx.x;
        total += b == blockIdx.x ? own : __uint_as_float(static_cast<unsigned int>(word[k]));
    }
    total = warplab::WarpReduceSum(total);
    if (threadIdx.x == 0) {
        *out = total;
        wr::store_state(state, tag);
    }
}

// v9 with no atomic at all: the tag is read when a block starts (ld.relaxed of the workspace word)
// and one block chosen in advance collects (WHO 0: the last block, gridDim.x - 1; 1: block 0).
// Correct only when every block of the grid is resident at once, which a cooperative launch
// (cuLaunchCooperativeKernel) promises and a plain launch does not: launched both ways, to time
// what the cooperative launch itself costs.
template <int BLOCK, int UNROLL, int STREAM, int K, int WHO>
__global__ void __launch_bounds__(BLOCK) floor_v9c(const float* __restrict__ in, unsigned long long* slots,
                                                   unsigned long long* state, float* out, long long n) {
    namespace wr = warplab::reduce;
    unsigned int tag = 0;
    if (threadIdx.x == 0) tag = probe::launch_tag(state);
    const float sum = probe::block_partial<BLOCK, UNROLL, STREAM>(in, n);
    if (threadIdx.x >= warplab::kWarpSize) return;
    if (threadIdx.x == 0) wr::store_slot(&slots[blockIdx.x], tag, sum);
    if (blockIdx.x != (WHO == 0 ? gridDim.x - 1 : 0u)) return;
    probe::collect_and_finish<K>(slots, state, out, __shfl_sync(0xffffffffu, tag, 0));
}

// v9 with tickets drawn in two levels, so that no counter takes more than G (or gridDim.x / G)
// atomics: block b draws from its group's counter (groups[32 * (b / G)], one 128-byte line per
// group; atomicInc wraps it back to 0 on the group's last draw), and the group's last block then
// draws from the top counter (the low word of `state`). The block that draws the top's last ticket
// collects: every group's last block has drawn, so every block has started (the progress argument
// of v9's single ticket). The tag is read at the start (ld.relaxed of `state`), as floor_v9c.
template <int BLOCK, int UNROLL, int STREAM, int K, int G>
__global__ void __launch_bounds__(BLOCK) floor_v9h(const float* __restrict__ in, unsigned long long* slots,
                                                   unsigned long long* state, unsigned int* groups, float* out,
                                                   long long n) {
    namespace wr = warplab::reduce;
    unsigned int tag = 0;
    bool collects = false;
    if (threadIdx.x == 0) {
        tag = probe::launch_tag(state);
        const unsigned int group = blockIdx.x / G, ngroups = (gridDim.x + G - 1) / G;
        const unsigned int size = min(static_cast<unsigned int>(G), gridDim.x - group * G);
        if (atomicInc(&groups[32 * group], size - 1u) == size - 1u)
            collects = static_cast<unsigned int>(atomicAdd(state, 1ull)) == ngroups - 1u;
    }
    const float sum = probe::block_partial<BLOCK, UNROLL, STREAM>(in, n);
    if (threadIdx.x >= warplab::kWarpSize) return;
    if (threadIdx.x == 0) wr::store_slot(&slots[blockIdx.x], tag, sum);
    if (!__shfl_sync(0xffffffffu, collects, 0)) return;
    probe::collect_and_finish<K>(slots, state, out, __shfl_sync(0xffffffffu, tag, 0));
}

// v9 (one 64-bit ticket, warp 0 collects) with the grid-stride loop's last, partial round issued
// like a whole one: up to UNROLL predicated loads in flight, then the adds of those that exist, in
// the same order as thread_sum_vec4's one-vector-at-a-time tail (so the same bits). thread_sum_vec4
// waits for each of those loads in turn, which costs a memory latency per vector when the grid does
// not divide the input into whole rounds (132 blocks at 2^24, say).
//   ONE_LOOP 0: thread_sum_vec4's loop of whole rounds, then one predicated round;
//   ONE_LOOP 1: one loop for whole and partial rounds, every load predicated on its index: does a
//               single loop body avoid what slowed ONE_LOOP 0 at UNROLL 4 on 132 blocks (2^24 in
//               20.7 to 21.8 us against 18.3 with thread_sum_vec4; round 5 did not find the cause)?
namespace probe {
// One round of up to UNROLL vectors from i (stride `threads`): every load issued, then the adds of
// those below m, in index order.
template <int UNROLL, warplab::reduce::Loads LOADS>
__device__ __forceinline__ void predicated_round(const float4* __restrict__ body, long long i, long long threads,
                                                 long long m, float& sum) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (i + u * threads < m) v[u] = warplab::reduce::load_vec4<LOADS>(body + i + u * threads);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (i + u * threads < m) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
}

template <int BLOCK, int UNROLL, warplab::reduce::Loads LOADS, bool ONE_LOOP>
__device__ __forceinline__ float thread_sum_whole_rounds(const float* __restrict__ in, long long n) {
    namespace wr = warplab::reduce;
    const long long t = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * BLOCK;
    const long long misalign = static_cast<long long>((reinterpret_cast<unsigned long long>(in) / sizeof(float)) % 4);
    const long long head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
    const long long m = (n - head) / 4;
    const long long tail = (n - head) - 4 * m;
    const float4* __restrict__ body = reinterpret_cast<const float4*>(in + head);
    float sum = 0.0f;
    if (t < head) sum += in[t];
    if (t < tail) sum += in[head + 4 * m + t];
    long long i = t;
    if constexpr (ONE_LOOP) {
        for (; i < m; i += UNROLL * threads) predicated_round<UNROLL, LOADS>(body, i, threads, m, sum);
    } else {
        for (; i + (UNROLL - 1) * threads < m; i += UNROLL * threads) {
            float4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) v[u] = wr::load_vec4<LOADS>(body + i + u * threads);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        if (i < m) predicated_round<UNROLL, LOADS>(body, i, threads, m, sum);
    }
    return sum;
}
}  // namespace probe

template <int BLOCK, int UNROLL, int STREAM, int K, bool ONE_LOOP>
__global__ void __launch_bounds__(BLOCK) floor_v9t(const float* __restrict__ in, unsigned long long* slots,
                                                   unsigned long long* state, float* out, long long n) {
    namespace wr = warplab::reduce;
    unsigned int ticket = 0, tag = 0;
    if (threadIdx.x == 0) {
        const unsigned long long old = atomicAdd(state, 1ull);
        ticket = static_cast<unsigned int>(old);
        tag = static_cast<unsigned int>(old >> 32) + 1u;
    }
    constexpr wr::Loads kLoads = STREAM ? wr::Loads::kEvictFirst : wr::Loads::kReadOnly;
    float sum = probe::thread_sum_whole_rounds<BLOCK, UNROLL, kLoads, ONE_LOOP>(in, n);
    sum = wr::block_sum_in_order<BLOCK>(sum);
    if (threadIdx.x >= warplab::kWarpSize) return;
    if (threadIdx.x == 0) wr::store_slot(&slots[blockIdx.x], tag, sum);
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    tag = __shfl_sync(0xffffffffu, tag, 0);
    if (ticket != gridDim.x - 1) return;
    probe::collect_and_finish<K>(slots, state, out, tag);
}
