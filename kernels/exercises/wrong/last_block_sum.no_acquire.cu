// Known-wrong answer to last_block_sum: the writers' fence (release) without the last block's
// (acquire). Each block fences its partial's store before its ticket, but nothing orders the last
// block's reads after the atomic that told it it was last.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    const bool last = atomicAdd(done, 1u) == gridDim.x - 1;
    if (!last) return;
    float sum = 0.0f;
    for (int b = 0; b < (int)gridDim.x; b++) sum += partials[b];
    *out = sum;
    *done = 0;
}

// expected status: hazard
// expected feedback: Race at line 5 and line 10
// expected feedback: the reader's __threadfence() after the atomic
