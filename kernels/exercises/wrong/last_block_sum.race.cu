// Known-wrong answer to last_block_sum: the ticket without any __threadfence(). A plain atomicAdd
// is relaxed: atomic, but it orders nothing around it, so the last block may read partials that
// the other blocks wrote but had not yet made visible (the machine reports the race).
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    if (atomicAdd(done, 1u) == gridDim.x - 1) {
        float total = 0.0f;
        for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
        *out = total;
        *done = 0u;
    }
}

// expected status: hazard
// expected feedback: Race at line 5 and line 8
// expected feedback: RAW race on global memory
// expected feedback: *out ended undefined
