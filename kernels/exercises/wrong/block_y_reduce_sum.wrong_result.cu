// Known-wrong answer to block_y_reduce_sum: the race fixed, but the first stride is still
// blockDim.y / 2, so with 3 rows row 2 is never added.
__device__ float block_y_reduce_sum(float v, float* shared) {
    const int x = threadIdx.x, y = threadIdx.y, width = blockDim.x;
    shared[y * width + x] = v;
    for (int stride = blockDim.y / 2; stride > 0; stride /= 2) {
        __syncthreads();
        if (y < stride && y + stride < blockDim.y) {
            v += shared[(y + stride) * width + x];
            shared[y * width + x] = v;
        }
    }
    __syncthreads();
    return shared[x];
}

// expected status: wrong_result
// expected feedback: blockDim = (32, 3)
// expected feedback: the sum of rows 0..1 only
