// Harness of the exercise thread_sum_vec4: every thread of a 1D grid calls the learner's function
// on the same array (16-byte aligned, n floats) and stores its share; the checker adds the shares
// in float64 and counts the machine's 16-byte loads.
extern "C" __global__ void thread_sum_vec4_harness(const float* in, long long n, float* partial) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    partial[t] = thread_sum_vec4(in, n);
}
