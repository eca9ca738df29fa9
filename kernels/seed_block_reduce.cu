// The seed article's warp and block reductions (PyTorch's WarpReduceSum and BlockReduceSum,
// Paddle's WarpReduce, BlockXReduce and BlockYReduce), changed only as far as needed to compile,
// so their logic bugs can be run and seen. As printed, BlockXReduce and BlockYReduce do not
// compile: kernels/seed_as_printed/ keeps that text, and helpers.block_reduce.seed_compile_error
// shows NVRTC's error. The two changes are marked "SEED FIX". The corrected versions live in
// warp_reduce.cuh and block_reduce.cuh.
//
// Contract of the kernels (what they promise, and where the seed breaks its own promise):
//   * One tile of n = blockDim.x * blockDim.y values per block; thread (x, y) loads element
//     y * blockDim.x + x of its block's tile and writes what it returns to the same place in out.
//   * seed_block_reduce_sum_kernel: 1D blocks. Only thread 0 holds the result; it is the block's
//     sum only when blockDim.x is a multiple of 32 (otherwise the tail warp is dropped: 48 ones
//     give 32). A partial tail warp's full-mask shuffles read lanes that do not exist: undefined
//     values, which the seed then never reads.
//   * seed_warp_reduce_kernel: full, converged warps; lane 0 holds the result (there
//     __ballot_sync(FULL, true) is just the full mask).
//   * seed_block_x_reduce_kernel: every thread returns shared[threadIdx.y], its row's result
//     only when blockDim.x is a power of two <= 32, or 32 times a power of two. Otherwise rows
//     borrow other rows' values ((96, 2): row 0 gets 128 from 96 ones) and reads of shared slots
//     no thread wrote (undefined). The host refuses blockDim.y > 64: shared[threadIdx.y] would
//     be written past the end of the seed's 64-slot array.
//   * seed_block_y_reduce_kernel: every thread returns its column's result, which drops rows
//     when blockDim.y is not a power of two ((32, 3) -> 2, (32, 5) -> 4); inside the loop a
//     thread reads the slot its partner row rewrites between the same two barriers: a data race
//     (racecheck reports it), although the value rewritten is the one already there.
//   * seed_partial_warp_kernel: the ballot-mask way to reduce fewer than 32 values: only lanes
//     < n_valid call, with mask = __ballot_sync(FULL, lane < n_valid). A lane whose source lane
//     is >= n_valid (but inside the warp) reads a lane outside the mask: undefined. Lanes >=
//     n_valid write nothing. Build with -DWARPLAB_TRACE to record every step.
#include "warp_reduce.cuh"   // warplab::ops::Sum and the other operators the kernels are instantiated with

