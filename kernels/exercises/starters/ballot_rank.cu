// All 32 lanes call this. Every lane returns how many lanes below it (lower lane numbers) have pred true.
__device__ int ballot_rank(bool pred) {
    // TODO: one __ballot_sync of pred, then __popc of the bits of the lanes below this one
    return 0;
}
