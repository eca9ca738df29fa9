// Known-wrong answer to last_block_sum: the Programming Guide's Memory Fence Functions sample
// (volatile partials, the writers' __threadfence(), atomicInc, and no fence after it). Volatile
// accesses are strong, so this is no data race, but nothing forms an acquire pattern in the last
// block (PTX ISA, Release and Acquire Patterns): its reads may return the old partials.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    volatile float* p = partials;
    p[blockIdx.x] = block_sum;
    __threadfence();
    const unsigned int value = atomicInc(done, gridDim.x);
    if (value == gridDim.x - 1) {
        float total = 0.0f;
        for (unsigned int b = 0; b < gridDim.x; ++b) total += p[b];
        *out = total;
        *done = 0u;
    }
}

// expected status: hazard
// expected feedback: Race at line 7 and line 12: read on global memory (argument 1 byte 0) not ordered after the write
// expected feedback: Both accesses are volatile, so this is no data race
// expected feedback: The Programming Guide's Memory Fence Functions example has no fence after atomicInc
