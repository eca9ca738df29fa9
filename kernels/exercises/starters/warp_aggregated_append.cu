// All 32 lanes call this. A lane with pred true returns its slot; one atomicAdd per warp.
__device__ int warp_aggregated_append(bool pred, int* counter) {
    // TODO: a ballot, a leader (__ffs), one atomicAdd of __popc(ballot), the base shared with
    // __shfl_sync, and each passing lane's rank among the passing lanes
    if (!pred) return -1;
    return atomicAdd(counter, 1);   // a slot each, but one atomic per passing lane (and in no defined lane order)
}
