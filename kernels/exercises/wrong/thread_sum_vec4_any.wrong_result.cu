// Known-wrong answer to thread_sum_vec4_any: the vectors start at the first 16-byte boundary, as
// they should, but the floats before it (the head) are never read.
__device__ float thread_sum_vec4_any(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const unsigned long long address = reinterpret_cast<unsigned long long>(in);
    const long long skip = address % 16 == 0 ? 0 : (16 - address % 16) / 4;
    const long long first = skip < n ? skip : n;
    const long long count = (n - first) / 4;
    float sum = 0.0f;
    for (long long i = t; i < count; i += threads) {
        const float4 v = reinterpret_cast<const float4*>(in + first)[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    for (long long i = first + 4 * count + t; i < n; i += threads) sum += in[i];
    return sum;
}

// expected status: wrong_result
// expected feedback: short by exactly the first 1 float (in[0]), before the first 16-byte boundary: add the head
