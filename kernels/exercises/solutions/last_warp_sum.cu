// Reference solution of the exercise last_warp_sum (notebook 05): v4's last warp, the same steps
// as warp_reduce_smem in kernels/reduce_common.cuh.
//
// Contract: __device__ void last_warp_sum(volatile float* smem, unsigned int tid). The 32 lanes of
// warp 0 call it (tid = threadIdx.x = 0..31), converged, after a __syncthreads(); smem[0 .. 64)
// holds 64 partial sums. Afterwards smem[0] holds their sum; the other slots may hold anything.
//
// Since Volta the lanes of a warp do not run in lockstep, so each step reads into a register,
// waits at __syncwarp() until every lane has read, writes, and waits again before the next read.
// `volatile` alone orders nothing between lanes.
__device__ void last_warp_sum(volatile float* smem, unsigned int tid) {
    float x = smem[tid];
    for (int offset = 32; offset > 0; offset /= 2) {
        x += smem[tid + offset];
        __syncwarp();
        smem[tid] = x;
        __syncwarp();
    }
}
