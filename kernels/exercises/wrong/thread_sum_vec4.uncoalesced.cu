// Known-wrong answer to thread_sum_vec4: float4 loads, but each thread takes a contiguous chunk
// of vectors, so the lanes of a warp read far apart (uncoalesced; the machine counts the sectors).
__device__ float thread_sum_vec4(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long vectors = n / 4;
    const long long chunk = (vectors + threads - 1) / threads;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float sum = 0.0f;
    for (long long i = t * chunk; i < (t + 1) * chunk && i < vectors; ++i) {
        const float4 v = in4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    for (long long i = 4 * vectors + t; i < n; i += threads) sum += in[i];   // the tail, grid-stride
    return sum;
}

// expected status: incomplete
// expected feedback: sectors per warp request
// expected feedback: needs 16
