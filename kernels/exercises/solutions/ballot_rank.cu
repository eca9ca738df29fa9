// Reference solution of the exercise ballot_rank (notebook 01).
//
// Contract: __device__ int ballot_rank(bool pred). All 32 lanes of a full warp call it, converged.
// Every lane returns how many lanes of its warp below it (lower lane numbers) have pred true: for a
// lane whose own pred is true, its rank among the passing lanes (0 for the lowest).
//
// Every lane votes with the full mask, so every lane gets the same ballot; the bits of the lanes
// below this one are (1u << lane) - 1 (lane 0: none), and __popc counts the set bits among them.
__device__ int ballot_rank(bool pred) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned ballot = __ballot_sync(0xffffffffu, pred);
    return __popc(ballot & ((1u << lane) - 1u));
}
