// Known-wrong answer to last_block_sum: both fences, but the last block reads the partials with
// __ldg, the non-coherent read-only path, which the memory model does not cover (PTX ISA 8.1): no
// fence orders it after the other blocks' writes.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    if (atomicAdd(done, 1u) != gridDim.x - 1) return;
    __threadfence();
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += __ldg(&partials[b]);
    *out = total;
    *done = 0u;
}

// expected status: hazard
// expected feedback: Race at line 5 and line 10: read through the non-coherent read-only path
// expected feedback: fences do not order it (PTX ISA 8.1)
// expected feedback: *out ended undefined
