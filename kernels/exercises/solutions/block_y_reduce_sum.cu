// Reference solution of the exercise block_y_reduce_sum (notebook 04): the seed's BlockYReduce
// fixed, as BlockYReduce in kernels/block_reduce.cuh.
//
// Contract: __device__ float block_y_reduce_sum(float v, float* shared). Every thread of a 2D
// block (blockDim.x * blockDim.y <= 1024, any shape) calls it, converged; shared has room for
// blockDim.x * blockDim.y floats. Every thread returns the sum of its column: the values of all
// threads with its threadIdx.x.
//
// Two fixes. The first stride is half the next power of two >= blockDim.y, so no row is dropped
// when blockDim.y is not a power of two (the seed's blockDim.y / 2 drops one of 3 rows); a row adds
// only a partner that exists. And only the rows that add write their slot: in each phase rows
// [0, stride) write and rows [stride, 2 * stride) are read, so no slot is both read and written
// between two barriers (the seed rewrote every slot, racing with its partner's read).
__device__ float block_y_reduce_sum(float v, float* shared) {
    const int x = threadIdx.x, y = threadIdx.y, width = blockDim.x;
    shared[y * width + x] = v;
    int stride = 1;
    while (stride < blockDim.y) stride *= 2;
    for (stride /= 2; stride > 0; stride /= 2) {
        __syncthreads();
        if (y < stride && y + stride < blockDim.y) {
            v += shared[(y + stride) * width + x];
            shared[y * width + x] = v;
        }
    }
    __syncthreads();
    return shared[x];   // row 0 holds every column's sum
}
