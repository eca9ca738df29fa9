// Known-wrong answer to thread_sum_vec4_any: safe at any address, because it never makes a 16-byte
// load: every element is read as one float (the machine counts the loads).
__device__ float thread_sum_vec4_any(const float* in, long long n) {
    float sum = 0.0f;
    const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
        sum += in[i];
    }
    return sum;
}

// expected status: incomplete
// expected feedback: no 16-byte (float4) load
