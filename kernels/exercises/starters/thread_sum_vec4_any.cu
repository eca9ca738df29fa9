// As thread_sum_vec4, but in may start anywhere (x + 1, say), and a float4 load needs a 16-byte
// aligned address. Return this thread's share: each element read once, the whole vectors as float4.
__device__ float thread_sum_vec4_any(const float* in, long long n) {
    // How many floats in lies past a 16-byte boundary: 0 .. 3.
    const long long distance = static_cast<long long>((reinterpret_cast<unsigned long long>(in) / 4) % 4);
    float sum = 0.0f;
    // TODO: the floats before the next boundary (the head, never more than n) one by one, the whole
    // vectors after it as float4 in a grid-stride loop, then the 0..3 floats left at the end
    return sum;
}
