// Known-wrong answer to warp_aggregated_append: the leader hands the base over in shared memory,
// and the other lanes read it with no __syncwarp() in between: a race.
__device__ int warp_aggregated_append(bool pred, int* counter) {
    __shared__ int bases[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned mask = __ballot_sync(0xffffffffu, pred);
    if (!pred) return -1;
    const int leader = __ffs(mask) - 1;
    if (lane == leader) bases[warp] = atomicAdd(counter, __popc(mask));
    return bases[warp] + __popc(mask & ((1u << lane) - 1u));
}

// expected status: hazard
// expected feedback: Race at line 9 and line 10
// expected feedback: __syncwarp()
