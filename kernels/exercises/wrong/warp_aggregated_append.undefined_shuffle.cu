// Known-wrong answer to warp_aggregated_append: the base is read from lane 0 instead of the
// leader. When lane 0 did not pass it is outside the mask (and holds no base): the value that the
// passing lanes receive is undefined.
__device__ int warp_aggregated_append(bool pred, int* counter) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned mask = __ballot_sync(0xffffffffu, pred);
    if (!pred) return -1;
    const int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(mask));
    base = __shfl_sync(mask, base, 0);
    return base + __popc(mask & ((1u << lane) - 1u));
}

// expected status: undefined_result
// expected feedback: line 11
// expected feedback: read lane 0, outside the member mask
