// Block reductions, one tile of values per block, every thread's return value written out.
//
// Contract (every kernel here):
//   * Block shape (blockDim.x, blockDim.y) with 1 <= x * y <= 1024, any sizes (see
//     block_reduce.cuh). Block b reduces in[b * n .. b * n + n) with n = x * y; thread (x, y)
//     loads element y * blockDim.x + x of its block's tile and writes what it returns to the same
//     place in out.
//   * Who holds the result: block_reduce_kernel -> thread 0 (out[b * n]); the other threads'
//     outputs are partial results, not the block's. block_all_reduce_kernel -> every thread.
//     block_x_reduce_kernel -> every thread, its row's result. block_y_reduce_kernel -> every
//     thread, its column's result.
//   * Nothing here is undefined for a valid launch: no shared slot is read before it is written,
//     and no slot is read and written between the same two barriers (racecheck: clean).
#include "block_reduce.cuh"

// [anchor:block_reduce_kernel]
template <typename T, typename Op>
__global__ void block_reduce_kernel(const T* in, T* out) {
    __shared__ warplab::BlockReduceStorage<T> storage;
    const int i = blockIdx.x * warplab::block_threads() + warplab::block_tid();
    out[i] = warplab::BlockReduce(in[i], Op(), storage);
}
// [end:block_reduce_kernel]

template <typename T, typename Op>
__global__ void block_all_reduce_kernel(const T* in, T* out) {
    __shared__ warplab::BlockReduceStorage<T> storage;
    const int i = blockIdx.x * warplab::block_threads() + warplab::block_tid();
    out[i] = warplab::BlockAllReduce(in[i], Op(), storage);
}

template <typename T, typename Op>
__global__ void block_x_reduce_kernel(const T* in, T* out) {
    __shared__ warplab::BlockXReduceStorage<T> storage;
    const int i = blockIdx.x * warplab::block_threads() + warplab::block_tid();
    out[i] = warplab::BlockXReduce(in[i], Op(), storage);
}

template <typename T, typename Op>
__global__ void block_y_reduce_kernel(const T* in, T* out) {
    __shared__ warplab::BlockYReduceStorage<T> storage;
    const int i = blockIdx.x * warplab::block_threads() + warplab::block_tid();
    out[i] = warplab::BlockYReduce(in[i], Op(), storage);
}

// [anchor:back_to_back_kernel]
// Two BlockReduce calls on one storage struct, with or without a __syncthreads() between them:
// out[2i] = the first call's return value, out[2i + 1] = the second's (thread 0 holds both results).
// Without the barrier, warp w (w >= 1) can reach the second call and overwrite
// warp_aggregates[w] while warp 0 is still reading it for the first call: a write-after-read race,
// which compute-sanitizer racecheck reports whatever the timing of one run.
template <typename T, typename Op, bool Barrier>
__global__ void back_to_back_kernel(const T* first, const T* second, T* out) {
    __shared__ warplab::BlockReduceStorage<T> storage;
    const int i = blockIdx.x * warplab::block_threads() + warplab::block_tid();
    const T a = warplab::BlockReduce(first[i], Op(), storage);
    if (Barrier) __syncthreads();
    const T b = warplab::BlockReduce(second[i], Op(), storage);
    out[2 * i] = a;
    out[2 * i + 1] = b;
}
// [end:back_to_back_kernel]
