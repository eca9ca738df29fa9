// Known-wrong answer to block_tree_sum: the first stride is a quarter of the block, so the upper
// half of the values is never added.
__device__ void block_tree_sum(float* smem, unsigned int tid) {
    for (unsigned int s = blockDim.x / 4; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
}

// expected status: wrong_result
// expected feedback: the sum of smem[0..31] only
// expected feedback: s starts at blockDim.x / 2
