// Known-wrong answer to segment_sum16: a shared-memory tree per segment with no __syncwarp()
// between one lane's write and another lane's read: a race.
__device__ float segment_sum16(float v) {
    __shared__ float s[1024];
    const int t = threadIdx.x, lane = t % 16;
    s[t] = v;
    for (int offset = 8; offset > 0; offset /= 2) {
        if (lane < offset) s[t] += s[t + offset];
    }
    return s[t];
}

// expected status: hazard
// expected feedback: Race at line 6 and line 8
// expected feedback: RAW race on shared memory
