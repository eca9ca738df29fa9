// Harness of the exercise thread_sum_vec4_any: as thread_sum_vec4's, but the learner's function
// gets in + offset: the array as allocated (16-byte aligned, exactly offset + n floats) seen from
// float `offset` (0..3), like a slice x[offset:] of a CuPy array. Every thread of a 1D grid stores
// its share; the checker adds the shares in float64 and counts the machine's 16-byte loads.
extern "C" __global__ void thread_sum_vec4_any_harness(const float* in, long long n, float* partial, int offset) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    partial[t] = thread_sum_vec4_any(in + offset, n);
}