namespace seed {

#define FULL_WARP_MASK 0xFFFFFFFF

#define CREATE_SHFL_MASK(mask, predicate) \
  mask = __ballot_sync(FULL_WARP_MASK, (predicate))

template <typename T>
__forceinline__ __device__ T CudaShuffleDownSync(unsigned mask, T val, int delta, int width = warpSize) {
  return __shfl_down_sync(mask, val, static_cast<unsigned>(delta), width);
}

// [anchor:seed_warp_reduce_sum]
// Sums `val` accross all threads in a warp.
//
// Assumptions:
//   - The size of each block should be a multiple of `warpSize`
template <typename T>
__inline__ __device__ T WarpReduceSum(T val) {
#pragma unroll
  for (int offset = (warpSize >> 1); offset > 0; offset >>= 1) {
    val += __shfl_down_sync(0xffffffff, val, offset, warpSize);
  }
  return val;
}
// [end:seed_warp_reduce_sum]

// [anchor:seed_block_reduce_sum]
// Sums `val` accross all threads in a block.
//
// Assumptions:
//   - Thread blocks are an 1D set of threads (indexed with `threadIdx.x` only)
//   - The size of each block should be a multiple of `warpSize`
//   - `shared` should be a pointer to shared memory with size of, at least,
//     `sizeof(T) * number_of_warps`
template <typename T>
__inline__ __device__ T BlockReduceSum(T val, T* shared) {
  const int laneid = threadIdx.x % warpSize;
  const int warpid = threadIdx.x / warpSize;
  val = WarpReduceSum(val);
  __syncthreads();
  if (laneid == 0) {
    shared[warpid] = val;
  }
  __syncthreads();
  val = (threadIdx.x < blockDim.x / warpSize) ? shared[laneid] : T(0);
  if (warpid == 0) {
    val = WarpReduceSum(val);
  }
  return val;
}
// [end:seed_block_reduce_sum]

// [anchor:seed_warp_reduce]
constexpr int kWarpSize = 32;

// ReduceOp 可以是任何 Binary Op, e.g sum, or, and
template <typename T, typename ReduceOp>
__device__ __forceinline__ T WarpReduce(T val, ReduceOp reducer) {
  unsigned mask = 0u;
  mask = __ballot_sync(0xFFFFFFFF, true);

  for (int stride = kWarpSize / 2; stride > 0; stride >>= 1) {
    T temp = __shfl_down_sync(mask, val, stride);
    val = reducer(val, temp);
  }
  return val;
}
// [end:seed_warp_reduce]

// [anchor:seed_block_x_reduce]
/**
 * @brief BlockXReduce reduce along blockDim.x.
 * blockDim.y不变，返回 threadIdx.y 行规约后的结果。
 */
template <typename T, typename ReduceOp>
__device__ __forceinline__ T BlockXReduce(T val, ReduceOp reducer) {
  __syncthreads();
  constexpr int kWarpSize = 32;  // SEED FIX: printed as `using kWarpSize;`, which does not compile
  // 最多可以处理 2*warpSize 个 warp。
  __shared__ T shared[2 * kWarpSize];

  int block_dim_x = blockDim.x;

  if (blockDim.x > kWarpSize) {
    // blockDim.x 大于 warpSize 时。即，不能在一个warpReduce内完成所有数的规约。

    // Bit operation can be used when kWarpSize is 32 or 64 now
    // kWarpSize==32, rshift_val=5; 2^5 = 32
    // kWarpSize==64, rshift_val=6; 2^6 = 64
    // other, rshift_val = 5; 2^5 = 32
    constexpr int rshift_val =
        (kWarpSize != 32) ? ((kWarpSize == 64) ? 6 : 5) : 5;

    // x 方向上包含多少个warp，
    // 即 block_dim_x = blockDim.x / warpSize
    block_dim_x = blockDim.x >> rshift_val;

    // lane = threadIdx.x % kWarpSize
    int lane = threadIdx.x & (kWarpSize - 1);

    int tid = threadIdx.y * blockDim.x + threadIdx.x;
    // warp id
    int wid = tid >> rshift_val;
    // row id = block id
    int bid = threadIdx.y;

    val = WarpReduce(val, reducer);
    if (lane == 0) {
      // warp id
      shared[wid] = val;
    }
    __syncthreads();

    // 为 <2> WarpReduce 加载数据。y方向shape不变，x方向缩减为warp的个数
    val = shared[bid * block_dim_x + lane];
  }

  // <2> WarpReduce, 在一个warp内可以完成规约。
  unsigned mask = 0u;
  CREATE_SHFL_MASK(mask, true);
  for (int stride = 1; stride < block_dim_x; stride <<= 1) {
    T temp = CudaShuffleDownSync(mask, val, stride);
    val = reducer(val, temp);
  }
  __syncthreads();

  // x方向结果规约到 threadIdx.x，并根据行号threadIdx.y保存数据。
  // 即，矩阵按行规约。
  if (threadIdx.x == 0) {
    shared[threadIdx.y] = val;
  }
  __syncthreads();

  // 返回对应行的规约结果。
  return shared[threadIdx.y];
}
// [end:seed_block_x_reduce]

// [anchor:seed_block_y_reduce]
/**
 * @brief Will be used in BlockYReduce, get the index of reduce_num in shared  memory.
 */
__device__ __forceinline__ int SharedMemoryIndex(int stride) {
  return (threadIdx.y + stride) * blockDim.x + threadIdx.x;
}

/**
 * @brief BlockYReduce reduce along blockDim.y.
 */
template <typename T, typename ReduceOp>
__device__ __forceinline__ T BlockYReduce(T val, ReduceOp reducer) {
  // block 中的线程数最多1024 = 32*32
  __shared__ T shared_memory[1024];

  // block 中的数加载到 shared memory中。
  shared_memory[SharedMemoryIndex(0)] = val;

  for (int stride = blockDim.y / 2; stride > 0; stride >>= 1) {
    __syncthreads();

    if (threadIdx.y < stride && threadIdx.y + stride < blockDim.y) {  // SEED FIX: the `{` was missing
      // reduce threadIdx.y and threadIdx.y + stride
      T temp = shared_memory[SharedMemoryIndex(stride)];
      val = reducer(val, temp);
    }

    shared_memory[SharedMemoryIndex(0)] = val;
  }
  __syncthreads();


  // 获取按列规约后的结果，即row0的结果。
  return shared_memory[threadIdx.x];
}
// [end:seed_block_y_reduce]

}  // namespace seed

template <typename T>
__global__ void seed_block_reduce_sum_kernel(const T* in, T* out) {
  __shared__ T shared[32];   // one slot per warp, up to 1024 threads
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = seed::BlockReduceSum(in[i], shared);
}

template <typename T, typename Op>
__global__ void seed_warp_reduce_kernel(const T* in, T* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = seed::WarpReduce(in[i], Op());
}

template <typename T, typename Op>
__global__ void seed_block_x_reduce_kernel(const T* in, T* out) {
  const int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
  out[i] = seed::BlockXReduce(in[i], Op());
}

template <typename T, typename Op>
__global__ void seed_block_y_reduce_kernel(const T* in, T* out) {
  const int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
  out[i] = seed::BlockYReduce(in[i], Op());
}

// [anchor:seed_partial_warp]
// The seed's way to reduce n_valid < 32 values: shrink the mask with a ballot, and let only the
// lanes in it shuffle. Lane l reads lane l + offset, which for l + offset >= n_valid is outside
// the mask: that value is undefined, and it is added in anyway.
template <typename T, typename Op>
__global__ void seed_partial_warp_kernel(const T* in, int n_valid, T* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % 32;
  const unsigned mask = __ballot_sync(FULL_WARP_MASK, lane < n_valid);
  if (lane < n_valid) {
    T val = in[i];
    WARPLAB_TRACE_STEP(0, val, val, lane);
    int step = 1;
    for (int offset = 16; offset > 0; offset /= 2, ++step) {
      const T other = __shfl_down_sync(mask, val, offset);
      WARPLAB_TRACE_STEP(step, Op()(val, other), other, __shfl_down_sync(mask, lane, offset));
      val = Op()(val, other);
    }
    out[i] = val;
  }
}
// [end:seed_partial_warp]
