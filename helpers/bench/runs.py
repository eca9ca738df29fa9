"""The benchmarks on a GPU: :func:`run_ladder`, :func:`run_sweep`, :func:`run_tune`; and
:func:`run_or_recorded` for notebooks (a short live run, else the recording).

For every size and version: check first (fresh random input, partials poisoned with NaN, every
partial written, the sum within float32 rounding of a float64 reference, the same bits in
:data:`DETERMINISM_RUNS` runs), then time everything of that size in interleaved repetitions
(:func:`helpers.bench.clock.time_interleaved`). In the same run, on the same input: ``cupy.sum``
(CUB), a device-to-device copy (a reference point: read + write bytes), the empty kernel (launch
cost), and the seed's own ``reduce_v4`` at 128 threads (as it launches) and 256 (our block size),
first pass only.

Reported per row: microseconds; GB/s = bytes read once (4 n) / device time; percent of the copy's
GB/s; speed relative to ``cupy.sum`` (> 1: faster). Compare rows of one run.

Contract: a run returns a JSON-ready dict in the format of :mod:`helpers.bench.results`, stamped
with the GPU and the clocks' methods, with ``failures`` (and ``acceptance`` for the ladder and the
sweep) from :mod:`helpers.bench.checks`; it raises RuntimeError without a usable GPU, ValueError
for a version or block the ladder does not have. :func:`run_or_recorded` never raises for a missing
GPU or a failed run. Imports engine, topics and :mod:`~helpers.bench.clock`,
:mod:`~helpers.bench.results`, :mod:`~helpers.bench.checks`.
"""
from __future__ import annotations

import datetime as _dt
import sys
from typing import Any, Callable, Optional, Sequence

from helpers.bench.ceiling import make, read_device
from helpers.bench.checks import acceptance, failures, goals
from helpers.bench.clock import (DEFAULT_REPS, DEVICE_METHOD, HOST_METHOD, TIMING_VERSION, empty_launcher,
                                 fresh_first_launch_us, graph_calls, time_interleaved)
from helpers.bench.results import COPY, CUPY_SUM, EMPTY, SEED, SEED_N, load_recorded, size_label
from helpers.engine import backend
from helpers.topics import reduce as R

DEFAULT_SIZES: tuple[int, ...] = tuple(2**k for k in range(20, 29))  # includes the seed's 2^25
SWEEP_SIZES: tuple[int, ...] = tuple(2**k for k in range(10, 31))
SWEEP_VERSIONS: tuple[str, ...] = ("v7", "v8", "onepass", "v9")
TUNE_VERSIONS: tuple[str, ...] = ("v8", "onepass", "v9")
TUNE_SIZES: tuple[int, ...] = (2**20, 2**24, 2**28)
TUNE_BLOCKS: tuple[int, ...] = (128, 256, 512, 1024)
TUNE_UNROLLS: tuple[int, ...] = (2, 4, 8)


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


def random_input(n: int, seed: int) -> Any:
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


def _timed(res: dict[str, Any], prefix: str = "total") -> dict[str, Any]:
    """Row fields from one :func:`time_interleaved` entry: ``{prefix}_us`` (device median),
    ``{prefix}_us_reps`` and, when host-timed, ``host_us`` and ``host_us_reps``."""
    out = {f"{prefix}_us": res["device_us"], f"{prefix}_us_reps": res["device_us_reps"]}
    if "host_us" in res:
        out.update(host_us=res["host_us"], host_us_reps=res["host_us_reps"])
    return out


def _size_rows(x: Any, n: int, configs: Sequence[tuple[str, Optional[int], Optional[int]]], seed_blocks: Sequence[int],
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
    device = cupy.cuda.Device().id
    props = cupy.cuda.runtime.getDeviceProperties(device)
    gpu = backend.detect().gpu_name
    try:
        top = read_device(cupy.cuda.runtime, device, gpu)
    except cupy.cuda.runtime.CUDARuntimeError:  # an attribute this device does not report: no theoretical peak
        top = make(gpu)
    return {"kind": kind, "gpu": gpu, "ceiling": top.to_dict(),
            "sm_count": int(cupy.cuda.Device().attributes["MultiProcessorCount"]),
            "l2_bytes": int(props.get("l2CacheSize", 0)),
            "cupy_reduction_accelerators": accelerators, "timing": TIMING_VERSION,
            "clocks": {"total_us": DEVICE_METHOD, "host_us": HOST_METHOD},
            "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), **fields}


def _run(kind: str, sizes: Sequence[int], configs: Sequence[tuple[str, Optional[int], Optional[int]]], seed_blocks: Sequence[int],
         passes: bool, reps: int, replays: int, host_repeats: int, host_all: bool, input_seed: int,
         progress: bool) -> list[dict[str, Any]]:
    import cupy

    bar = _Progress(len(sizes), progress)
    rows: list[dict[str, Any]] = []
    for k, n in enumerate(sizes):
        x = random_input(n, seed=input_seed + k)
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

    Versions run with ``block`` threads (v9 with its own choice, :func:`helpers.topics.reduce.v9_launch`);
    v4 also with the seed's 128 threads, and the seed kernel with 128 (as printed) and 256, so
    every comparison with the seed is at equal block size. At ``cold_sizes`` the seed is also
    timed its own way, in fresh processes (:func:`fresh_first_launch_us`). Returns a dict
    (JSON-ready): ``rows``, ``failures`` and ``acceptance``.
    """
    _require_gpu()
    for v in versions:
        R.check_version(v)
    R.check_block(block)
    configs = [(v, None, None) if v == "v9" else (v, block, R.DEFAULT_UNROLL) for v in versions]
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
    configs = [(v, None, None) if v == "v9" else (v, block, R.DEFAULT_UNROLL) for v in versions]
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
