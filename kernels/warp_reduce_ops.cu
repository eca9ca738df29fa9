// Generic warp reductions: any operator, any logical warp width, two trees, and the three library
// ways to do the same reduction (the hardware instruction, cooperative groups, CUB).
//
// Contract (every kernel here):
//   * Data is n_warps rows of 32 lanes: element i belongs to warp i / 32, lane i % 32. Launch
//     with blockDim.x a multiple of 32 and exactly n_warps * 32 threads, so every warp is full
//     and converged and every shuffle uses the full mask.
//   * out[i] is what thread i returns. Who holds the result:
//       warp_reduce_kernel<..., false> (shuffle-down tree): lane 0 of each width-lane segment;
//         the other lanes hold partial results that no one should read.
//       warp_reduce_kernel<..., true> (xor butterfly), the __reduce_*_sync and the cooperative
//         groups kernels: every lane.
//       warp_reduce_cub_kernel: lane 0 only (CUB defines the result nowhere else).
//   * width is a power of two in [1, 32] (the host checks it); n_valid in [1, width]: lanes whose
//     position in their segment is >= n_valid do not load, they contribute Op::identity().
//   * warp_reduce_intrinsic_kernel needs compute capability 8.0+ (__reduce_*_sync) and 32-bit
//     integers; compiled for an older architecture it traps.
// Build with -DWARPLAB_TRACE to record every lane at every step of the trees (helpers.trace).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/warp/warp_reduce.cuh>

#include "warp_reduce.cuh"

namespace cg = cooperative_groups;

namespace warplab {

template <typename T, typename Op, int Width, bool Butterfly>
__device__ __forceinline__ T Tree(T val) {
    return Butterfly ? WarpAllReduce<T, Op, Width>(val, Op()) : WarpReduce<T, Op, Width>(val, Op());
}

// The logical warp width is a template parameter of the tree; the kernel picks it at run time.
template <typename T, typename Op, bool Butterfly>
__device__ __forceinline__ T TreeOfWidth(T val, int width) {
    switch (width) {
        case 1: return Tree<T, Op, 1, Butterfly>(val);
        case 2: return Tree<T, Op, 2, Butterfly>(val);
        case 4: return Tree<T, Op, 4, Butterfly>(val);
        case 8: return Tree<T, Op, 8, Butterfly>(val);
        case 16: return Tree<T, Op, 16, Butterfly>(val);
        default: return Tree<T, Op, 32, Butterfly>(val);
    }
}

// The operator's cooperative-groups twin: cg::reduce's functors.
template <typename T> __device__ cg::plus<T> cg_op(ops::Sum<T>) { return {}; }
template <typename T> __device__ cg::greater<T> cg_op(ops::Max<T>) { return {}; }
template <typename T> __device__ cg::less<T> cg_op(ops::Min<T>) { return {}; }
template <typename T> __device__ cg::bit_and<T> cg_op(ops::BitAnd<T>) { return {}; }
template <typename T> __device__ cg::bit_or<T> cg_op(ops::BitOr<T>) { return {}; }
template <typename T> __device__ cg::bit_xor<T> cg_op(ops::BitXor<T>) { return {}; }

#if __CUDA_ARCH__ >= 800
// The operator's hardware instruction (compute capability 8.0+, 32-bit integers; the bitwise
// ones take unsigned, which an int converts to and from without changing a bit).
template <typename T> __device__ T hw_reduce(ops::Sum<T>, T v) { return __reduce_add_sync(kFullMask, v); }
template <typename T> __device__ T hw_reduce(ops::Max<T>, T v) { return __reduce_max_sync(kFullMask, v); }
template <typename T> __device__ T hw_reduce(ops::Min<T>, T v) { return __reduce_min_sync(kFullMask, v); }
template <typename T> __device__ T hw_reduce(ops::BitAnd<T>, T v) {
    return static_cast<T>(__reduce_and_sync(kFullMask, static_cast<unsigned>(v)));
}
template <typename T> __device__ T hw_reduce(ops::BitOr<T>, T v) {
    return static_cast<T>(__reduce_or_sync(kFullMask, static_cast<unsigned>(v)));
}
template <typename T> __device__ T hw_reduce(ops::BitXor<T>, T v) {
    return static_cast<T>(__reduce_xor_sync(kFullMask, static_cast<unsigned>(v)));
}
#endif

}  // namespace warplab

// [anchor:warp_reduce_kernel]
template <typename T, typename Op, bool Butterfly>
__global__ void warp_reduce_kernel(const T* in, int width, int n_valid, T* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = warplab::lane_id() % width < n_valid;   // pad the rest with the identity
    const T val = valid ? in[i] : Op::identity();
    out[i] = warplab::TreeOfWidth<T, Op, Butterfly>(val, width);
}
// [end:warp_reduce_kernel]

// [anchor:warp_reduce_intrinsic]
// One instruction: REDUX.SUM and friends (sm_80+). Every lane gets the result.
template <typename T, typename Op>
__global__ void warp_reduce_intrinsic_kernel(const T* in, T* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 800
    out[i] = warplab::hw_reduce(Op(), in[i]);
#else
    __trap();  // __reduce_*_sync does not exist before compute capability 8.0
#endif
}
// [end:warp_reduce_intrinsic]

// [anchor:warp_reduce_cg]
// cooperative_groups::reduce on a 32-thread tile: every lane gets the result. For 4-byte
// integers with plus/less/greater/bit ops it uses __reduce_*_sync on sm_80+, shuffles otherwise.
template <typename T, typename Op>
__global__ void warp_reduce_cg_kernel(const T* in, T* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    out[i] = cg::reduce(warp, in[i], warplab::cg_op(Op()));
}
// [end:warp_reduce_cg]

// [anchor:warp_reduce_cub]
// cub::WarpReduce: a shuffle tree like WarpReduce above; the result is defined in lane 0 only.
template <typename T, typename Op>
__global__ void warp_reduce_cub_kernel(const T* in, T* out) {
    using WarpReduceT = cub::WarpReduce<T>;
    __shared__ typename WarpReduceT::TempStorage temp[32];    // one per warp, up to 1024 threads
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = WarpReduceT(temp[threadIdx.x / 32]).Reduce(in[i], Op());
}
// [end:warp_reduce_cub]
