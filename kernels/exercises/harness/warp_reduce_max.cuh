// Harness of the exercise warp_reduce_max: compiled after the learner's cell, it calls their
// function from every thread of full warps (blockDim.x a multiple of 32) and stores what each
// thread got; the checker reads lane 0 of every warp.
extern "C" __global__ void warp_reduce_max_harness(const float* in, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = warp_reduce_max(in[i]);
}
