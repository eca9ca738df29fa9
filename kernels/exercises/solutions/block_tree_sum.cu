// Reference solution of the exercise block_tree_sum (notebook 05): reduce_v2's tree, sequential
// addressing.
//
// Contract: __device__ void block_tree_sum(float* smem, unsigned int tid). Every thread of a 1D
// block calls it (tid = threadIdx.x), after smem[tid] holds its value and the block has passed a
// barrier; blockDim.x is a power of two from 64 to 1024. Once every thread has returned (and passed
// the caller's barrier), smem[0] holds the sum of the blockDim.x values; other slots may hold anything.
//
// Each step halves the number of live partial sums: thread tid < s adds smem[tid + s] into
// smem[tid]. The barrier after each step is outside the if, so every thread of the block reaches
// it, and it orders each step's writes before the next step's reads.
__device__ void block_tree_sum(float* smem, unsigned int tid) {
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
}
