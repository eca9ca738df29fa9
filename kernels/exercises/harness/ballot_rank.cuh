// Harness of the exercise ballot_rank: every thread of full warps calls the learner's function with
// its flag and stores what it got; the checker reads every lane.
extern "C" __global__ void ballot_rank_harness(const int* flags, int* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = ballot_rank(flags[i] != 0);
}
