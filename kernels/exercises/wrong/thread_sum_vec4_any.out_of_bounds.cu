// Known-wrong answer to thread_sum_vec4_any: the head is 4 - distance floats even when the array
// is shorter than that, so a short array at x + 1 is read past its end.
__device__ float thread_sum_vec4_any(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const int distance = static_cast<int>((reinterpret_cast<unsigned long long>(in) / 4) % 4);
    const long long head = distance ? 4 - distance : 0;
    float sum = 0.0f;
    for (long long i = t; i < head; i += threads) sum += in[i];
    const long long vectors = n > head ? (n - head) / 4 : 0;
    const float4* body = reinterpret_cast<const float4*>(in + head);
    for (long long i = t; i < vectors; i += threads) {
        const float4 v = body[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    for (long long i = head + 4 * vectors + t; i < n; i += threads) sum += in[i];
    return sum;
}

// expected status: hazard
// expected feedback: Out-of-bounds access at line 9
// expected feedback: byte offset 12 of argument 0 (12 bytes)
// expected feedback: in = x + 1, so byte offset b of argument 0 is in[b/4 - 1]; the allocation holds 3 floats, so in[1] is the last
