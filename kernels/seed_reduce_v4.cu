// The seed's reduce_v4 (5_6_reduce_v4.cu), kernel code as printed, comments translated; only the
// kernel is renamed (reduce_v4 -> seed_reduce_v4) so profiles and sanitizer reports tell it apart
// from ours, and the host code (CUDA runtime includes, main) is dropped so NVRTC can compile it.
// It is here to be timed against reduce_v4.cu and to show its bugs under compute-sanitizer.
//
// The seed launches it with blockSize = 128 (BlockSize / 2) threads and
// GridSize = ceil(N / 256) blocks: each block covers 2 * blockSize elements.
//
// Seed bugs this file keeps on purpose (see kernels/reduce_v4.cu for the corrected kernel):
//   - no bounds check: d_in[gtid] and d_in[gtid + blockSize] are read past the end whenever N is not
//     a multiple of 2 * blockSize (memcheck reports invalid __global__ reads);
//   - 32-bit unsigned indices: gtid overflows past 2^32 elements;
//   - the comment on volatile has the reason backwards: volatile does not make one lane "not see"
//     another's updates; it forces every access to go to shared memory, and it is __syncwarp()
//     that orders the lanes' reads and writes.
// Contract (as printed): blockDim.x == blockSize, a power of two >= 64; N a multiple of
// 2 * blockSize; d_out[blockIdx.x] = the block's sum.

// [anchor:seed_warp_reduce]
__device__ void WarpSharedMemReduce(volatile float* smem, int tid){
    // (seed) "CUDA does not guarantee that all shared-memory reads complete before the writes, so
    // there is a race, e.g. smem[tid] += smem[tid + 16] => smem[0] += smem[16], smem[16] += smem[32]:
    // whether smem[16] is read or written first is undetermined. Hence, after Volta, an intermediate
    // register (x) with __syncwarp and volatile (so that one does not see other threads' updates to
    // smem) to keep the read/write dependence."
    float x = smem[tid];
    if (blockDim.x >= 64) {
        x += smem[tid + 32]; __syncwarp();
        smem[tid] = x; __syncwarp();
    }
    x += smem[tid + 16]; __syncwarp();
    smem[tid] = x; __syncwarp();
    x += smem[tid + 8]; __syncwarp();
    smem[tid] = x; __syncwarp();
    x += smem[tid + 4]; __syncwarp();
    smem[tid] = x; __syncwarp();
    x += smem[tid + 2]; __syncwarp();
    smem[tid] = x; __syncwarp();
    x += smem[tid + 1]; __syncwarp();
    smem[tid] = x; __syncwarp();
}
// [end:seed_warp_reduce]

// [anchor:seed_reduce_v4]
template<int blockSize>
__global__ void seed_reduce_v4(float *d_in, float *d_out){
    __shared__ float smem[blockSize];
    // the thread's index within its block
    unsigned int tid = threadIdx.x;
    // the thread's index over all blocks
    unsigned int gtid = blockIdx.x * (blockSize * 2) + threadIdx.x;
    // load: each thread loads (two) elements into its shared-memory slot -- no bounds check
    smem[tid] = d_in[gtid] + d_in[gtid + blockSize];
    __syncthreads();

    // improves on v3: the last warp reduces on its own, saving __syncthreads
    for (unsigned int index = blockDim.x / 2; index > 32; index >>= 1) {
        if (tid < index) {
            smem[tid] += smem[tid + index];
        }
        __syncthreads();
    }

    // the last warp reduces separately
    if (tid < 32) {
        WarpSharedMemReduce(smem, tid);
    }
    // store: the block's sum, held by thread 0, goes back to global memory
    if (tid == 0) {
        d_out[blockIdx.x] = smem[0];
    }
}
// [end:seed_reduce_v4]
