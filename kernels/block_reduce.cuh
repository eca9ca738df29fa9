// Block-level reductions: warps reduce in registers, shared memory carries what crosses warps,
// __syncthreads() separates the phases.
//
// Contract (every function here):
//   * Called by every thread of the block, from converged code (they contain __syncthreads()).
//   * Any block shape with 1 <= blockDim.x * blockDim.y <= 1024 (blockDim.z == 1); sizes that are
//     not multiples of 32 and dimensions that are not powers of two included. Threads are
//     numbered tid = threadIdx.y * blockDim.x + threadIdx.x, and hardware warps are tids 32w..32w+31,
//     so a warp may hold the end of one row and the start of the next.
//   * Who holds the result: BlockReduce -> thread 0 only (other threads return partial results
//     no one should read); BlockAllReduce -> every thread; BlockXReduce -> every thread gets its
//     row's result (op over x); BlockYReduce -> every thread gets its column's result (op over y).
//   * Storage lives in shared memory and is passed in by the caller (one struct per function).
//     Before reusing it for anything else, the caller needs a __syncthreads(): threads may still
//     be reading it when the function returns in another thread.
#pragma once
#include "warp_reduce.cuh"

namespace warplab {

constexpr int kMaxBlockThreads = 1024;

// Linear thread index and thread count of a 2D block.
__device__ __forceinline__ int block_tid() { return threadIdx.y * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int block_threads() { return blockDim.x * blockDim.y; }

// Lanes of this thread's hardware warp that exist: 32, except in a partial tail warp.
__device__ __forceinline__ int warp_lanes() {
    return min(kWarpSize, block_threads() - block_tid() / kWarpSize * kWarpSize);
}

template <typename T>
struct BlockReduceStorage {
    T warp_aggregates[kWarpSize];   // slot w: warp w's result (only ceil(threads / 32) are written)
    T block_aggregate;              // BlockAllReduce's broadcast slot
};

// [anchor:block_reduce]
// Phase 1: every warp reduces its lanes; lane 0 writes the warp's result to shared memory.
// Phase 2 (after the barrier): warp 0 reads one slot per warp, pads the rest with the identity,
// and reduces again. Only thread 0 holds the block's result.
template <typename T, typename Op>
__device__ T BlockReduce(T val, Op op, BlockReduceStorage<T>& storage) {
    const int tid = block_tid();
    const int lane = tid % kWarpSize, warp = tid / kWarpSize;
    const int n_warps = (block_threads() + kWarpSize - 1) / kWarpSize;   // the tail warp counts
    val = WarpReducePartial(val, op, warp_lanes());
    if (lane == 0) storage.warp_aggregates[warp] = val;
    __syncthreads();
    if (warp == 0) {
        val = lane < n_warps ? storage.warp_aggregates[lane] : Op::identity();
        val = WarpReducePartial(val, op, warp_lanes());
    }
    return val;
}
// [end:block_reduce]

// [anchor:block_all_reduce]
// BlockReduce, then thread 0 broadcasts through shared memory: every thread gets the result.
template <typename T, typename Op>
__device__ T BlockAllReduce(T val, Op op, BlockReduceStorage<T>& storage) {
    val = BlockReduce(val, op, storage);
    if (block_tid() == 0) storage.block_aggregate = val;
    __syncthreads();
    return storage.block_aggregate;
}
// [end:block_all_reduce]

template <typename T>
struct BlockXReduceStorage {
    T values[kMaxBlockThreads];          // every thread's value, at its tid
    T row_aggregates[kMaxBlockThreads];  // slot y: row y's result (blockDim.y <= 1024 rows)
};

// [anchor:block_x_reduce]
// Reduce along x: every thread gets op over its row. Rows need not line up with warps, so the
// values go through shared memory: each warp takes whole rows (row = warp, warp + n_warps, ...),
// its lanes stride along the row, then the warp reduces what its lanes gathered.
template <typename T, typename Op>
__device__ T BlockXReduce(T val, Op op, BlockXReduceStorage<T>& storage) {
    const int tid = block_tid();
    const int lane = tid % kWarpSize, warp = tid / kWarpSize;
    const int n_warps = (block_threads() + kWarpSize - 1) / kWarpSize;
    const int lanes = warp_lanes();
    storage.values[tid] = val;
    __syncthreads();
    for (int row = warp; row < blockDim.y; row += n_warps) {    // the same trip count in a warp
        T acc = Op::identity();
        for (int x = lane; x < blockDim.x; x += lanes) acc = op(acc, storage.values[row * blockDim.x + x]);
        acc = WarpReducePartial(acc, op, lanes);
        if (lane == 0) storage.row_aggregates[row] = acc;
    }
    __syncthreads();
    return storage.row_aggregates[threadIdx.y];
}
// [end:block_x_reduce]

template <typename T>
struct BlockYReduceStorage {
    T values[kMaxBlockThreads];   // thread (x, y) at y * blockDim.x + x
};

// [anchor:block_y_reduce]
// Reduce along y: every thread gets op over its column. A tree over the rows in shared memory:
// the first stride is half the next power of two >= blockDim.y, and a row combines only with a
// partner that exists. In each phase rows [0, stride) write and rows [stride, 2 * stride) are
// read, so no slot is both read and written between two barriers.
template <typename T, typename Op>
__device__ T BlockYReduce(T val, Op op, BlockYReduceStorage<T>& storage) {
    const int x = threadIdx.x, y = threadIdx.y, width = blockDim.x;
    storage.values[y * width + x] = val;
    int stride = 1;
    while (stride < blockDim.y) stride *= 2;
    for (stride /= 2; stride > 0; stride /= 2) {
        __syncthreads();
        if (y < stride && y + stride < blockDim.y) {
            val = op(val, storage.values[(y + stride) * width + x]);
            storage.values[y * width + x] = val;
        }
    }
    __syncthreads();
    return storage.values[x];   // row 0 holds every column's result
}
// [end:block_y_reduce]

}  // namespace warplab
