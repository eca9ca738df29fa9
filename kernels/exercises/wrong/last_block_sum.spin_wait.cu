// Known-wrong answer to last_block_sum: block 0 waits for every other block to take its ticket and
// then adds the partials. Right whenever all blocks run at once, but nothing guarantees that: a GPU
// runs only as many blocks as fit, and blocks must be able to run in series (Programming Guide).
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    atomicAdd(done, 1u);
    if (blockIdx.x != 0) return;
    while (atomicAdd(done, 0u) != gridDim.x) { }
    __threadfence();
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
    *done = 0u;
}

// expected status: incomplete
// expected feedback: block 0 never finished: it waits for a block that may not be running
