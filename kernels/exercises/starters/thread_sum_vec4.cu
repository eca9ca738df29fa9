// Every thread of the grid calls this; in is 16-byte aligned and holds n floats. Return this
// thread's share of the sum: each element read once, the whole vectors with float4 loads.
__device__ float thread_sum_vec4(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    float sum = 0.0f;
    // TODO: read the n / 4 whole vectors as float4 in a grid-stride loop, then the 0..3 left over
    for (long long i = t; i < n; i += threads) sum += in[i];   // scalar: right, but not vectorised
    return sum;
}
