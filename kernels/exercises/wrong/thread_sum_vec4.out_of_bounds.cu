// Known-wrong answer to thread_sum_vec4: the vector count rounded up, so the last float4 load
// reads past the end of the array (the missing floats "count as zero" only in the author's head).
__device__ float thread_sum_vec4(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float sum = 0.0f;
    for (long long i = t; i < (n + 3) / 4; i += threads) {
        const float4 v = in4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    return sum;
}

// expected status: hazard
// expected feedback: Out-of-bounds access at line 9
