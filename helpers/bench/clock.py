"""The two clocks of the benchmarks, kept apart and labelled wherever a time is shown (GPU only).

* **Device time** (:class:`DeviceTimer`): the calls captured once in a CUDA graph, the graph
  replayed, GPU event time / calls. Kernels only: no Python, no launch overhead of the host. What
  the GPU spends.
* **Host-inclusive time** (:func:`host_us`): wall clock from the Python call until the result is
  ready. What a Python caller waits: at small n mostly CuPy's launch path, the same for every
  one-launch kernel, which is why the empty kernel is timed too (:func:`empty_launcher`, the floor).

:func:`time_interleaved` times a set of functions in interleaved repetitions (medians, every
repetition kept), :func:`quick_times` in one short repetition for a live line;
:func:`first_launch_us` and :func:`fresh_first_launch_us` time the seed's way (one cold launch, no
warm-up), to show why that is not a speed.

Contract: every timer takes zero-argument callables that only enqueue GPU work (kernel launches,
device copies, ``cupy.sum``) and returns microseconds; CuPy is imported inside the functions, so the
module imports without a GPU, but calling a timer needs one. Imports engine and topics (the timing
kernels of ``kernels/reduce_timing.cu``).
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Iterable, Optional

import numpy as np

from helpers.topics import reduce as R

# Two clocks, kept apart and labelled everywhere they are shown (tables, charts, prose):
DEVICE_CLOCK = "device time"
HOST_CLOCK = "host-inclusive time"
DEVICE_METHOD = ("device time: the calls captured once in a CUDA graph, the graph replayed (the GPU "
                 "kept busy while the host enqueues it), GPU event time / number of calls; kernels only")
HOST_METHOD = ("host-inclusive time: wall clock from the Python call until the result is ready on the "
               "GPU (stream synchronised); what a Python caller waits")
SPIN_NS = 50_000  # the GPU spins this long before each timed replay (longer than the host's enqueue)
DEFAULT_REPS = 5
TIMING_VERSION = "graph-replay-v1"  # recordings made before it timed with cupyx.profiler.benchmark


def first_launch_us(fn: Callable[[], Any]) -> float:
    """GPU time of ONE call of ``fn()`` between two CUDA events, with no warm-up: how the seed
    times its kernel (and why its number is not the kernel's speed)."""
    import cupy

    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    fn()
    end.record()
    end.synchronize()
    return float(cupy.cuda.get_elapsed_time(start, end) * 1e3)


def graph_calls(n: int) -> int:
    """Calls captured per graph at size ``n``: many where a call is short (so per-call event
    overhead vanishes), a few where one call already takes hundreds of microseconds."""
    return 50 if n <= 2**22 else 20 if n <= 2**26 else 5


@functools.lru_cache(maxsize=1)
def _timing_kernels() -> tuple[Any, Any]:
    """``(reduce_empty, reduce_spin)`` from ``kernels/reduce_timing.cu``."""
    from helpers.engine import kernels

    mod = kernels.module("reduce_timing", name_expressions=R.REDUCE_KERNELS["reduce_timing"])
    return mod.get_function("reduce_empty"), mod.get_function("reduce_spin")


def empty_launcher() -> Callable[[], None]:
    """A zero-argument function that launches ``reduce_empty`` (one block of 32 threads) with the
    one-launch reductions' argument list: the cost of a launch that does nothing."""
    import cupy

    empty, _ = _timing_kernels()
    buf = cupy.zeros(4, dtype=cupy.float32)
    args = (buf, buf, buf, buf, np.int64(0))
    return lambda: empty((1,), (32,), args)


class DeviceTimer:
    """``fn``'s device time: ``calls`` calls of ``fn`` captured in one CUDA graph, replayed.

    ``fn`` must only enqueue GPU work on the current stream (kernel launches, device copies,
    ``cupy.sum``); it is called ``calls`` times during capture, after ``warmup`` ordinary calls.
    :meth:`per_call_us` replays the graph ``replays`` times and returns the per-call time of each
    replay, in microseconds: GPU event time / calls, with the GPU kept busy by ``reduce_spin``
    while the host enqueues the events and the graph, so no host time is counted.
    """

    def __init__(self, fn: Callable[[], Any], calls: int, warmup: int = 3):
        import cupy

        if calls < 1:
            raise ValueError(f"calls must be >= 1; got {calls}")
        self.calls = calls
        self.stream = cupy.cuda.Stream(non_blocking=True)
        with self.stream:
            for _ in range(warmup):
                fn()
            self.stream.synchronize()
            self.stream.begin_capture()
            try:
                self._keep = [fn() for _ in range(calls)]  # outputs stay alive as long as the graph
            finally:
                self.graph = self.stream.end_capture()
        self.graph.upload(self.stream)
        self.graph.launch(self.stream)
        self.stream.synchronize()
        _, self._spin = _timing_kernels()

    def per_call_us(self, replays: int = 5) -> list[float]:
        import cupy

        out = []
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        for _ in range(replays):
            with self.stream:
                self._spin((1,), (1,), (np.int64(SPIN_NS),))
            start.record(self.stream)
            self.graph.launch(self.stream)
            end.record(self.stream)
            end.synchronize()
            out.append(cupy.cuda.get_elapsed_time(start, end) * 1e3 / self.calls)
        return out


def host_us(fn: Callable[[], Any], repeats: int = 20, warmup: int = 3) -> list[float]:
    """``fn``'s host-inclusive times in microseconds: wall clock from the call until the current
    stream has finished its work (``repeats`` values, after ``warmup`` untimed calls)."""
    import time

    import cupy

    stream = cupy.cuda.get_current_stream()
    for _ in range(warmup):
        fn()
    stream.synchronize()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        stream.synchronize()
        out.append((time.perf_counter() - t0) * 1e6)
    return out


def time_interleaved(fns: dict[Any, Callable[[], Any]], calls: int, reps: int = DEFAULT_REPS,
                     replays: int = 5, host_repeats: int = 20,
                     host_keys: Optional[Iterable[Any]] = None) -> dict[Any, dict[str, Any]]:
    """Device time (and host-inclusive time) of every function in ``fns``, in ``reps`` interleaved
    repetitions: each repetition times every function once (its graph replayed ``replays`` times,
    median; then ``host_repeats`` host-timed calls, median), in an order rotated by one per
    repetition, so slow drift of the GPU's clocks or temperature falls on all of them alike.

    Returns ``{key: {"device_us": median over repetitions, "device_us_reps": [...],
    "host_us": ..., "host_us_reps": [...]}}``; host times only for ``host_keys`` (None: all).
    """
    if reps < 1:
        raise ValueError(f"reps must be >= 1; got {reps}")
    timers = {k: DeviceTimer(fn, calls) for k, fn in fns.items()}
    keys = list(fns)
    hosted = set(keys) if host_keys is None else set(host_keys)
    dev: dict[Any, list[float]] = {k: [] for k in keys}
    hst: dict[Any, list[float]] = {k: [] for k in keys}
    for r in range(reps):
        for k in keys[r % len(keys):] + keys[: r % len(keys)]:
            dev[k].append(float(np.median(timers[k].per_call_us(replays))))
            if k in hosted:
                hst[k].append(float(np.median(host_us(fns[k], host_repeats))))
    out = {}
    for k in keys:
        out[k] = {"device_us": float(np.median(dev[k])), "device_us_reps": dev[k]}
        if k in hosted:
            out[k].update(host_us=float(np.median(hst[k])), host_us_reps=hst[k])
    del timers
    return out


def quick_times(fn: Callable[[], Any], calls: int = 20) -> tuple[float, float]:
    """``(device µs, host-inclusive µs)`` of ``fn`` in one short repetition (3 graph replays,
    10 host-timed calls): for a live line in a notebook, not for a goal."""
    timer = DeviceTimer(fn, calls)
    return float(np.median(timer.per_call_us(3))), float(np.median(host_us(fn, 10)))


def fresh_first_launch_us(n: int, runs: int = 3, timeout: float = 120.0) -> list[float]:
    """The seed's own timing: in a fresh Python process each time, allocate n floats, then time the
    seed kernel's FIRST launch with one pair of CUDA events, no warm-up (so it pays whatever a
    first launch in a new process pays, as in the seed's program). One time per process, in µs."""
    import json
    import subprocess

    out = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-m", "helpers.bench", "--first-launch", str(n)],
                              capture_output=True, text=True, timeout=timeout, check=True)
        out.append(float(json.loads(proc.stdout.strip().splitlines()[-1])["first_launch_us"]))
    return out
