// Litmus tests of the PTX memory model (PTX ISA 8 "Memory Consistency Model"; the shapes of Lustig et
// al., "A Formal Analysis of the NVIDIA PTX Memory Consistency Model", ASPLOS 2019): MP, SB, LB, IRIW,
// 2+2W and CoRR, every access a relaxed (morally strong) ld/st at SCOPE, with or without fence.sc
// between a thread's two accesses. Run by helpers.machine.litmus on the SIMT machine and by
// helpers.recording.record_litmus on a GPU (the same file).
//
// One launch runs many instances side by side. Instance i owns the words mem[64 i] (x) and
// mem[64 i + 32] (y), 128 bytes apart, and its registers out[4 i .. 4 i + 3]. Its threads ("roles")
// are lane i % 32 of
//   SCOPE 0 (.cta): warp `role` of block i / 32 (a block of 32 * ROLES threads);
//   SCOPE 1 (.gpu): block ROLES * (i / 32) + role (blocks of 32 threads).
// Role 0's code comes first in every kernel.
#include <cuda/std/cstdint>

enum { MP = 0, SB = 1, LB = 2, IRIW = 3, W22 = 4, CORR = 5 };

template <int S> __device__ __forceinline__ unsigned ld(const unsigned* p);
template <> __device__ __forceinline__ unsigned ld<0>(const unsigned* p) {
    unsigned v;
    asm volatile("ld.relaxed.cta.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
template <> __device__ __forceinline__ unsigned ld<1>(const unsigned* p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
template <int S> __device__ __forceinline__ void st(unsigned* p, unsigned v);
template <> __device__ __forceinline__ void st<0>(unsigned* p, unsigned v) {
    asm volatile("st.relaxed.cta.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
template <> __device__ __forceinline__ void st<1>(unsigned* p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
template <int S, int F> __device__ __forceinline__ void fence();
template <> __device__ __forceinline__ void fence<0, 0>() {}
template <> __device__ __forceinline__ void fence<1, 0>() {}
template <> __device__ __forceinline__ void fence<0, 1>() { asm volatile("fence.sc.cta;" ::: "memory"); }
template <> __device__ __forceinline__ void fence<1, 1>() { asm volatile("fence.sc.gpu;" ::: "memory"); }

// [anchor:litmus]
template <int SHAPE, int SCOPE, int FENCE>
__global__ void litmus(unsigned* mem, unsigned* out) {
    constexpr int ROLES = SHAPE == IRIW ? 4 : 2;
    const unsigned lane = threadIdx.x % 32;
    const unsigned role = SCOPE == 0 ? threadIdx.x / 32 : blockIdx.x % ROLES;
    const unsigned inst = (SCOPE == 0 ? blockIdx.x : blockIdx.x / ROLES) * 32 + lane;
    unsigned* x = mem + 64 * inst;
    unsigned* y = x + 32;
    unsigned* r = out + 4 * inst;
    if (SHAPE == MP) {          // P0: x = 1; y = 1          P1: r0 = y; r1 = x
        if (role == 0) { st<SCOPE>(x, 1); fence<SCOPE, FENCE>(); st<SCOPE>(y, 1); }
        if (role == 1) { r[0] = ld<SCOPE>(y); fence<SCOPE, FENCE>(); r[1] = ld<SCOPE>(x); }
    } else if (SHAPE == SB) {   // P0: x = 1; r0 = y         P1: y = 1; r1 = x
        if (role == 0) { st<SCOPE>(x, 1); fence<SCOPE, FENCE>(); r[0] = ld<SCOPE>(y); }
        if (role == 1) { st<SCOPE>(y, 1); fence<SCOPE, FENCE>(); r[1] = ld<SCOPE>(x); }
    } else if (SHAPE == LB) {   // P0: r0 = x; y = 1         P1: r1 = y; x = 1
        if (role == 0) { r[0] = ld<SCOPE>(x); fence<SCOPE, FENCE>(); st<SCOPE>(y, 1); }
        if (role == 1) { r[1] = ld<SCOPE>(y); fence<SCOPE, FENCE>(); st<SCOPE>(x, 1); }
    } else if (SHAPE == IRIW) { // P0: x = 1   P1: y = 1   P2: r0 = x; r1 = y   P3: r2 = y; r3 = x
        if (role == 0) st<SCOPE>(x, 1);
        if (role == 1) st<SCOPE>(y, 1);
        if (role == 2) { r[0] = ld<SCOPE>(x); fence<SCOPE, FENCE>(); r[1] = ld<SCOPE>(y); }
        if (role == 3) { r[2] = ld<SCOPE>(y); fence<SCOPE, FENCE>(); r[3] = ld<SCOPE>(x); }
    } else if (SHAPE == W22) {  // P0: x = 1; y = 2          P1: y = 1; x = 2      (then x, y as left)
        if (role == 0) { st<SCOPE>(x, 1); fence<SCOPE, FENCE>(); st<SCOPE>(y, 2); }
        if (role == 1) { st<SCOPE>(y, 1); fence<SCOPE, FENCE>(); st<SCOPE>(x, 2); }
    } else {                    // CoRR  P0: x = 1           P1: r0 = x; r1 = x
        if (role == 0) st<SCOPE>(x, 1);
        if (role == 1) { r[0] = ld<SCOPE>(x); fence<SCOPE, FENCE>(); r[1] = ld<SCOPE>(x); }
    }
}
// [end:litmus]
