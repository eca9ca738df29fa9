// Known-wrong answer to block_tree_sum: no barrier between the steps, so a thread may read
// smem[tid + s] before the thread that owns it has written its sum of the previous step: a race.
__device__ void block_tree_sum(float* smem, unsigned int tid) {
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
    }
}

// expected status: hazard
// expected feedback: Race at line 5
// expected feedback: RAW race on shared memory
