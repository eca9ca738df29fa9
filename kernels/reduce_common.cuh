// Pieces shared by the reduction ladder, kernels/reduce_v0.cu ... reduce_v9.cu and reduce_onepass.cu.
//
// Contract of every ladder kernel (one signature for all, one dispatcher: helpers/topics/reduce.py;
// onepass and v9 add their workspaces, kernels/reduce_onepass.cu and reduce_v9.cu):
//
//   template <int BLOCK>
//   __global__ void reduce_vN(const float* __restrict__ in, float* __restrict__ out, long long n);
//
//   - launched with blockDim = (BLOCK, 1, 1), BLOCK a power of two in [64, 1024] (checked at compile
//     time with valid_block below); any gridDim.x >= 1 the version's grid formula allows;
//   - reads in[0 .. n) only, n >= 1; an element past n is never read, it counts as 0 (the identity);
//   - writes out[blockIdx.x] = the sum of the elements this block covered, once, from thread 0 (the
//     "first pass"); out[0 .. gridDim.x) sums to the total. Launching the same kernel again on out
//     (n = gridDim.x) is the "second pass", until one value remains;
//   - in and out must not overlap; float32 accumulation (the order of additions differs by version,
//     so results differ in the last bits, never by more than float32 rounding allows);
//   - element indices are 64-bit (long long): n may exceed 2^31 - 1.
#pragma once
#include "warp_reduce.cuh"

