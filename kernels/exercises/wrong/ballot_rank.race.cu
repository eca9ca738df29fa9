// Known-wrong answer to ballot_rank: the votes go through shared memory, and nothing orders one
// lane's write before the other lanes' reads (no __syncwarp()): a race.
__device__ int ballot_rank(bool pred) {
    __shared__ int s[1024];
    const int t = threadIdx.x, first = t - t % 32;
    s[t] = pred ? 1 : 0;
    int below = 0;
    for (int j = first; j < t; ++j) below += s[j];
    return below;
}

// expected status: hazard
// expected feedback: Race at line 6 and line 8
// expected feedback: RAW race on shared memory
