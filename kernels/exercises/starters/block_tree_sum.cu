// Every thread of the block calls this, after smem[tid] holds its value and a barrier. Afterwards
// smem[0] must hold the sum of the blockDim.x values (a power of two from 64 to 1024).
__device__ void block_tree_sum(float* smem, unsigned int tid) {
    // TODO: reduce_v2's tree: s from blockDim.x / 2 down to 1, threads below s add smem[tid + s],
    // and a barrier after each step that every thread reaches
}
