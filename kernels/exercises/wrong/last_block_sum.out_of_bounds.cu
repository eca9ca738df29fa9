// Known-wrong answer to last_block_sum: the last block is found right, but its loop runs to
// b <= gridDim.x and reads one partial past the end of the array.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    if (atomicAdd(done, 1u) + 1 == gridDim.x) {
        __threadfence();
        *out = 0.0f;
        for (unsigned int b = 0; b <= gridDim.x; ++b) *out += partials[b];
        *done = 0u;
    }
}

// expected status: hazard
// expected feedback: Out-of-bounds access at line 9
// expected feedback: byte offset 4 of argument 1 (4 bytes)
