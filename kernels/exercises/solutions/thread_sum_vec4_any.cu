// Reference solution of the exercise thread_sum_vec4_any (notebook 06): the head, body and tail of
// v8's thread_sum_vec4 (kernels/reduce_common.cuh), one load in flight.
//
// Contract: __device__ float thread_sum_vec4_any(const float* in, long long n). Every thread of a
// 1D grid calls it; in is any float* into an allocation (4-byte aligned, e.g. x + 1) and holds
// n >= 1 floats. Each thread returns its share of the sum; the shares add up to the sum of
// in[0 .. n): every element read exactly once, none past n. The floats before the first 16-byte
// boundary (the head: 0..3 of them, never more than n) are read one by one; the whole vectors
// after it with float4 loads in a grid-stride loop; the 0..3 floats after the last vector one by one.
__device__ float thread_sum_vec4_any(const float* in, long long n) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long misalign = static_cast<long long>((reinterpret_cast<unsigned long long>(in) / sizeof(float)) % 4);
    const long long head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
    const long long vectors = (n - head) / 4;          // whole float4 vectors after the head
    const float4* body = reinterpret_cast<const float4*>(in + head);   // 16-byte aligned
    float sum = 0.0f;
    for (long long i = t; i < head; i += threads) sum += in[i];
    for (long long i = t; i < vectors; i += threads) {
        const float4 v = body[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    for (long long i = head + 4 * vectors + t; i < n; i += threads) sum += in[i];
    return sum;
}
