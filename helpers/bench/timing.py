"""``python -m helpers.bench.timing``: time the reduction ladder against ``cupy.sum``, a plain copy and an empty
kernel, in one run, with two clocks kept apart.

* **Device time** (``total_us``, ``first_pass_us``, ...): the calls captured once in a CUDA graph,
  the graph replayed, GPU event time / calls (:class:`DeviceTimer`). Kernels only: no Python, no
  launch overhead of the host. What the GPU spends.
* **Host-inclusive time** (``host_us``): wall clock from the Python call until the result is ready
  (:func:`host_us`). What a Python caller waits: at small n mostly CuPy's launch path, the same
  for every one-launch kernel, which is why the empty kernel is timed too (the floor).

For every size and version: check first (fresh random input, partials poisoned with NaN, every
partial written, the sum within float32 rounding of a float64 reference, the same bits in five
runs), then time everything of that size in :data:`DEFAULT_REPS` interleaved repetitions
(:func:`time_interleaved`); a goal passes on the median, and every table shows the spread. In the
same run, on the same input: ``cupy.sum`` (CUB), a device-to-device copy (a reference point: read +
write bytes), the empty kernel (launch cost), and the seed's own ``reduce_v4`` at 128 threads (as
it launches) and 256 (our block size), first pass only.

Reported per row: microseconds; GB/s = bytes read once (4 n) / device time; percent of the copy's
GB/s; speed relative to ``cupy.sum`` (> 1: faster). Compare rows of one run.

    python -m helpers.bench.timing                 # the ladder, 2^20 .. 2^28 (no GPU: the recorded H200 run)
    python -m helpers.bench.timing --record        # ... and write data/bench_ladder.json
    python -m helpers.bench.timing --sweep --record   # best kernels, cupy.sum, copy, empty over 2^10 .. 2^30
    python -m helpers.bench.timing --tune --record    # block size x unroll of v8, onepass and v9

Notebooks call :func:`run_ladder` / :func:`run_sweep` on a GPU, or :func:`load_recorded` anywhere.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import functools
import sys
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from helpers.engine import backend
from helpers.topics import reduce as R

DEFAULT_SIZES: tuple[int, ...] = tuple(2**k for k in range(20, 29))  # includes the seed's 2^25
SWEEP_SIZES: tuple[int, ...] = tuple(2**k for k in range(10, 31))
SWEEP_VERSIONS: tuple[str, ...] = ("v7", "v8", "onepass", "v9")
TUNE_VERSIONS: tuple[str, ...] = ("v8", "onepass", "v9")
TUNE_SIZES: tuple[int, ...] = (2**20, 2**24, 2**28)
TUNE_BLOCKS: tuple[int, ...] = (128, 256, 512, 1024)
TUNE_UNROLLS: tuple[int, ...] = (2, 4, 8)
SEED_N = 2**25
CUPY_SUM = "cupy.sum"
COPY = "copy"
SEED = "seed_reduce_v4"
KINDS: tuple[str, ...] = ("ladder", "sweep", "tune")


def record_name(kind: str) -> str:
    """The data/ file of a recorded run: ``bench_ladder``, ``bench_sweep`` or ``bench_tune``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return f"bench_{kind}"


def size_label(n: int) -> str:
    """``2^25`` for powers of two, the number otherwise."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


# ---------------------------------------------------------------------------------------------
# Measuring (GPU)

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


# Two clocks, kept apart and labelled everywhere they are shown (tables, charts, prose):
DEVICE_CLOCK = "device time"
HOST_CLOCK = "host-inclusive time"
DEVICE_METHOD = ("device time: the calls captured once in a CUDA graph, the graph replayed (the GPU "
                 "kept busy while the host enqueues it), GPU event time / number of calls; kernels only")
HOST_METHOD = ("host-inclusive time: wall clock from the Python call until the result is ready on the "
               "GPU (stream synchronised); what a Python caller waits")
SPIN_NS = 50_000  # the GPU spins this long before each timed replay (longer than the host's enqueue)
DEFAULT_REPS = 5


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
        proc = subprocess.run([sys.executable, "-m", "helpers.bench.timing", "--first-launch", str(n)],
                              capture_output=True, text=True, timeout=timeout, check=True)
        out.append(float(json.loads(proc.stdout.strip().splitlines()[-1])["first_launch_us"]))
    return out


def _first_launch_main(n: int) -> int:
    """The child of :func:`fresh_first_launch_us`: one cold launch of the seed kernel, as JSON."""
    import json

    x = _random_input(n, seed=7)
    launch, _ = R.seed_launcher(x)
    print(json.dumps({"n": n, "first_launch_us": first_launch_us(launch)}))
    return 0


class _Progress:
    """A one-line progress report on stderr: rewritten in place on a terminal, one line per step in a log."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled = total, 0, enabled
        self.tty = enabled and sys.stderr.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        if self.enabled:
            line = f"[{self.done:4d}/{self.total}] {label}"
            print(f"\r{line:<78}" if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr)


def _random_input(n: int, seed: int) -> Any:
    """n float32 uniform in [0, 1) on the GPU (positive: the relative error is well conditioned)."""
    import cupy

    return cupy.random.RandomState(seed).random_sample(size=n, dtype=cupy.float32)


DETERMINISM_RUNS = 5


def _check_plan(plan: R.ReducePlan, x: Any, ref: float, abs_sum: float) -> dict[str, Any]:
    """Run ``plan`` on ``x`` with NaN-poisoned buffers; report whether every partial was written,
    the sum is within the version's float32 error bound of the float64 reference, and the same
    bits come back in :data:`DETERMINISM_RUNS` runs."""
    import cupy

    for buf in plan.buffers:
        buf.fill(cupy.nan)
    partials = plan.first_pass(x)
    written = bool(cupy.isfinite(partials).all())
    result = plan.second_pass()
    bits = [cupy.asnumpy(result).tobytes()]
    got = float(result[0])
    for _ in range(DETERMINISM_RUNS - 1):
        result.fill(cupy.nan)
        bits.append(cupy.asnumpy(plan(x)).tobytes())
    bound = R.error_bound(abs_sum, plan.n, plan.version, plan.block, plan.grids[0])
    err = abs(got - ref)
    return {"correct": written and err <= bound, "partials_written": written, "value": got,
            "abs_err": err, "err_bound": bound, "deterministic": len(set(bits)) == 1,
            "determinism_runs": DETERMINISM_RUNS}


