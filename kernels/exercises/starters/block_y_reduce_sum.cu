// Every thread of a 2D block calls this; shared has room for blockDim.x * blockDim.y floats.
// Every thread must return the sum of its column (all threads with its threadIdx.x).
// TODO: this is the seed's BlockYReduce (Paddle), made to compile. Fix it: it drops rows when
// blockDim.y is not a power of two, and it races.
__device__ float block_y_reduce_sum(float v, float* shared) {
    shared[threadIdx.y * blockDim.x + threadIdx.x] = v;
    for (int stride = blockDim.y / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (threadIdx.y < stride && threadIdx.y + stride < blockDim.y) {
            v += shared[(threadIdx.y + stride) * blockDim.x + threadIdx.x];
        }
        shared[threadIdx.y * blockDim.x + threadIdx.x] = v;
    }
    __syncthreads();
    return shared[threadIdx.x];
}
