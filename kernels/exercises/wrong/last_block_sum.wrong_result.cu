// Known-wrong answer to last_block_sum: atomicAdd taken to return the count after this block's
// add, so the last block is looked for at ticket gridDim.x, which no block draws: no block stores
// the total.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    unsigned int count = atomicAdd(done, 1u);
    if (count == gridDim.x) {
        __threadfence();
        float total = 0.0f;
        for (unsigned int b = 0; b < count; ++b) {
            total += partials[b];
        }
        *out = total;
        *done = 0u;
    }
}

// expected status: wrong_result
// expected feedback: *out still holds NaN, its value at launch
// expected feedback: the last block to finish draws gridDim.x - 1 = 0
