// Known-wrong answer to warp_reduce_max: a tree in shared memory with no __syncwarp() between one
// lane's write and another lane's read (the pre-Volta "warp-synchronous" idiom): a race.
__device__ float warp_reduce_max(float v) {
    __shared__ float s[1024];
    const int t = threadIdx.x, lane = t % 32;
    s[t] = v;
    for (int offset = 16; offset > 0; offset /= 2) {
        if (lane < offset) s[t] = fmaxf(s[t], s[t + offset]);
    }
    return s[t];
}

// expected status: hazard
// expected feedback: Race at line 6 and line 8
// expected feedback: returned an undefined value
