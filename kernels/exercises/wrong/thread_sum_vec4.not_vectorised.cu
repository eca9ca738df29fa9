// Known-wrong answer to thread_sum_vec4: a scalar grid-stride loop. The sum is right, but every
// load is 4 bytes (the machine counts them).
__device__ float thread_sum_vec4(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    float sum = 0.0f;
    for (long long i = t; i < n; i += threads) sum += in[i];
    return sum;
}

// expected status: incomplete
// expected feedback: no 16-byte (float4) load
