// Reference solution of the exercise thread_sum_vec4 (notebook 06): the body of v8's
// thread_sum_vec4 (kernels/reduce_common.cuh) for an aligned array, one load in flight.
//
// Contract: __device__ float thread_sum_vec4(const float* in, long long n). Every thread of a 1D
// grid (any blockDim.x, any gridDim.x) calls it; in is 16-byte aligned and holds n >= 1 floats.
// Each thread returns its share of the sum; the shares add up to the sum of in[0 .. n): every
// element is read exactly once, by one thread, none past n. The n / 4 whole vectors are read with
// 16-byte float4 loads in a grid-stride loop (thread t takes vectors t, t + T, t + 2T, ... of
// T = gridDim.x * blockDim.x threads: a warp reads 512 contiguous bytes per load).
__device__ float thread_sum_vec4(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long vectors = n / 4;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float sum = 0.0f;
    for (long long i = t; i < vectors; i += threads) {
        const float4 v = in4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    // The 0..3 floats after the last whole vector, grid-stride too: a grid of fewer than 3 threads
    // (a block of 1 thread, say) still reads every one of them.
    for (long long i = 4 * vectors + t; i < n; i += threads) sum += in[i];
    return sum;
}
