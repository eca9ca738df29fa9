// Known-wrong answer to block_y_reduce_sum: the first stride rounded up, but without the check
// that the partner row exists: with 3 rows, row 1 reads row 3's slot, which nobody wrote.
__device__ float block_y_reduce_sum(float v, float* shared) {
    const int x = threadIdx.x, y = threadIdx.y, width = blockDim.x;
    shared[y * width + x] = v;
    int stride = 1;
    while (stride < blockDim.y) stride *= 2;
    for (stride /= 2; stride > 0; stride /= 2) {
        __syncthreads();
        if (y < stride) {
            v += shared[(y + stride) * width + x];
            shared[y * width + x] = v;
        }
    }
    __syncthreads();
    return shared[x];
}

// expected status: hazard
// expected feedback: Out-of-bounds access at line 11
// expected feedback: no thread has written
