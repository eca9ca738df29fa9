// Thread 0 of every block calls this with its block's sum. The block that finishes last must add
// the gridDim.x partial sums into *out, and leave *done at 0 for the next launch.
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    // TODO: order this store before your ticket (a fence orders this thread's own memory accesses),
    // take a ticket from *done (atomicAdd), and let the block that draws the last ticket order its
    // reads after its ticket, then add partials[0 .. gridDim.x) into *out
}
