// Known-wrong answer to thread_sum_vec4_any: thread_sum_vec4's loop, as if in were 16-byte aligned.
// At in = x + 1 every float4 load is 4 bytes off a 16-byte boundary (the machine reports it; PTX
// ISA 6.4.1: undefined, the load may fault or silently round the address down).
__device__ float thread_sum_vec4_any(const float* in, long long n) {
    const float4* v4 = reinterpret_cast<const float4*>(in);
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (long long k = i; k < n / 4; k += stride) s += v4[k].x + v4[k].y + v4[k].z + v4[k].w;
    for (long long k = 4 * (n / 4) + i; k < n; k += stride) s += in[k];
    return s;
}

// expected status: hazard
// expected feedback: Misaligned access at line 9
// expected feedback: A 16-byte load (float4) needs an address that is a multiple of 16 bytes
