// Known-wrong answer to last_block_sum: both fences, but the ticket is drawn with atomicAdd_block,
// which is atomic only among the threads of one block (Programming Guide, Atomic Functions): two
// blocks may draw the same ticket, and a block-scope atomic orders nothing across blocks.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    const unsigned int ticket = atomicAdd_block(done, 1u);
    if (ticket != gridDim.x - 1) return;
    __threadfence();
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
    *done = 0u;
}

// expected status: hazard
// expected feedback: Race at line 7: atomics of two blocks on one word of global memory
// expected feedback: A _block atomic is atomic only among the threads of its own block
// expected feedback: Race at line 5 and line 11
