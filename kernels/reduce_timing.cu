// Launch-cost yardsticks for helpers.bench: not reductions, and never part of a timed result.
//
// reduce_empty: the one-launch reductions' signature (reduce_onepass, reduce_v9), and nothing in the
//   body. Its device time is what one kernel costs in a CUDA graph with no work at all; its
//   host-inclusive time (launch from Python, wait for the GPU) is the floor under any one-launch
//   reduction called from Python through CuPy.
// reduce_spin: one thread waits until `ns` nanoseconds of the GPU's global timer (%globaltimer,
//   PTX ISA "Special Registers") have passed. helpers.bench launches it just before a timed graph,
//   so that the GPU is still busy while the host enqueues the start event, the graph and the end
//   event: the events then bracket GPU work only, not the host's time to submit it.
//
// Contract: reduce_empty takes any grid and block and touches no memory. reduce_spin is launched
// with one block of one thread; 0 <= ns (a few tens of microseconds in practice).

// [anchor:reduce_empty]
__global__ void reduce_empty(const float* __restrict__ in, float* partials, unsigned int* done, float* out,
                             long long n) {}
// [end:reduce_empty]

__global__ void reduce_spin(long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < static_cast<unsigned long long>(ns));
}