def _check_seed(x: Any, ref: float, abs_sum: float, block: int = R.SEED_BLOCK) -> dict[str, Any]:
    """The seed's first pass on ``x`` (n a multiple of 2 * block), NaN-poisoned: all partials
    written and their float64 sum within float32 rounding (v4's bound) of the reference."""
    import cupy

    out = cupy.full(R.seed_grid(int(x.size), block), cupy.nan, dtype=cupy.float32)
    R.seed_first_pass(x, out, block=block)
    written = bool(cupy.isfinite(out).all())
    got = float(cupy.sum(out, dtype=cupy.float64))
    bound = R.error_bound(abs_sum, int(x.size), "v4", block)
    err = abs(got - ref)
    return {"correct": written and err <= bound, "partials_written": written, "value": got,
            "abs_err": err, "err_bound": bound}


EMPTY = "empty kernel"


def _timed(res: dict[str, Any], prefix: str = "total") -> dict[str, Any]:
    """Row fields from one :func:`time_interleaved` entry: ``{prefix}_us`` (device median),
    ``{prefix}_us_reps`` and, when host-timed, ``host_us`` and ``host_us_reps``."""
    out = {f"{prefix}_us": res["device_us"], f"{prefix}_us_reps": res["device_us_reps"]}
    if "host_us" in res:
        out.update(host_us=res["host_us"], host_us_reps=res["host_us_reps"])
    return out


def _size_rows(x: Any, n: int, configs: Sequence[tuple[str, Optional[int], int]], seed_blocks: Sequence[int],
               passes: bool, reps: int, replays: int, host_repeats: int, host_all: bool) -> list[dict[str, Any]]:
    """Every row of one size: copy, cupy.sum and the empty kernel, each (version, block, unroll)
    of ``configs`` (block None: the version's own choice) checked then timed end to end (and per
    pass, with ``passes``), and the seed kernel at ``seed_blocks``; all timed in one interleaved
    set (:func:`time_interleaved`), so every row of the size shares the same repetitions."""
    import cupy

    ref = float(cupy.sum(x, dtype=cupy.float64))
    dst = cupy.empty_like(x)
    fns: dict[Any, Callable[[], Any]] = {
        COPY: lambda: dst.data.copy_from_device_async(x.data, x.nbytes),
        CUPY_SUM: lambda: cupy.sum(x),
        EMPTY: empty_launcher(),
    }
    host_keys = {COPY, CUPY_SUM, EMPTY}
    plans, checks = [], {}
    for v, b, u in configs:
        plan = R.make_plan(v, n, b, unroll=u)
        key = (v, plan.block, plan.unroll)
        checks[key] = _check_plan(plan, x, ref, ref)
        first, second = plan.launchers(x)
        fns[("total",) + key] = (lambda f=first, g=second: (f(), g()))
        host_keys.add(("total",) + key)
        if passes:
            fns[("first",) + key] = first
            if plan.launches > 1:
                fns[("second",) + key] = second
        plans.append((plan, b is None))
    for b in seed_blocks:
        launch, _ = R.seed_launcher(x, block=b)
        checks[("seed", b)] = _check_seed(x, ref, ref, b)
        fns[("seed", b)] = launch
        host_keys.add(("seed", b))
    res = time_interleaved(fns, graph_calls(n), reps, replays, host_repeats,
                           host_keys=None if host_all else host_keys)
    copy_row = {"name": COPY, "n": n, **_timed(res[COPY]), "bytes": 8 * n, "launches": 1}
    sum_row = {"name": CUPY_SUM, "n": n, **_timed(res[CUPY_SUM]), "bytes": 4 * n}
    empty_row = {"name": EMPTY, "n": n, **_timed(res[EMPTY]), "launches": 1}
    copy_row["gbps"] = 8 * n / copy_row["total_us"] / 1e3
    sum_row["gbps"] = 4 * n / sum_row["total_us"] / 1e3
    rows = [copy_row, sum_row, empty_row]
    for plan, chosen in plans:
        key = (plan.version, plan.block, plan.unroll)
        row: dict[str, Any] = {"name": plan.version, "n": n, "block": plan.block, "launches": plan.launches,
                               "first_grid": plan.grids[0]}
        if chosen:
            row["default_block"] = True
        if R.uses_unroll(plan.version):
            row["unroll"] = plan.unroll
        if passes:
            row["first_pass_us"] = res[("first",) + key]["device_us"]
            row["second_pass_us"] = res[("second",) + key]["device_us"] if plan.launches > 1 else 0.0
        row.update(_timed(res[("total",) + key]), **checks[key])
        rows.append(_finish_row(row, copy_row, sum_row))
    for b in seed_blocks:
        t = res[("seed", b)]
        row = {"name": SEED, "n": n, "block": b, "launches": 1, "first_grid": R.seed_grid(n, b),
               **_timed(t, "first_pass"), "first_pass_only": True, **checks[("seed", b)]}
        row["first_pass_gbps"] = 4 * n / row["first_pass_us"] / 1e3
        row["pct_copy"] = 100.0 * row["first_pass_gbps"] / copy_row["gbps"]
        row["vs_cupy_sum"] = sum_row["total_us"] / row["first_pass_us"]
        rows.append(row)
    return rows


def _finish_row(row: dict[str, Any], copy_row: dict[str, Any], sum_row: dict[str, Any]) -> dict[str, Any]:
    """Add GB/s (bytes read once / device time), % of copy GB/s, the speed relative to cupy.sum
    in device time and, where both were host-timed, in host-inclusive time."""
    n, t = row["n"], row["total_us"]
    row["gbps"] = 4 * n / t / 1e3
    row["pct_copy"] = 100.0 * row["gbps"] / copy_row["gbps"]
    row["vs_cupy_sum"] = sum_row["total_us"] / t
    if "host_us" in row and "host_us" in sum_row:
        row["host_vs_cupy_sum"] = sum_row["host_us"] / row["host_us"]
    return row


# ---------------------------------------------------------------------------------------------
# Runs

def _require_gpu() -> None:
    d = backend.detect()
    if not d.usable:
        raise RuntimeError(f"benchmarks need a CUDA GPU: {d.reason}. Use load_recorded() for the recorded H200 runs.")


