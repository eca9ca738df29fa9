// Known-wrong answer to block_y_reduce_sum: the seed's BlockYReduce as it is (the starter): every
// row rewrites its slot in every phase, while its partner row may be reading it: a race. (It
// also drops rows when blockDim.y is not a power of two.)
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

// expected status: hazard
// expected feedback: Race at line 9
// expected feedback: WAR race on shared memory
// expected feedback: rows 0..1 only
