"""The benchmarks of the reduction ladder (notebooks 05 to 07) and the sentences printed from their
results. ``from helpers import bench``: the names below are the package's face, for notebooks and
the layers above; each lives in one module, named for what it holds:

- :mod:`~helpers.bench.clock`: the two clocks, device time (CUDA graph replay) and host-inclusive
  time, and interleaved repetitions (GPU);
- :mod:`~helpers.bench.results`: a run's results, recorded in ``data/bench_*.json`` (the H200's),
  a learner's own (``load_local``) or live, and the queries over them;
- :mod:`~helpers.bench.ceiling`: a GPU's memory ceiling, from the device (clock x bus width) beside
  a cited datasheet figure, and which one a percentage uses;
- :mod:`~helpers.bench.checks`: correctness failures, the ladder's acceptance checks, the speed goals;
- :mod:`~helpers.bench.runs`: the ladder, sweep and tune runs on a GPU; a live run or the recording;
- :mod:`~helpers.bench.report`: the text views of a run (tables, checks, one-line numbers for prose);
- :mod:`~helpers.bench.cli`: ``python -m helpers.bench`` (times and records on a GPU; elsewhere
  shows the recording).

Modules import one another in that order only (clock, results and ceiling at the bottom). Imports
``helpers.engine`` and ``helpers.topics`` (and ``helpers.data``, which imports only engine, for the
recordings).
"""
from helpers.bench.clock import (DEVICE_CLOCK, DEVICE_METHOD, HOST_CLOCK, HOST_METHOD, TIMING_VERSION, DeviceTimer,
                                 empty_launcher, first_launch_us, fresh_first_launch_us, graph_calls, host_us,
                                 quick_times, time_interleaved)
from helpers.bench.results import (COPY, CUPY_SUM, EMPTY, KINDS, SEED, SEED_N, best_kernel, crossover, find_row,
                                   graph_time_usable, load_local, load_recorded, record, record_name, rows_for, size_label, speedup, spread,
                                   step_ratios, step_verdict, time_row, time_us, version_row)
from helpers.bench.ceiling import Ceiling, ceiling_of
from helpers.bench.checks import GOAL_CEILING_FRACTION, acceptance, failures, goals
from helpers.bench.runs import run_ladder, run_or_recorded, run_sweep, run_tune
from helpers.bench.report import (clock_label, describe, format_acceptance, format_accuracy, format_bandwidth,
                                  format_crossover, format_effect, format_goals, format_span, format_steps,
                                  format_sweep, format_table, format_timing, format_tune, format_versus,
                                  format_versus_seed)

__all__ = [
    # clock
    "DEVICE_CLOCK", "DEVICE_METHOD", "HOST_CLOCK", "HOST_METHOD", "TIMING_VERSION", "DeviceTimer", "empty_launcher",
    "first_launch_us", "fresh_first_launch_us", "graph_calls", "host_us", "quick_times", "time_interleaved",
    # results
    "COPY", "CUPY_SUM", "EMPTY", "KINDS", "SEED", "SEED_N", "best_kernel", "crossover", "find_row", "graph_time_usable",
    "load_local", "load_recorded",
    "record", "record_name", "rows_for", "size_label", "speedup", "spread", "step_ratios", "step_verdict", "time_row",
    "time_us", "version_row",
    # checks
    "GOAL_CEILING_FRACTION", "acceptance", "failures", "goals",
    # ceiling
    "Ceiling", "ceiling_of",
    # runs
    "run_ladder", "run_or_recorded", "run_sweep", "run_tune",
    # report
    "clock_label", "describe", "format_acceptance", "format_accuracy", "format_bandwidth", "format_crossover",
    "format_effect", "format_goals", "format_span", "format_steps", "format_sweep", "format_table", "format_timing",
    "format_tune", "format_versus", "format_versus_seed",
]
