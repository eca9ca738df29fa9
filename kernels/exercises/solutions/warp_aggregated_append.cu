// Reference solution of the exercise warp_aggregated_append (notebook 01); the same steps as
// warp_aggregated_append in kernels/warp_aggregated.cu, without its count of atomics.
//
// Contract: __device__ int warp_aggregated_append(bool pred, int* counter). All 32 lanes of a full
// warp call it, converged (lanes with no data with pred false). A lane with pred true returns its
// own slot: the passing lanes of a warp get consecutive slots in lane order, and over the launch the
// slots are exactly 0 .. passing - 1, with *counter (0 before) ending at the number of passing lanes.
// One atomic operation per warp that has a passing lane. Lanes with pred false return -1.
__device__ int warp_aggregated_append(bool pred, int* counter) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned mask = __ballot_sync(0xffffffffu, pred);   // every lane votes, before any leaves
    if (!pred) return -1;
    const int leader = __ffs(mask) - 1;                       // the lowest passing lane
    int base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(mask));   // one atomic for the whole warp
    // Only the passing lanes are here, and `mask` names exactly them: a defined shuffle.
    base = __shfl_sync(mask, base, leader);
    return base + __popc(mask & ((1u << lane) - 1u));         // passing lanes below this one
}
