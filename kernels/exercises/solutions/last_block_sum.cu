// Reference solution of the exercise last_block_sum (notebook 07): the last-block-done finish of
// reduce_onepass (kernels/reduce_onepass.cu), done by thread 0 alone.
//
// Contract: __device__ void last_block_sum(float block_sum, float* partials, unsigned int* done,
// float* out). Thread 0 of every block of a 1D grid calls it with its block's sum; partials holds
// gridDim.x floats, *done is 0 at launch. Afterwards *out holds the sum of the gridDim.x block
// sums, and *done is 0 again (ready for the next launch).
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();                                   // release: the partial before the ticket
    const unsigned int ticket = atomicAdd(done, 1u);   // the old count: 0 .. gridDim.x - 1
    if (ticket != gridDim.x - 1) return;               // not the last block to finish
    __threadfence();                                   // acquire: every other block's partial
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];   // index order: same bits every run
    *out = total;
    *done = 0u;                                        // every block has taken its ticket
}
