// Known-wrong answer to block_tree_sum: the barrier inside the if, so only the threads below s
// reach it: a __syncthreads() in divergent code, which the Programming Guide does not allow.
__device__ void block_tree_sum(float* smem, unsigned int tid) {
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            smem[tid] += smem[tid + s];
            __syncthreads();
        }
    }
}

// expected status: hazard
// expected feedback: Barrier reached by only part of a warp at line 7
// expected feedback: not inside a branch
