"""The SIMT machine's proof against hardware (issue 11, "Proof against hardware", items 1 to 5).

What this package holds, by module:

* :mod:`~helpers.recording.proof.rand`: a counter-based random generator (splitmix64) whose streams never
  change with the NumPy version, so a recording stores seeds, not inputs;
* :mod:`~helpers.recording.proof.launches`: the launch-spec table of every kernel in ``kernels/`` (argument
  kinds, sizes, dtypes, scalars, grid and block rules) and the randomised launches drawn from it;
* :mod:`~helpers.recording.proof.programs`: a generator of random small CUDA C programs over the warp and
  block primitives, batched into modules of ``extern "C"`` kernels;
* :mod:`~helpers.recording.proof.store`: the recording files ``data/machine_*`` (read and written);
* :mod:`~helpers.recording.proof.record`: the H200 side (``python3 -m helpers.recording.proof.record``): compile each
  module once to PTX, load that same PTX on the GPU, run the launches, store everything;
* :mod:`~helpers.recording.proof.sanitize`: compute-sanitizer racecheck / synccheck of a sample of the
  programs, one verdict per program;
* :mod:`~helpers.recording.proof.replay`: the CI side: the recorded PTX on the machine, compared with what
  the H200 returned (bit for bit where the machine says the result is defined);
* :mod:`~helpers.recording.proof.agreement`, :mod:`~helpers.recording.proof.intrinsics`, :mod:`~helpers.recording.proof.counters`:
  items 3 to 5 (the machine's verdicts beside ``data/sanitizer_*.json``, the intrinsic
  proof's configurations on the machine, the machine's counters beside ``data/ncu_ladder.json``).

Nothing here imports CuPy or the machine at module import time.
"""
