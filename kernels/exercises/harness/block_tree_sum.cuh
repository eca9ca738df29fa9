// Harness of the exercise block_tree_sum: reduce_v2 around the learner's function. Each block of
// blockDim.x threads (a power of two in [64, 1024]) stores one value per thread in dynamic shared
// memory, passes a barrier, calls the learner's function, passes another barrier, and thread 0
// stores smem[0].
extern "C" __global__ void block_tree_sum_harness(const float* in, float* out) {
    extern __shared__ float smem[];
    const unsigned int tid = threadIdx.x;
    smem[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    block_tree_sum(smem, tid);
    __syncthreads();
    if (tid == 0) out[blockIdx.x] = smem[0];
}
