// Harness of the exercise last_warp_sum: reduce_v4 around the learner's function. Each block of
// BLOCK = blockDim.x threads (a power of two in [64, 1024]) stores one value per thread in dynamic
// shared memory and runs v4's tree down to 64 partial sums, slot j then holding the sum of the
// block's values j, j + 64, j + 128, ...; warp 0 calls the learner's function, and thread 0 stores
// smem[0].
extern "C" __global__ void last_warp_sum_harness(const float* in, float* out) {
    extern __shared__ float smem[];
    const unsigned int tid = threadIdx.x;
    smem[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    if (tid < 32) last_warp_sum(smem, tid);
    if (tid == 0) out[blockIdx.x] = smem[0];
}
