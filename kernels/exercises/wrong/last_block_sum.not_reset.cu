// Known-wrong answer to last_block_sum: right for one launch, but *done is left at gridDim.x,
// so the next launch that reuses the counter never finds its last block.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    const unsigned int ticket = atomicAdd(done, 1u);
    if (ticket == gridDim.x - 1) {
        __threadfence();
        float total = partials[0];
        for (unsigned int b = 1; b < gridDim.x; ++b) total += partials[b];
        *out = total;
    }
}

// expected status: wrong_result
// expected feedback: *out is right, but *done ended at 1, expected 0