namespace warplab {
namespace reduce {

// The block sizes every ladder kernel supports; each kernel static_asserts it on its BLOCK.
__host__ __device__ constexpr bool valid_block(int block) {
    return block >= 64 && block <= 1024 && (block & (block - 1)) == 0;
}

// [anchor:load_or_zero]
// The bounds check of every version: past the end of the input, add the identity (0) instead.
__device__ __forceinline__ float load_or_zero(const float* __restrict__ in, long long i, long long n) {
    return i < n ? in[i] : 0.0f;
}
// [end:load_or_zero]

// [anchor:warp_reduce_smem]
// The last 64 partial sums, smem[0 .. 64), reduced by warp 0 alone, without __syncthreads().
// Called by all 32 lanes of warp 0, converged; afterwards smem[0] holds the sum of the 64.
//
// Since Volta the lanes of a warp are not guaranteed to run in lockstep, so "the warp is
// synchronous" is no longer a reason to skip synchronisation: lane 0's read of smem[16] and lane
// 16's write of smem[16] would race. Each step therefore reads into a register, waits at
// __syncwarp() until every lane has read, writes, and waits again before the next read.
// __syncwarp() also orders the lanes' shared-memory accesses, which is what makes this correct;
// `volatile` (kept from the classic code) only stops the compiler keeping smem values in registers,
// which on its own does not order anything between lanes (see reduce_v4_legacy.cu).
// Lanes with tid >= offset compute sums nobody reads; they stay in step so the mask stays full.
__device__ __forceinline__ void warp_reduce_smem(volatile float* smem, unsigned int tid) {
    float x = smem[tid];
#pragma unroll
    for (int offset = kWarpSize; offset > 0; offset /= 2) {
        x += smem[tid + offset];
        __syncwarp();
        smem[tid] = x;
        __syncwarp();
    }
}
// [end:warp_reduce_smem]

// [anchor:block_tree_unrolled]
// The shared-memory tree of v5/v6 with the block size known at compile time: every `if constexpr`
// that does not apply to this BLOCK disappears with its __syncthreads(), and no loop counter is left.
// On entry smem[tid] == sum (this thread's value) for every tid, and a __syncthreads() has passed.
// Each thread keeps its running sum in a register, so a step reads only one value from shared
// memory. On exit smem[0] holds the block's sum.
template <int BLOCK>
__device__ __forceinline__ void block_tree_unrolled(float* smem, unsigned int tid, float sum) {
    if constexpr (BLOCK >= 1024) { if (tid < 512) smem[tid] = sum = sum + smem[tid + 512]; __syncthreads(); }
    if constexpr (BLOCK >= 512)  { if (tid < 256) smem[tid] = sum = sum + smem[tid + 256]; __syncthreads(); }
    if constexpr (BLOCK >= 256)  { if (tid < 128) smem[tid] = sum = sum + smem[tid + 128]; __syncthreads(); }
    if constexpr (BLOCK >= 128)  { if (tid < 64)  smem[tid] = sum = sum + smem[tid + 64];  __syncthreads(); }
    if (tid < kWarpSize) warp_reduce_smem(smem, tid);
}
// [end:block_tree_unrolled]

// [anchor:block_sum_shfl]
// Block-wide sum with shuffles: each warp reduces its 32 values in registers (WarpReduceSum, the
// five __shfl_down_sync steps), lane 0 of each warp parks the warp's sum in one shared slot, and
// warp 0 reduces those BLOCK/32 slots with one more WarpReduceSum. One __syncthreads() in all.
// Called by every thread of the block (it contains a barrier). The result is valid in thread 0
// only. A caller that calls it again must put a __syncthreads() between the two calls, so that
// warp 0 has read warp_sums before any warp overwrites it.
template <int BLOCK>
__device__ __forceinline__ float block_sum_shfl(float v) {
    constexpr int kWarps = BLOCK / kWarpSize;  // 2 .. 32: the slots always fit in one warp
    __shared__ float warp_sums[kWarps];
    const unsigned int lane = threadIdx.x % kWarpSize;
    const unsigned int warp = threadIdx.x / kWarpSize;
    v = WarpReduceSum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) v = WarpReduceSum(lane < kWarps ? warp_sums[lane] : 0.0f);  // pad with the identity
    return v;
}
// [end:block_sum_shfl]

// How thread_sum_vec4 reads its float4 vectors (CUDA C++ Programming Guide, "Read-Only Data Cache
// Load Function" and "Load Functions Using Cache Hints"):
//   kPlain:      *p, and the compiler chooses: it emits the read-only path (ld.global.nc) where it
//                can prove the data is not written during the kernel, which const __restrict__
//                helps; it did for reduce_v8, and did not for reduce_v9 (its PTX had plain
//                ld.global), whose asm statements with a "memory" clobber may write anything;
//   kReadOnly:   __ldg, ld.global.nc whatever else the kernel does (the input is never written
//                during the launch, which is what the read-only path requires);
//   kEvictFirst: __ldcs, ld.global.cs: each byte is read once, so it need not stay in L2.
enum class Loads { kPlain, kReadOnly, kEvictFirst };

template <Loads LOADS>
__device__ __forceinline__ float4 load_vec4(const float4* __restrict__ p) {
    if constexpr (LOADS == Loads::kEvictFirst) {
        return __ldcs(p);
    } else if constexpr (LOADS == Loads::kReadOnly) {
        return __ldg(p);
    } else {
        return *p;
    }
}

// [anchor:thread_sum_vec4]
// This thread's share of in[0 .. n), read through 16-byte float4 loads, UNROLL independent loads in
// flight per iteration (the bytes in flight per SM are what keeps HBM busy). The whole grid shares
// the work; thread t = blockIdx.x * BLOCK + threadIdx.x of T = gridDim.x * BLOCK threads takes:
//   head: in[t] if t < head, where head (0..3) is the number of floats before the first 16-byte
//         boundary (in may be any float* into an allocation, e.g. a slice x[1:]);
//   body: vectors t, t + T, t + 2T, ... of the aligned middle (coalesced: a warp reads 512
//         contiguous bytes per load);
//   tail: the t-th of the 0..3 floats after the last whole vector, if t < tail.
// Every element of in[0 .. n) is read exactly once by exactly one thread, none past n.
// LOADS: how the body is read (load_vec4 above; reduce_v9 chooses, the others read plainly).
template <int BLOCK, int UNROLL, Loads LOADS = Loads::kPlain>
__device__ __forceinline__ float thread_sum_vec4(const float* __restrict__ in, long long n) {
    static_assert(UNROLL >= 1, "UNROLL must be at least 1");
    const long long t = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * BLOCK;

    const long long misalign = static_cast<long long>((reinterpret_cast<unsigned long long>(in) / sizeof(float)) % 4);
    const long long head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
    const long long m = (n - head) / 4;                // whole float4 vectors in the body
    const long long tail = (n - head) - 4 * m;         // 0..3 floats left after the body
    const float4* __restrict__ body = reinterpret_cast<const float4*>(in + head);  // 16-byte aligned

    float sum = 0.0f;
    if (t < head) sum += in[t];
    if (t < tail) sum += in[head + 4 * m + t];

    long long i = t;
    for (; i + (UNROLL - 1) * threads < m; i += UNROLL * threads) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = load_vec4<LOADS>(body + i + u * threads);  // all issued first
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < m; i += threads) {  // fewer than UNROLL vectors left for this thread
        const float4 v = load_vec4<LOADS>(body + i);
        sum += (v.x + v.y) + (v.z + v.w);
    }
    return sum;
}
// [end:thread_sum_vec4]

}  // namespace reduce
}  // namespace warplab
