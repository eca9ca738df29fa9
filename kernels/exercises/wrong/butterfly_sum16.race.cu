// Known-wrong answer to butterfly_sum16: partners exchange through shared memory with no
// __syncwarp() between the writes and the partner's reads: a race.
__device__ float butterfly_sum16(float v) {
    __shared__ float s[1024];
    const int t = threadIdx.x;
    for (int mask = 8; mask > 0; mask /= 2) {
        s[t] = v;
        v += s[t ^ mask];
    }
    return v;
}

// expected status: hazard
// expected feedback: Race at line 7 and line 8
