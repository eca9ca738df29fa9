// Known-wrong answer to last_block_sum: the partials written with atomicExch and read with
// atomicAdd(&partials[b], 0.0f), no fences. Atomics never form a data race, but relaxed atomics
// order nothing else: the last block may read a partial's old value (PTX ISA 8.9.5).
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    atomicExch(&partials[blockIdx.x], block_sum);
    if (atomicAdd(done, 1u) != gridDim.x - 1) return;
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += atomicAdd(&partials[b], 0.0f);
    *out = total;
    *done = 0u;
}

// expected status: hazard
// expected feedback: Race at line 5 and line 8: read on global memory (argument 1 byte 0) not ordered after the write
// expected feedback: so this is no data race, but nothing forms an acquire pattern (PTX ISA, Release and Acquire Patterns)
// expected feedback: *out ended undefined
