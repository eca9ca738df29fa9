// Harness of the exercise segment_sum16: every thread of full warps calls the learner's function
// and stores what it got; the checker reads lanes 0 and 16 of every warp.
extern "C" __global__ void segment_sum16_harness(const float* in, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = segment_sum16(in[i]);
}
