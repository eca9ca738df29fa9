// Known-wrong answer to thread_sum_vec4: the float4 loop without the tail, so the last n % 4
// floats are never added.
__device__ float thread_sum_vec4(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float sum = 0.0f;
    for (long long i = t; i < n / 4; i += threads) {
        const float4 v = in4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    return sum;
}

// expected status: wrong_result
// expected feedback: short by exactly the last 1 float (in[0])
