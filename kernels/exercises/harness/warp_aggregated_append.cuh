// Harness of the exercise warp_aggregated_append: a stream compaction of the flagged elements.
// Whole warps call the learner's function, lanes past n with pred false (so a ballot with the full
// mask is right in every warp); each element's slot is stored (-1 where its flag is 0).
extern "C" __global__ void warp_aggregated_append_harness(const int* flags, int n, int* counter, int* slots) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool pred = i < n && flags[i] != 0;
    const int slot = warp_aggregated_append(pred, counter);
    if (i < n) slots[i] = pred ? slot : -1;
}
