// Known-wrong answer to warp_aggregated_append: one atomicAdd per passing lane. The slots are
// right, but it is not aggregated (the machine counts the atomics).
__device__ int warp_aggregated_append(bool pred, int* counter) {
    if (!pred) return -1;
    return atomicAdd(counter, 1);
}

// expected status: incomplete
// expected feedback: atomic operations
// expected feedback: one per warp that has a passing lane