def _header(kind: str, **fields: Any) -> dict[str, Any]:
    import cupy

    try:  # which backend cupy.sum uses: ["cub"] means CUB's DeviceReduce
        from cupy._core import _accelerator as acc

        names = {getattr(acc, k): k[len("ACCELERATOR_"):].lower() for k in dir(acc) if k.startswith("ACCELERATOR_")}
        accelerators = [names.get(a, str(a)) for a in acc.get_reduction_accelerators()]
    except (ImportError, AttributeError):
        accelerators = []
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return {"kind": kind, "gpu": backend.detect().gpu_name,
            "sm_count": int(cupy.cuda.Device().attributes["MultiProcessorCount"]),
            "l2_bytes": int(props.get("l2CacheSize", 0)),
            "cupy_reduction_accelerators": accelerators, "timing": TIMING_VERSION,
            "clocks": {"total_us": DEVICE_METHOD, "host_us": HOST_METHOD},
            "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), **fields}


TIMING_VERSION = "graph-replay-v1"  # recordings made before it timed with cupyx.profiler.benchmark


def _run(kind: str, sizes: Sequence[int], configs: Sequence[tuple[str, Optional[int], int]], seed_blocks: Sequence[int],
         passes: bool, reps: int, replays: int, host_repeats: int, host_all: bool, input_seed: int,
         progress: bool) -> list[dict[str, Any]]:
    import cupy

    bar = _Progress(len(sizes), progress)
    rows: list[dict[str, Any]] = []
    for k, n in enumerate(sizes):
        x = _random_input(n, seed=input_seed + k)
        blocks = [b for b in seed_blocks if n % (2 * b) == 0]
        new = _size_rows(x, n, configs, blocks, passes, reps, replays, host_repeats, host_all)
        rows += new
        best = min((r for r in new if r["name"] in R.VERSIONS), key=lambda r: r["total_us"], default=None)
        cs = next(r for r in new if r["name"] == CUPY_SUM)
        bar.step(f"{kind} n={size_label(n)}: cupy.sum {cs['total_us']:.2f} us"
                 + (f", best {best['name']}<{best['block']}> {best['total_us']:.2f} us" if best else ""))
        del x
        cupy.get_default_memory_pool().free_all_blocks()
    bar.close()
    return rows


def run_ladder(sizes: Sequence[int] = DEFAULT_SIZES, versions: Sequence[str] = R.VERSIONS,
               block: int = R.DEFAULT_BLOCK, reps: int = DEFAULT_REPS, replays: int = 5, host_repeats: int = 20,
               seed_kernel: bool = True, cold_sizes: Sequence[int] = (2**20, SEED_N), progress: bool = True) -> dict[str, Any]:
    """The ladder benchmark on this GPU: every version at every size, with cupy.sum, copy, the
    empty kernel and the seed, device time per pass and end to end, host-inclusive end to end.

    Versions run with ``block`` threads (v9 with its own choice, :func:`helpers.topics.reduce.v9_block`);
    v4 also with the seed's 128 threads, and the seed kernel with 128 (as printed) and 256, so
    every comparison with the seed is at equal block size. At ``cold_sizes`` the seed is also
    timed its own way, in fresh processes (:func:`fresh_first_launch_us`). Returns a dict
    (JSON-ready): ``rows``, ``failures`` and ``acceptance``.
    """
    _require_gpu()
    for v in versions:
        R.check_version(v)
    R.check_block(block)
    configs = [(v, None if v == "v9" else block, R.DEFAULT_UNROLL) for v in versions]
    if "v4" in versions and block != R.SEED_BLOCK:
        configs.append(("v4", R.SEED_BLOCK, R.DEFAULT_UNROLL))
    seeds = R.SEED_BLOCKS if seed_kernel else ()
    rows = _run("ladder", sizes, configs, seeds, True, reps, replays, host_repeats, False, 1000, progress)
    cold = {}
    if seed_kernel:
        for n in cold_sizes:
            if n in sizes:
                cold[str(n)] = fresh_first_launch_us(n)
    out = _header("ladder", block=block, reps=reps, replays=replays, host_repeats=host_repeats,
                  sizes=list(sizes), versions=list(versions), rows=rows, seed_fresh_first_launch_us=cold)
    out["failures"] = failures(out)
    out["acceptance"] = acceptance(out)
    return out


def run_sweep(sizes: Sequence[int] = SWEEP_SIZES, versions: Sequence[str] = SWEEP_VERSIONS,
              block: int = R.DEFAULT_BLOCK, reps: int = DEFAULT_REPS, replays: int = 5, host_repeats: int = 20,
              progress: bool = True) -> dict[str, Any]:
    """Device time, host-inclusive time and GB/s against size for the fastest kernels, cupy.sum,
    the copy and the empty kernel (one run); ``acceptance`` holds the goals of the series."""
    _require_gpu()
    for v in versions:
        R.check_version(v)
    configs = [(v, None if v == "v9" else block, R.DEFAULT_UNROLL) for v in versions]
    rows = _run("sweep", sizes, configs, (), False, reps, replays, host_repeats, True, 2000, progress)
    out = _header("sweep", block=block, reps=reps, replays=replays, host_repeats=host_repeats, sizes=list(sizes),
                  versions=list(versions), rows=rows)
    out["failures"] = failures(out)
    out["acceptance"] = goals(out)
    return out


def run_tune(sizes: Sequence[int] = TUNE_SIZES, versions: Sequence[str] = TUNE_VERSIONS,
             blocks: Sequence[int] = TUNE_BLOCKS, unrolls: Sequence[int] = TUNE_UNROLLS,
             reps: int = DEFAULT_REPS, replays: int = 5, host_repeats: int = 20, progress: bool = True) -> dict[str, Any]:
    """Block size x float4 loads in flight (REDUCE_UNROLL) for the vector kernels, device time."""
    _require_gpu()
    configs = [(v, b, u) for v in versions for b in blocks for u in unrolls]
    rows = _run("tune", sizes, configs, (), False, reps, replays, host_repeats, False, 3000, progress)
    out = _header("tune", reps=reps, replays=replays, host_repeats=host_repeats, sizes=list(sizes),
                  versions=list(versions), blocks=list(blocks), unrolls=list(unrolls), rows=rows)
    out["failures"] = failures(out)
    return out


# ---------------------------------------------------------------------------------------------
# Reading results (anywhere)

def rows_for(results: dict[str, Any], n: int, name: Optional[str] = None, block: Optional[int] = None) -> list[dict[str, Any]]:
    """The rows of ``results`` at size ``n`` (and ``name``, ``block`` if given)."""
    return [r for r in results["rows"] if r["n"] == n and (name is None or r["name"] == name)
            and (block is None or r.get("block") == block)]


def _one(results: dict[str, Any], n: int, name: str, block: Optional[int] = None) -> Optional[dict[str, Any]]:
    found = rows_for(results, n, name, block)
    return found[0] if found else None


def version_row(results: dict[str, Any], n: int, version: str) -> Optional[dict[str, Any]]:
    """The row that stands for ``version`` at size ``n``: at the run's block size, or, for a
    version that picks its own block (v9), the row run with its own choice."""
    return (_one(results, n, version, results.get("block", R.DEFAULT_BLOCK))
            or next((r for r in rows_for(results, n, version) if r.get("default_block")), None))


def spread(row: dict[str, Any], key: str = "total_us") -> Optional[tuple[float, float]]:
    """(min, max) over a row's interleaved repetitions of ``key`` (None for older recordings)."""
    reps = row.get(f"{key}_reps")
    return (min(reps), max(reps)) if reps else None


def _with_spread(row: dict[str, Any], key: str = "total_us", unit: str = "µs") -> str:
    """``2.98 µs (2.97–3.00 over 5 repetitions)`` or ``2.98 µs``."""
    sp = spread(row, key)
    text = f"{row[key]:.2f} {unit}"
    return text + (f" ({sp[0]:.2f}–{sp[1]:.2f} over {len(row[key + '_reps'])} repetitions)" if sp else "")


def failures(results: dict[str, Any]) -> list[str]:
    """One line per row whose correctness check failed (empty when all passed)."""
    return [f"{r['name']}<{r.get('block')}> n={r['n']}: "
            f"{'partials not all written' if not r.get('partials_written', True) else 'sum off'} "
            f"(|err| {r.get('abs_err', float('nan')):.3g} > bound {r.get('err_bound', float('nan')):.3g})"
            for r in results["rows"] if r.get("correct") is False]


def best_kernel(results: dict[str, Any], n: int) -> Optional[dict[str, Any]]:
    """The fastest full reduction (end to end, device time) of the series at size ``n``, or None."""
    ours = [r for r in results["rows"] if r["n"] == n and r["name"] in R.VERSIONS and "total_us" in r]
    return min(ours, key=lambda r: r["total_us"]) if ours else None


def acceptance(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ladder's checks on one run: ``{check: {"pass": bool, "detail": str}}``, device time.

    * each step v0 -> v4 at least as fast (end to end) as the one before, at 2^25 and at 2^28;
    * v4's first pass at least as fast as the seed kernel's at the SAME block size (128, as the
      seed launches it, and 256), same run, at 2^25 and 2^28;
    * every version correct; then the speed goals of :func:`goals` whose sizes the run has.
    """
    out: dict[str, dict[str, Any]] = {}
    block = results.get("block", R.DEFAULT_BLOCK)
    for n in (2**25, 2**28):
        ladder = [_one(results, n, v, block) for v in R.LADDER]
        if all(ladder):
            ratios = [ladder[i]["total_us"] / ladder[i + 1]["total_us"] for i in range(len(ladder) - 1)]
            out[f"ladder v0->v4 monotone at {size_label(n)}"] = {
                "pass": all(r >= 1.0 for r in ratios),
                "detail": ", ".join(f"{R.LADDER[i]}->{R.LADDER[i + 1]} x{r:.2f}" for i, r in enumerate(ratios))}
        for b in R.SEED_BLOCKS:
            seed, v4 = _one(results, n, SEED, b), _one(results, n, "v4", b)
            if seed and v4:
                ratio = seed["first_pass_us"] / v4["first_pass_us"]
                out[f"v4<{b}> >= seed kernel<{b}> at {size_label(n)}"] = {
                    "pass": ratio >= 1.0,
                    "detail": f"first pass v4 {v4['first_pass_us']:.1f} us, seed {seed['first_pass_us']:.1f} us: "
                              f"x{ratio:.3f}"}
    fails = failures(results)
    out["every version correct"] = {"pass": not fails, "detail": "; ".join(fails) or "all checks passed"}
    out.update(goals(results))
    return out


# The speed goals of the series for the H200 (issue "beat CUB in device time at every size"):
# checked on the median of the interleaved repetitions of one run, device time, best kernel.
GOAL_2_20_US = 2.6
GOAL_VS_CUPY = {2**20: 1.5, 2**24: 1.04, 2**28: 1.00, 2**30: 1.00}
GOAL_TBPS = {2**28: 4.50, 2**30: 4.55}
GOAL_SWEEP_SLACK = 0.97        # the best kernel within 3 % of cupy.sum, or faster, at every size
GOAL_HOST_FLOOR = 1.2          # host-inclusive time at 2^20 within 1.2x of the empty kernel's
HBM_DATASHEET_TBPS = 4.8       # NVIDIA H200 datasheet: HBM3e bandwidth, the ceiling of any kernel


def goals(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The speed goals whose sizes ``results`` holds, each ``{"pass", "detail"}`` (device time;
    the details give each median with its spread over the repetitions)."""
    out: dict[str, dict[str, Any]] = {}
    sizes = set(results.get("sizes", []))
    n = 2**20
    best, cs = best_kernel(results, n), _one(results, n, CUPY_SUM)
    if best and cs:
        name = f"{best['name']}<{best['block']}>"
        out[f"best <= {GOAL_2_20_US} us at 2^20"] = {
            "pass": best["total_us"] <= GOAL_2_20_US,
            "detail": f"{name} {_with_spread(best)}"}
        if "deterministic" in best:
            out["best deterministic at 2^20"] = {
                "pass": bool(best["deterministic"]) and bool(best.get("correct")),
                "detail": f"{name}: {'the same bits' if best['deterministic'] else 'different bits'} in "
                          f"{best['determinism_runs']} runs, |error| {best['abs_err']:.3g} <= bound {best['err_bound']:.3g}"}
        empty = _one(results, n, EMPTY)
        if empty and "host_us" in best and "host_us" in empty:
            ratio = best["host_us"] / empty["host_us"]
            out[f"best host-inclusive at 2^20 within {GOAL_HOST_FLOOR}x of the empty kernel's"] = {
                "pass": ratio <= GOAL_HOST_FLOOR,
                "detail": f"{name} {_with_spread(best, 'host_us')}, empty kernel {_with_spread(empty, 'host_us')}: "
                          f"x{ratio:.2f}"}
    for n, goal in GOAL_VS_CUPY.items():
        best, cs = best_kernel(results, n), _one(results, n, CUPY_SUM)
        if best and cs:
            out[f"best >= {goal:.2f}x cupy.sum at {size_label(n)}"] = {
                "pass": best["vs_cupy_sum"] >= goal,
                "detail": f"{best['name']}<{best['block']}> {_with_spread(best)}, cupy.sum {_with_spread(cs)}: "
                          f"x{best['vs_cupy_sum']:.3f}"}
    for n, goal in GOAL_TBPS.items():
        best = best_kernel(results, n)
        if best:
            sp = spread(best)
            rng = f" ({4 * n / sp[1] / 1e6:.3f}–{4 * n / sp[0] / 1e6:.3f})" if sp else ""
            out[f"best >= {goal:.2f} TB/s at {size_label(n)}"] = {
                "pass": best["gbps"] >= goal * 1e3,
                "detail": f"{best['name']}<{best['block']}> {best['gbps'] / 1e3:.3f} TB/s{rng}, "
                          f"{100 * best['gbps'] / 1e3 / HBM_DATASHEET_TBPS:.1f} % of the {HBM_DATASHEET_TBPS} TB/s datasheet"}
    if results.get("kind") == "sweep" and sizes:
        worst = min((best_kernel(results, n) for n in sorted(sizes)), key=lambda r: r["vs_cupy_sum"])
        out[f"best within {100 * (1 - GOAL_SWEEP_SLACK):.0f} % of cupy.sum or faster at every size"] = {
            "pass": worst["vs_cupy_sum"] >= GOAL_SWEEP_SLACK,
            "detail": f"lowest: {worst['name']}<{worst['block']}> x{worst['vs_cupy_sum']:.3f} at {size_label(worst['n'])}"}
    return out


def load_recorded(kind: str = "ladder") -> Optional[dict[str, Any]]:
    """The recorded run ``data/bench_<kind>.json`` (kind: ladder, sweep, tune), or None if absent.

    The returned dict carries ``"source"``: a label such as ``recorded on NVIDIA H200 (driver ...,
    CuPy ...), 2026-12-01``.
    """
    from helpers import data

    name = record_name(kind)
    if not data.exists(name):
        return None
    results = data.load(name)
    results["source"] = data.label(results.get("stamp", {}))
    return results


def record(results: dict[str, Any]) -> Any:
    """Write ``results`` (from a run on this GPU) to ``data/bench_<kind>.json``, stamped; return the path."""
    from helpers import data

    return data.write(record_name(results["kind"]), results, backend.stamp())


def describe(results: dict[str, Any]) -> str:
    """Where the numbers come from: ``live on <GPU>`` or the recording's label, and what was run."""
    src = results.get("source") or f"live on {results.get('gpu', 'this GPU')}"
    sizes = results.get("sizes", [])
    span = f"{size_label(min(sizes))} .. {size_label(max(sizes))}" if sizes else "?"
    return (f"{results['kind']}: {src}; versions {', '.join(results.get('versions', []))}; sizes {span}; "
            f"{clock_label(results)}")


def clock_label(results: dict[str, Any]) -> str:
    """Which clock a run's ``total_us`` is: device time (this series' method) or, for recordings
    made before it, cupyx.profiler.benchmark's GPU time, which includes host launch overhead."""
    if results.get("timing") == TIMING_VERSION:
        return f"times: {DEVICE_CLOCK} (CUDA graph replay), median of {results.get('reps')} interleaved repetitions"
    return "times: GPU event time per call (cupyx.profiler.benchmark: includes host launch overhead)"


def format_table(results: dict[str, Any], sizes: Optional[Iterable[int]] = None) -> str:
    """A fixed-width table of a run's rows (all sizes, or only ``sizes``)."""
    wanted = set(sizes) if sizes is not None else None
    head = (f"{'n':>6} {'name':<15} {'block':>5} {'unr':>3} {'launch':>6} {'1st dev us':>10} {'2nd dev us':>10} "
            f"{'device us':>10} {'host us':>8} {'GB/s':>7} {'% copy':>6} {'x cupy':>7}  ok")
    lines = [describe(results), "device us: " + DEVICE_METHOD, "host us: " + HOST_METHOD,
             "GB/s and x cupy from device time", head, "-" * len(head)]
    for r in results["rows"]:
        if wanted is not None and r["n"] not in wanted:
            continue

        def num(key: str, fmt: str) -> str:
            v = r.get(key)
            return format(v, fmt) if isinstance(v, (int, float)) else "-"

        gbps = r.get("gbps", r.get("first_pass_gbps"))
        ok = {True: "yes", False: "NO"}.get(r.get("correct"), "")
        name = r["name"] + (" (1st)" if r.get("first_pass_only") else "")
        total = "total_us" if "total_us" in r else "first_pass_us"
        lines.append(f"{size_label(r['n']):>6} {name:<15} {num('block', 'd'):>5} {num('unroll', 'd'):>3} "
                     f"{num('launches', 'd'):>6} {num('first_pass_us', '.2f'):>10} {num('second_pass_us', '.2f'):>10} "
                     f"{num(total, '.2f'):>10} {num('host_us', '.1f'):>8} {format(gbps, '.0f') if gbps else '-':>7} "
                     f"{num('pct_copy', '.0f'):>6} {num('vs_cupy_sum', '.2f'):>7}  {ok}")
    return "\n".join(lines)


def format_acceptance(results: dict[str, Any]) -> str:
    """One line per goal: PASS/FAIL, the goal and the numbers behind it."""
    acc = results.get("acceptance") or acceptance(results)
    return "\n".join(f"{'PASS' if a['pass'] else 'FAIL'}  {goal}: {a['detail']}" for goal, a in acc.items())


def show_recorded(kinds: Sequence[str] = KINDS, reason: str = "") -> bool:
    """Print the recorded runs of ``kinds`` (with their labels); False when none is recorded."""
    shown = False
    for kind in kinds:
        results = load_recorded(kind)
        if results is None:
            continue
        if not shown and reason:
            print(f"No usable CUDA GPU here ({reason}): showing the recorded results instead.")
        shown = True
        print()
        print(format_table(results, sizes=(2**20, 2**25, 2**28, 2**30) if kind != "tune" else None))
        if kind != "tune":
            print(format_acceptance(results))
    return shown


# ---------------------------------------------------------------------------------------------
# Notebook views of a run (05, 06): plain text, deterministic for a recording

# Two runs of the same kernels on the H200 an hour apart (2026-12-01, scripts/gpu/reduce_probe.py)
# differed by up to 3 % at 2^20 and 0.1 % at 2^28, each time inside one run's tight spread: a step
# whose speed-up is within this of 1 is reported as drift, never as faster or slower.
DRIFT = 0.03


def step_ratios(results: dict[str, Any], n: int, versions: Sequence[str] = R.LADDER,
                block: Optional[int] = None) -> list[tuple[str, str, float]]:
    """``(from, to, speed-up)`` for each step of ``versions`` at size ``n``, end to end
    (speed-up = time before / time after; < 1 means the step made it slower)."""
    rows = [_one(results, n, v, block) if block is not None else version_row(results, n, v) for v in versions]
    return [(versions[i], versions[i + 1], rows[i]["total_us"] / rows[i + 1]["total_us"])
            for i in range(len(rows) - 1) if rows[i] and rows[i + 1]]


def step_verdict(speedup: float) -> str:
    """``faster`` / ``SLOWER`` / ``same within drift`` (:data:`DRIFT`) for one step's speed-up."""
    if speedup > 1 + DRIFT:
        return "faster"
    if speedup < 1 - DRIFT:
        return "SLOWER"
    return "same within drift"


def format_steps(results: dict[str, Any], sizes: Sequence[int] = (2**25, 2**28),
                 versions: Sequence[str] = R.LADDER) -> str:
    """One line per size: the end-to-end time of each version and the speed-up of each step, with
    its verdict (:func:`step_verdict`: a step within the run-to-run drift is not called slower)."""
    lines = [describe(results)]
    for n in sizes:
        rows = [version_row(results, n, v) for v in versions]
        if not all(rows):
            lines.append(f"{size_label(n)}: not in this run")
            continue
        times = "  ".join(f"{v}<{r['block']}> {r['total_us']:.1f}" for v, r in zip(versions, rows))
        steps = ", ".join(f"{a}->{b} x{k:.2f} {step_verdict(k)}" for a, b, k in step_ratios(results, n, versions))
        lines.append(f"{size_label(n)}, device µs: {times}")
        lines.append(f"{'':>6}{steps}")
    lines.append(f"(a speed-up within ±{DRIFT:.0%} of 1 is inside the drift between two runs)")
    return "\n".join(lines)


def _span(lo: float, hi: float) -> str:
    """'1.5' when both ends round alike, else '1.4–1.5'."""
    a, b = f"{lo:.1f}", f"{hi:.1f}"
    return a if a == b else f"{a}–{b}"


def format_versus_seed(results: dict[str, Any], n: int = SEED_N) -> str:
    """v4 against the seed's kernel at size ``n`` at EQUAL block sizes (128, as the seed launches
    it, and 256), first pass only, device time, same run and input; then the seed's own way of
    timing (first launch in a fresh process) beside the warm median, when recorded."""
    pairs = [(b, _one(results, n, "v4", b), _one(results, n, SEED, b)) for b in R.SEED_BLOCKS]
    pairs = [(b, v4, seed) for b, v4, seed in pairs if v4 and seed]
    if not pairs:
        return f"{size_label(n)}: v4 and the seed kernel were not both run at this size"
    lines = [describe(results), f"first pass only, n = {size_label(n)}, {DEVICE_CLOCK}, same run, same input:"]
    for b, v4, seed in pairs:
        lines.append(f"  block {b:>4}: v4 {v4['first_pass_us']:7.1f} µs   seed {seed['first_pass_us']:7.1f} µs   "
                     f"v4 x{seed['first_pass_us'] / v4['first_pass_us']:.2f} the seed's speed")
    if len(pairs) == 2:
        (b0, _, s0), (b1, _, s1) = pairs
        lines.append(f"  the seed itself at block {b1} instead of {b0}: x{s0['first_pass_us'] / s1['first_pass_us']:.2f} "
                     f"(a block-size gain, not a fix)")
    cold = (results.get("seed_fresh_first_launch_us") or {}).get(str(n))
    seed128 = _one(results, n, SEED, R.SEED_BLOCK)
    if cold and seed128:
        warm = seed128["first_pass_us"]
        lines.append(f"  the seed's own timing (one launch in a fresh process, no warm-up), {len(cold)} processes: "
                     f"{', '.join(f'{c:.1f}' for c in cold)} µs = x{_span(min(cold) / warm, max(cold) / warm)} "
                     f"the warm median ({warm:.1f} µs)")
    else:
        lines.append("  the seed's own timing (first launch in a fresh process): not in this recording")
    return "\n".join(lines)


def format_goals(results: dict[str, Any]) -> str:
    """The series' speed goals whose sizes the run holds (:func:`goals`), PASS/FAIL, device time."""
    acc = goals(results)
    lines = [f"{'PASS' if a['pass'] else 'FAIL'}  {goal}: {a['detail']}" for goal, a in acc.items()]
    return "\n".join([describe(results)] + (lines or ["no goal size (2^20, 2^24, 2^28, 2^30) in this run"]))


def format_accuracy(results: dict[str, Any], n: int, versions: Sequence[str] = R.VERSIONS) -> str:
    """Each version's float32 sum at size ``n`` against the float64 reference (same input):
    absolute error, the version's rigorous bound (:func:`helpers.topics.reduce.error_bound`), relative error."""
    head = f"{'version':<8} {'float32 sum':>16} {'|error|':>10} {'bound':>10} {'rel. error':>10}  within"
    lines = [describe(results), f"n = {size_label(n)}, input uniform in [0, 1), reference: float64 sum of the same input",
             head, "-" * len(head)]
    for v in versions:
        r = version_row(results, n, v)
        if not r or "value" not in r:
            continue
        rel = r["abs_err"] / abs(r["value"]) if r["value"] else float("nan")
        lines.append(f"{v:<8} {r['value']:>16,.1f} {r['abs_err']:>10.3g} {r['err_bound']:>10.3g} {rel:>10.2e}  "
                     f"{'yes' if r['abs_err'] <= r['err_bound'] else 'NO'}")
    return "\n".join(lines)


def format_sweep(results: dict[str, Any], sizes: Optional[Sequence[int]] = None) -> str:
    """Per size: the best kernel and cupy.sum in device time (with the spread over repetitions),
    the best's speed-up, then host-inclusive time of both and of the empty kernel."""
    sizes = sizes or results.get("sizes", [])
    head = (f"{'n':>5} {'best':<12} {'device us':>9} {'spread':>13} {'GB/s':>6} {'cupy.sum us':>11} {'x cupy':>6} | "
            f"{'host us':>7} {'cupy.sum':>8} {'empty':>6}")
    lines = [describe(results), f"device: {DEVICE_METHOD}", f"host: {HOST_METHOD}", head, "-" * len(head)]
    for n in sizes:
        best, cs, em = best_kernel(results, n), _one(results, n, CUPY_SUM), _one(results, n, EMPTY)
        if not (best and cs):
            continue
        sp = spread(best)
        rng = f"{sp[0]:.2f}–{sp[1]:.2f}" if sp else "-"

        def host(r: Optional[dict[str, Any]], w: int) -> str:
            return f"{r['host_us']:{w}.1f}" if r and "host_us" in r else f"{'-':>{w}}"

        lines.append(f"{size_label(n):>5} {best['name'] + '<' + str(best['block']) + '>':<12} {best['total_us']:9.2f} "
                     f"{rng:>13} {best['gbps']:6.0f} {cs['total_us']:11.2f} {best['vs_cupy_sum']:6.2f} | "
                     f"{host(best, 7)} {host(cs, 8)} {host(em, 6)}")
    return "\n".join(lines)


def format_tune(results: dict[str, Any], n: int) -> str:
    """A tune run at size ``n`` as a grid: one row per version and block, one column per unroll
    (float4 loads in flight per thread), cells in GB/s from device time; the best cell is starred."""
    rows = [r for r in rows_for(results, n) if r["name"] in R.VERSIONS and "unroll" in r]
    if not rows:
        return f"{size_label(n)}: not in this tune run"
    unrolls = sorted({r["unroll"] for r in rows})
    best = max(rows, key=lambda r: r["gbps"])
    head = f"{'GB/s at ' + size_label(n):<16}" + "".join(f"{'unroll ' + str(u):>11}" for u in unrolls)
    lines = [describe(results), head, "-" * len(head)]
    for name, block in sorted({(r["name"], r["block"]) for r in rows}, key=lambda k: (R.VERSIONS.index(k[0]), k[1])):
        cells = ""
        for u in unrolls:
            r = next((r for r in rows if r["name"] == name and r["block"] == block and r["unroll"] == u), None)
            cells += f"{'-' if r is None else format(r['gbps'], ',.0f') + ('*' if r is best else ' '):>11}"
        lines.append(f"{name + '<' + str(block) + '>':<16}{cells}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Measured numbers for prose (05, 06): every figure a notebook's text relies on is printed from the
# run by one of these, with its source, so that the text itself can stay qualitative.

def _source(results: dict[str, Any]) -> str:
    return results.get("source") or f"live on {results.get('gpu', 'this GPU')}"


def _clock(results: dict[str, Any]) -> str:
    """The clock of a run's times, in two words (older recordings: cupyx's event time)."""
    return DEVICE_CLOCK if results.get("timing") == TIMING_VERSION else "GPU event time with launch overhead"


def _time_row(results: dict[str, Any], n: int, name: str) -> dict[str, Any]:
    """The row whose time stands for ``name`` at ``n``: a version (:func:`version_row`), the seed
    at its own 128 threads (first pass only), cupy.sum, copy or the empty kernel. ValueError when
    the run has no such row."""
    if name in R.VERSIONS:
        row = version_row(results, n, name)
    else:
        row = _one(results, n, name, R.SEED_BLOCK if name == SEED else None)
    if row is None or not isinstance(row.get("total_us", row.get("first_pass_us")), (int, float)):
        names = sorted({r["name"] for r in results["rows"] if r["n"] == n})
        raise ValueError(f"name must be one of the rows at n={size_label(n)} ({', '.join(names) or 'none'}); "
                         f"got {name!r}")
    return row


def time_us(results: dict[str, Any], name: str, n: int) -> float:
    """End-to-end microseconds of ``name`` at size ``n`` (the seed kernel: its first pass only)."""
    row = _time_row(results, n, name)
    return float(row.get("total_us", row.get("first_pass_us")))


def speedup(results: dict[str, Any], before: str, after: str, n: int) -> float:
    """Time of ``before`` / time of ``after`` at size ``n``, end to end, from one run (> 1: ``after``
    is faster). Names are versions (at the run's block size), ``cupy.sum``, ``copy`` or the seed."""
    return time_us(results, before, n) / time_us(results, after, n)


def _ratios(results: dict[str, Any], before: str, after: str, sizes: Sequence[int]) -> str:
    if not sizes:
        raise ValueError("sizes must name at least one size of the run; got none")
    return ", ".join(f"×{speedup(results, before, after, n):.2f} at {size_label(n)}" for n in sizes)


def format_effect(results: dict[str, Any], before: str, after: str,
                  sizes: Sequence[int] = (2**25, 2**28)) -> str:
    """The measured effect of the step ``before`` → ``after``, one line:
    ``v4 → v5: ×1.02 at 2^25, ×1.03 at 2^28 (device time, end to end; recorded on …)``."""
    return f"{before} → {after}: {_ratios(results, before, after, sizes)} ({_clock(results)}, end to end; {_source(results)})"


def format_versus(results: dict[str, Any], name: str, base: str = CUPY_SUM,
                  sizes: Sequence[int] = (2**25, 2**28)) -> str:
    """``name`` against ``base`` (time of base / time of name: > 1 means ``name`` is faster), one line:
    ``v4 against cupy.sum: ×0.76 at 2^25, ×0.56 at 2^28 (> 1: v4 faster; recorded on …)``."""
    return (f"{name} against {base}: {_ratios(results, base, name, sizes)} (> 1: {name} faster; {_clock(results)}; "
            f"{_source(results)})")


def format_bandwidth(results: dict[str, Any], n: int, names: Sequence[str]) -> str:
    """GB/s of ``names`` at size ``n`` in TB/s, one line (copy: read + write bytes; others: bytes read)."""
    parts = []
    for name in names:
        row = _time_row(results, n, name)
        gbps = row.get("gbps", row.get("first_pass_gbps"))
        parts.append(f"{name} {gbps / 1e3:.2f} TB/s{' (read + write)' if name == COPY else ''}")
    return f"{size_label(n)}: {', '.join(parts)} (bytes / {_clock(results)}; {_source(results)})"


def _range(values: Sequence[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{lo:{fmt}}–{hi:{fmt}}"


def format_span(results: dict[str, Any], sizes: Sequence[int]) -> str:
    """A range of sizes of a sweep in two lines: the best kernel's time, GB/s and time per doubling
    of n; cupy.sum's and the copy's; and the best's speed-up over cupy.sum (each as min–max)."""
    sizes = sorted(sizes)
    best = [best_kernel(results, n) for n in sizes]
    if not sizes or not all(best):
        run = ", ".join(map(size_label, results.get("sizes", [])))
        raise ValueError(f"sizes must all be sizes of the run ({run}); "
                         f"got {', '.join(map(size_label, sizes)) or 'none'}")
    names = ", ".join(dict.fromkeys(b["name"] for b in best))
    times = [b["total_us"] for b in best]
    growth = [t1 / t0 for t0, t1 in zip(times, times[1:])]
    sums, copies = ([_time_row(results, n, k) for n in sizes] for k in (CUPY_SUM, COPY))
    head = (f"{size_label(sizes[0])} .. {size_label(sizes[-1])}, {_clock(results)}: best ({names}) {_range(times, '.1f')} µs, "
            f"{_range([b['gbps'] for b in best], ',.0f')} GB/s"
            + (f", time ×{_range(growth, '.2f')} per doubling of n" if growth else ""))
    tail = (f"  cupy.sum {_range([r['total_us'] for r in sums], '.1f')} µs, "
            f"{_range([r['gbps'] for r in sums], ',.0f')} GB/s; "
            f"copy {_range([r['gbps'] for r in copies], ',.0f')} GB/s; "
            f"best ×{_range([b['vs_cupy_sum'] for b in best], '.2f')} cupy.sum")
    return f"{head}\n{tail}"


def crossover(results: dict[str, Any], a: str, b: str) -> Optional[int]:
    """The smallest size of the run from which ``a`` takes less time than ``b`` at that size and at
    every larger one (None if ``a`` is not faster at the largest size)."""
    found = None
    for n in sorted(results.get("sizes", []), reverse=True):
        if time_us(results, a, n) >= time_us(results, b, n):
            break
        found = n
    return found


def format_crossover(results: dict[str, Any], a: str, b: str) -> str:
    """Where ``a`` starts to take less time than ``b`` for good, with the times on either side."""
    n = crossover(results, a, b)
    if n is None:
        return f"{a} never takes less time than {b} at the largest size of this run ({_source(results)})"
    here = f"{size_label(n)}: {time_us(results, a, n):.1f} µs against {time_us(results, b, n):.1f} µs"
    below = [m for m in results["sizes"] if m < n]
    before = (f"; {size_label(max(below))}: {time_us(results, a, max(below)):.1f} µs against "
              f"{time_us(results, b, max(below)):.1f} µs" if below else "")
    return f"{a} takes less time than {b} from {size_label(n)} on ({_clock(results)}; {here}{before}; {_source(results)})"


def format_timing(results: dict[str, Any]) -> str:
    """How a run timed each measurement, both clocks named."""
    if results.get("timing") != TIMING_VERSION:
        return f"{results['kind']}: {clock_label(results)}"
    return (f"{results['kind']}: {DEVICE_CLOCK}: median of {results['reps']} interleaved repetitions, each the median "
            f"of {results['replays']} replays of a CUDA graph of {graph_calls(2**20)} to {graph_calls(2**30)} calls; "
            f"{HOST_CLOCK}: median of {results['reps']} repetitions, each the median of {results['host_repeats']} calls")


def run_or_recorded(kind: str = "ladder", **kwargs: Any) -> tuple[Optional[dict[str, Any]], str]:
    """``(results, note)``: a short live run on a usable GPU (``run_ladder`` / ``run_sweep`` with
    ``kwargs``), else the recording (note says why), else ``(None, note)``. Never raises for a
    missing GPU or a failed run: notebooks print the note."""
    d = backend.detect()
    if d.usable and backend.resolve() == "cupy":
        try:
            run = {"ladder": run_ladder, "sweep": run_sweep, "tune": run_tune}[kind]
            return run(progress=False, **kwargs), f"live on {d.gpu_name}"
        except Exception as exc:  # a notebook cell shows the message, not a traceback
            why = f"the live run failed ({type(exc).__name__}: {exc})"
    else:
        why = f"no GPU in use here ({d.reason or 'the emulator backend is selected'})"
    rec = load_recorded(kind)
    if rec is None:
        return None, f"{why}, and no {kind} run is recorded in data/"
    return rec, f"{why}: showing the run {rec['source']}"


# ---------------------------------------------------------------------------------------------
# Command line

def _parse_sizes(text: str) -> list[int]:
    """``"20,25,28"`` (log2 sizes) or ``"1000,4096"`` (values >= 64 are sizes themselves)."""
    out = []
    for part in text.split(","):
        v = int(part)
        out.append(2**v if v < 64 else v)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.bench.timing", description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="size sweep 2^10..2^30 of the fastest kernels")
    parser.add_argument("--tune", action="store_true", help="block size x unroll of v8, onepass and v9")
    parser.add_argument("--record", action="store_true", help="write data/bench_<kind>.json (GPU only)")
    parser.add_argument("--sizes", type=_parse_sizes, help="comma list of log2 sizes (20,25) or sizes")
    parser.add_argument("--versions", type=lambda s: s.split(","), help="comma list, e.g. v0,v4,onepass")
    parser.add_argument("--block", type=int, default=R.DEFAULT_BLOCK)
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS, help="interleaved repetitions (goals use their median)")
    parser.add_argument("--replays", type=int, default=5, help="graph replays per repetition")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument("--first-launch", type=int, metavar="N",
                        help="(used by fresh_first_launch_us) time the seed kernel's first launch on N floats")
    args = parser.parse_args(argv)
    if args.first_launch:
        return _first_launch_main(args.first_launch)
    kind = "sweep" if args.sweep else "tune" if args.tune else "ladder"

    d = backend.detect()
    if not d.usable:
        if args.record:
            print(f"--record needs a CUDA GPU, and there is none here: {d.reason}.", file=sys.stderr)
            return 2
        if show_recorded((kind,), reason=d.reason):
            return 0
        print(f"No usable CUDA GPU here ({d.reason}), and no recorded {kind} run in "
              f"data/{record_name(kind)}.json yet: it is recorded on a GPU host by scripts/gpu/reduce.sh.")
        return 1

    print(backend.report("cupy"), file=sys.stderr)
    common = {"reps": args.reps, "replays": args.replays, "progress": not args.quiet}
    if kind == "ladder":
        results = run_ladder(sizes=args.sizes or DEFAULT_SIZES, versions=args.versions or R.VERSIONS,
                             block=args.block, **common)
    elif kind == "sweep":
        results = run_sweep(sizes=args.sizes or SWEEP_SIZES, versions=args.versions or SWEEP_VERSIONS,
                            block=args.block, **common)
    else:
        results = run_tune(sizes=args.sizes or TUNE_SIZES, versions=args.versions or TUNE_VERSIONS, **common)
    print(format_table(results))
    if kind != "tune":
        print(format_acceptance(results))
    if args.record:
        print(f"recorded: {record(results)}", file=sys.stderr)
    for line in results["failures"]:
        print(f"WRONG: {line}", file=sys.stderr)
    return 0 if not results["failures"] else 3


if __name__ == "__main__":
    sys.exit(main())
