// Shared by every Warp Lab kernel: the full-warp mask and the trace switch.
//
// Tracing is a compile-time switch. Built with -DWARPLAB_TRACE, a kernel records, after each
// step of a warp-level algorithm, what every lane holds, what it received and from which lane.
// Built without it, WARPLAB_TRACE_STEP expands to nothing and its arguments (which may contain
// extra shuffles of the lane id) are never evaluated: the kernel is the plain one.
#pragma once

namespace warplab {
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpSize = 32;

#ifdef WARPLAB_TRACE
// Filled by helpers.trace before launch: n_slots is gridDim.x * blockDim.x (one slot per thread);
// step s of thread t lands at index s * n_slots + t.
struct TraceSink {
    double* held;
    double* received;
    int* src;
    long long n_slots;
    int n_steps;
};
}  // namespace warplab

// At global scope so that its symbol is the plain, unmangled name the host looks up.
__device__ warplab::TraceSink warplab_trace_sink;

namespace warplab {

template <typename T>
__device__ __forceinline__ void trace_step(int step, T held, T received, int src) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (step >= warplab_trace_sink.n_steps || t >= warplab_trace_sink.n_slots) return;
    const long long at = step * warplab_trace_sink.n_slots + t;
    warplab_trace_sink.held[at] = static_cast<double>(held);
    warplab_trace_sink.received[at] = static_cast<double>(received);
    warplab_trace_sink.src[at] = src;
}
#define WARPLAB_TRACE_STEP(step, held, received, src) \
    ::warplab::trace_step((step), (held), (received), (src))
#else
#define WARPLAB_TRACE_STEP(step, held, received, src) ((void)0)
#endif
}  // namespace warplab
