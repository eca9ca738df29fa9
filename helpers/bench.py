"""``python -m helpers.bench``: time the reduction ladder against ``cupy.sum`` and a plain copy, in one run.

For every size and version: check first (fresh random input, partials poisoned with NaN, every
partial must be written and the sum within float32 rounding of a float64 reference), then time the
first pass, the second pass and the whole reduction (``cupyx.profiler.benchmark``: median of CUDA
event timings after warm-up). In the same run, on the same input: ``cupy.sum`` (CUB), a
device-to-device copy (the bandwidth yardstick: read + write bytes), and the seed's own
``reduce_v4`` (first pass only, launched as the seed launches it).

Reported per row: microseconds; GB/s = bytes read once (4 n) / time; percent of the copy's GB/s;
speed relative to ``cupy.sum`` (> 1: faster). Figures drift from run to run: compare rows of one run.

    python -m helpers.bench                 # the ladder, 2^20 .. 2^28 (no GPU: the recorded H200 run)
    python -m helpers.bench --record        # ... and write data/bench_ladder.json
    python -m helpers.bench --sweep --record   # best kernels, cupy.sum and copy over 2^16 .. 2^30
    python -m helpers.bench --tune --record    # block size x unroll of v8 and onepass

Notebooks call :func:`run_ladder` / :func:`run_sweep` on a GPU, or :func:`load_recorded` anywhere.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import sys
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from . import backend
from . import reduce as R

DEFAULT_SIZES: tuple[int, ...] = tuple(2**k for k in range(20, 29))  # includes the seed's 2^25
SWEEP_SIZES: tuple[int, ...] = tuple(2**k for k in range(16, 31))
SWEEP_VERSIONS: tuple[str, ...] = ("v7", "v8", "onepass")
TUNE_SIZES: tuple[int, ...] = (2**20, 2**24, 2**28)
TUNE_BLOCKS: tuple[int, ...] = (128, 256, 512, 1024)
TUNE_UNROLLS: tuple[int, ...] = (2, 4, 8)
SEED_N = 2**25
CUPY_SUM = "cupy.sum"
COPY = "copy"
SEED = "seed_reduce_v4"
KINDS: tuple[str, ...] = ("ladder", "sweep", "tune")
# Goals of the series for the H200 (checked by acceptance(), shown in the summary).
GOAL_VS_CUPY = {2**28: 1.03, 2**20: 1.3}
GOAL_TBPS_2_28 = 4.3


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

def measure_us(fn: Callable[[], Any], n_repeat: int = 50, n_warmup: int = 10, max_duration: float = 5.0) -> float:
    """Median GPU time of ``fn()`` in microseconds: CUDA events around each call, after ``n_warmup``
    untimed calls (``cupyx.profiler.benchmark``'s ``gpu_times``). Includes launch latency, as a
    caller of ``fn`` would see it."""
    from cupyx.profiler import benchmark

    r = benchmark(fn, n_repeat=n_repeat, n_warmup=n_warmup, max_duration=max_duration)
    return float(np.median(r.gpu_times[0]) * 1e6)


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


def _check_plan(plan: R.ReducePlan, x: Any, ref: float, abs_sum: float) -> dict[str, Any]:
    """Run ``plan`` on ``x`` with NaN-poisoned buffers; report whether every partial was written and
    the sum is within the version's float32 error bound of the float64 reference."""
    import cupy

    for buf in plan.buffers:
        buf.fill(cupy.nan)
    partials = plan.first_pass(x)
    written = bool(cupy.isfinite(partials).all())
    got = float(plan.second_pass()[0])
    bound = R.error_bound(abs_sum, plan.n, plan.version, plan.block, plan.grids[0])
    err = abs(got - ref)
    return {"correct": written and err <= bound, "partials_written": written, "value": got,
            "abs_err": err, "err_bound": bound}


def _check_seed(x: Any, ref: float, abs_sum: float) -> dict[str, Any]:
    """The seed's first pass on ``x`` (n a multiple of 256), NaN-poisoned: all partials written and
    their float64 sum within float32 rounding (v4's bound) of the reference."""
    import cupy

    out = cupy.full(R.seed_grid(int(x.size)), cupy.nan, dtype=cupy.float32)
    R.seed_first_pass(x, out)
    written = bool(cupy.isfinite(out).all())
    got = float(cupy.sum(out, dtype=cupy.float64))
    bound = R.error_bound(abs_sum, int(x.size), "v4", R.SEED_BLOCK)
    err = abs(got - ref)
    return {"correct": written and err <= bound, "partials_written": written, "value": got,
            "abs_err": err, "err_bound": bound}


def _baselines(x: Any, n: int, n_repeat: int, n_warmup: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rows for cupy.sum and the device-to-device copy of x (read + write bytes) on the same input."""
    import cupy

    dst = cupy.empty_like(x)
    copy_us = measure_us(lambda: dst.data.copy_from_device_async(x.data, x.nbytes), n_repeat, n_warmup)
    sum_us = measure_us(lambda: cupy.sum(x), n_repeat, n_warmup)
    copy_row = {"name": COPY, "n": n, "total_us": copy_us, "gbps": 8 * n / copy_us / 1e3,
                "bytes": 8 * n, "launches": 1}
    sum_row = {"name": CUPY_SUM, "n": n, "total_us": sum_us, "gbps": 4 * n / sum_us / 1e3,
               "bytes": 4 * n}
    return copy_row, sum_row


def _finish_row(row: dict[str, Any], copy_row: dict[str, Any], sum_row: dict[str, Any]) -> dict[str, Any]:
    """Add GB/s (bytes read once / end-to-end time), % of copy GB/s and the speed relative to cupy.sum."""
    n, t = row["n"], row["total_us"]
    row["gbps"] = 4 * n / t / 1e3
    row["pct_copy"] = 100.0 * row["gbps"] / copy_row["gbps"]
    row["vs_cupy_sum"] = sum_row["total_us"] / t
    return row


def _time_plan(plan: R.ReducePlan, x: Any, n_repeat: int, n_warmup: int, total_only: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"name": plan.version, "n": plan.n, "block": plan.block, "launches": plan.launches,
                           "first_grid": plan.grids[0]}
    if R.uses_unroll(plan.version):
        row["unroll"] = plan.unroll
    launch_first, launch_second = plan.launchers(x)
    if not total_only:
        row["first_pass_us"] = measure_us(launch_first, n_repeat, n_warmup)
        row["second_pass_us"] = measure_us(launch_second, n_repeat, n_warmup) if plan.launches > 1 else 0.0
    row["total_us"] = measure_us(lambda: (launch_first(), launch_second()), n_repeat, n_warmup)
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
    return {"kind": kind, "gpu": backend.detect().gpu_name,
            "sm_count": int(cupy.cuda.Device().attributes["MultiProcessorCount"]),
            "cupy_reduction_accelerators": accelerators,
            "measured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), **fields}


def run_ladder(sizes: Sequence[int] = DEFAULT_SIZES, versions: Sequence[str] = R.VERSIONS,
               block: int = R.DEFAULT_BLOCK, n_repeat: int = 50, n_warmup: int = 10, seed_kernel: bool = True,
               progress: bool = True) -> dict[str, Any]:
    """The ladder benchmark on this GPU: every version at every size, with cupy.sum, copy and the seed.

    Versions run with ``block`` threads; v4 also with the seed's 128 threads (the like-for-like
    comparison with the seed kernel). Returns a dict (JSON-ready): ``rows`` (one per name, size and
    block: ``first_pass_us``, ``second_pass_us``, ``total_us``, ``gbps``, ``pct_copy``,
    ``vs_cupy_sum``, ``correct``...), ``failures`` and ``acceptance``.
    """
    _require_gpu()
    import cupy

    for v in versions:
        R.check_version(v)
    R.check_block(block)
    configs = [(v, block) for v in versions]
    if "v4" in versions and block != R.SEED_BLOCK:
        configs.append(("v4", R.SEED_BLOCK))
    seed_sizes = [n for n in sizes if seed_kernel and n % R.SEED_TILE == 0]
    bar = _Progress(sum(len(configs) + 1 for _ in sizes) + len(seed_sizes), progress)
    rows: list[dict[str, Any]] = []
    for k, n in enumerate(sizes):
        x = _random_input(n, seed=1000 + k)
        ref = float(cupy.sum(x, dtype=cupy.float64))
        copy_row, sum_row = _baselines(x, n, n_repeat, n_warmup)
        rows += [copy_row, sum_row]
        bar.step(f"n={size_label(n)}: copy {copy_row['gbps']:.0f} GB/s, cupy.sum {sum_row['gbps']:.0f} GB/s")
        for v, b in configs:
            plan = R.make_plan(v, n, b)
            row = {**_time_plan(plan, x, n_repeat, n_warmup, total_only=False), **_check_plan(plan, x, ref, ref)}
            rows.append(_finish_row(row, copy_row, sum_row))
            bar.step(f"n={size_label(n)} {v}<{b}>: {row['total_us']:.1f} us, {row['gbps']:.0f} GB/s"
                     f"{'' if row['correct'] else '  WRONG'}")
        if n in seed_sizes:
            rows.append(_seed_row(x, n, ref, copy_row, sum_row, n_repeat, n_warmup))
            bar.step(f"n={size_label(n)} {SEED}: {rows[-1]['first_pass_gbps']:.0f} GB/s (first pass)")
        del x
        cupy.get_default_memory_pool().free_all_blocks()
    bar.close()
    out = _header("ladder", block=block, n_repeat=n_repeat, n_warmup=n_warmup, sizes=list(sizes),
                  versions=list(versions), rows=rows)
    out["failures"] = failures(out)
    out["acceptance"] = acceptance(out)
    return out


def _seed_row(x: Any, n: int, ref: float, copy_row: dict[str, Any], sum_row: dict[str, Any],
              n_repeat: int, n_warmup: int) -> dict[str, Any]:
    """The seed's kernel, first pass only, as the seed launches it; GB/s from the first pass.

    Also ``first_launch_us``: one launch timed with no warm-up, as the seed times it (the first
    launch of the kernel at this size in this run; at the run's first size, its first ever).
    """
    launch, _ = R.seed_launcher(x)
    cold = first_launch_us(launch)
    check = _check_seed(x, ref, ref)
    t = measure_us(launch, n_repeat, n_warmup)
    row = {"name": SEED, "n": n, "block": R.SEED_BLOCK, "launches": 1, "first_grid": R.seed_grid(n),
           "first_pass_us": t, "first_pass_gbps": 4 * n / t / 1e3, "first_pass_only": True,
           "first_launch_us": cold, **check}
    row["pct_copy"] = 100.0 * row["first_pass_gbps"] / copy_row["gbps"]
    row["vs_cupy_sum"] = sum_row["total_us"] / t
    return row


def _config_rows(sizes: Sequence[int], seed: int, configs: Sequence[tuple[str, int, int]], n_repeat: int,
                 n_warmup: int, progress: bool) -> list[dict[str, Any]]:
    """At each size, on a fresh random input: copy and cupy.sum, then every (version, block, unroll)
    end to end, checked against a float64 reference."""
    import cupy

    bar = _Progress(len(sizes) * (len(configs) + 1), progress)
    rows: list[dict[str, Any]] = []
    for k, n in enumerate(sizes):
        x = _random_input(n, seed=seed + k)
        ref = float(cupy.sum(x, dtype=cupy.float64))
        copy_row, sum_row = _baselines(x, n, n_repeat, n_warmup)
        rows += [copy_row, sum_row]
        bar.step(f"n={size_label(n)}: copy {copy_row['gbps']:.0f} GB/s, cupy.sum {sum_row['gbps']:.0f} GB/s")
        for v, b, u in configs:
            plan = R.make_plan(v, n, b, unroll=u)
            row = {**_time_plan(plan, x, n_repeat, n_warmup, total_only=True), **_check_plan(plan, x, ref, ref)}
            rows.append(_finish_row(row, copy_row, sum_row))
            bar.step(f"n={size_label(n)} {v}<{b}> unroll {u}: {row['total_us']:.1f} us, {row['gbps']:.0f} GB/s")
        del x
        cupy.get_default_memory_pool().free_all_blocks()
    bar.close()
    return rows


def run_sweep(sizes: Sequence[int] = SWEEP_SIZES, versions: Sequence[str] = SWEEP_VERSIONS,
              block: int = R.DEFAULT_BLOCK, n_repeat: int = 50, n_warmup: int = 10,
              progress: bool = True) -> dict[str, Any]:
    """End-to-end time and GB/s against size for the fastest kernels, cupy.sum and a copy (one run)."""
    _require_gpu()
    for v in versions:
        R.check_version(v)
    rows = _config_rows(sizes, 2000, [(v, block, R.DEFAULT_UNROLL) for v in versions], n_repeat, n_warmup, progress)
    out = _header("sweep", block=block, n_repeat=n_repeat, n_warmup=n_warmup, sizes=list(sizes),
                  versions=list(versions), rows=rows)
    out["failures"] = failures(out)
    return out


def run_tune(sizes: Sequence[int] = TUNE_SIZES, versions: Sequence[str] = ("v8", "onepass"),
             blocks: Sequence[int] = TUNE_BLOCKS, unrolls: Sequence[int] = TUNE_UNROLLS,
             n_repeat: int = 50, n_warmup: int = 10, progress: bool = True) -> dict[str, Any]:
    """Block size x float4 loads in flight (REDUCE_UNROLL) for the vector kernels, end to end."""
    _require_gpu()
    configs = [(v, b, u) for v in versions for b in blocks for u in unrolls]
    rows = _config_rows(sizes, 3000, configs, n_repeat, n_warmup, progress)
    out = _header("tune", n_repeat=n_repeat, n_warmup=n_warmup, sizes=list(sizes), versions=list(versions),
                  blocks=list(blocks), unrolls=list(unrolls), rows=rows)
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


def failures(results: dict[str, Any]) -> list[str]:
    """One line per row whose correctness check failed (empty when all passed)."""
    return [f"{r['name']}<{r.get('block')}> n={r['n']}: "
            f"{'partials not all written' if not r.get('partials_written', True) else 'sum off'} "
            f"(|err| {r.get('abs_err', float('nan')):.3g} > bound {r.get('err_bound', float('nan')):.3g})"
            for r in results["rows"] if r.get("correct") is False]


def best_kernel(results: dict[str, Any], n: int) -> Optional[dict[str, Any]]:
    """The fastest full reduction (end to end) of ours at size ``n``, or None."""
    ours = [r for r in results["rows"] if r["n"] == n and r["name"] in R.VERSIONS and "total_us" in r]
    return min(ours, key=lambda r: r["total_us"]) if ours else None


def acceptance(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The series' goals, checked on one ladder run: ``{goal: {"pass": bool, "detail": str}}``.

    * each step v0 -> v4 at least as fast (end to end) as the one before, at 2^25 and at 2^28;
    * v4's first pass at least as fast as the seed kernel's (same run), at 2^25 and 2^28;
    * the best kernel >= 1.03x cupy.sum at 2^28 and >= 1.3x at 2^20, and >= 4.3 TB/s at 2^28;
    * every version correct. Goals whose sizes were not run are left out.
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
        seed = _one(results, n, SEED)
        v4s = rows_for(results, n, "v4")
        if seed and v4s:
            best_v4 = max(v4s, key=lambda r: 4 * n / r["first_pass_us"])
            ratio = seed["first_pass_us"] / best_v4["first_pass_us"]
            detail = ", ".join(f"v4<{r['block']}> first pass {4 * n / r['first_pass_us'] / 1e3:.0f} GB/s"
                               for r in v4s)
            out[f"v4 >= seed kernel at {size_label(n)}"] = {
                "pass": ratio >= 1.0,
                "detail": f"{detail}; seed {seed['first_pass_gbps']:.0f} GB/s; best v4 x{ratio:.3f}"}
    for n, goal in GOAL_VS_CUPY.items():
        best = best_kernel(results, n)
        if best:
            out[f"best >= {goal}x cupy.sum at {size_label(n)}"] = {
                "pass": best["vs_cupy_sum"] >= goal,
                "detail": f"{best['name']}<{best['block']}> x{best['vs_cupy_sum']:.3f} "
                          f"({best['total_us']:.1f} us)"}
    best = best_kernel(results, 2**28)
    if best:
        out[f"best >= {GOAL_TBPS_2_28} TB/s at 2^28"] = {
            "pass": best["gbps"] >= GOAL_TBPS_2_28 * 1e3,
            "detail": f"{best['name']}<{best['block']}> {best['gbps'] / 1e3:.2f} TB/s"}
    fails = failures(results)
    out["every version correct"] = {"pass": not fails, "detail": "; ".join(fails) or "all checks passed"}
    return out


def load_recorded(kind: str = "ladder") -> Optional[dict[str, Any]]:
    """The recorded run ``data/bench_<kind>.json`` (kind: ladder, sweep, tune), or None if absent.

    The returned dict carries ``"source"``: a label such as ``recorded on NVIDIA H200 (driver ...,
    CuPy ...), 2026-12-01``.
    """
    from . import data

    name = record_name(kind)
    if not data.exists(name):
        return None
    results = data.load(name)
    results["source"] = data.label(results.get("stamp", {}))
    return results


def record(results: dict[str, Any]) -> Any:
    """Write ``results`` (from a run on this GPU) to ``data/bench_<kind>.json``, stamped; return the path."""
    from . import data

    return data.write(record_name(results["kind"]), results, backend.stamp())


def describe(results: dict[str, Any]) -> str:
    """Where the numbers come from: ``live on <GPU>`` or the recording's label, and what was run."""
    src = results.get("source") or f"live on {results.get('gpu', 'this GPU')}"
    sizes = results.get("sizes", [])
    span = f"{size_label(min(sizes))} .. {size_label(max(sizes))}" if sizes else "?"
    return f"{results['kind']}: {src}; versions {', '.join(results.get('versions', []))}; sizes {span}"


def format_table(results: dict[str, Any], sizes: Optional[Iterable[int]] = None) -> str:
    """A fixed-width table of a run's rows (all sizes, or only ``sizes``)."""
    wanted = set(sizes) if sizes is not None else None
    head = (f"{'n':>6} {'name':<15} {'block':>5} {'unr':>3} {'launch':>6} {'first us':>9} {'second us':>9} "
            f"{'total us':>9} {'GB/s':>7} {'% copy':>6} {'x cupy':>7}  ok")
    lines = [describe(results), head, "-" * len(head)]
    for r in results["rows"]:
        if wanted is not None and r["n"] not in wanted:
            continue

        def num(key: str, fmt: str) -> str:
            v = r.get(key)
            return format(v, fmt) if isinstance(v, (int, float)) else "-"

        gbps = r.get("gbps", r.get("first_pass_gbps"))
        ok = {True: "yes", False: "NO"}.get(r.get("correct"), "")
        name = r["name"] + (" (1st)" if r.get("first_pass_only") else "")
        lines.append(f"{size_label(r['n']):>6} {name:<15} {num('block', 'd'):>5} {num('unroll', 'd'):>3} "
                     f"{num('launches', 'd'):>6} {num('first_pass_us', '.1f'):>9} {num('second_pass_us', '.1f'):>9} "
                     f"{num('total_us', '.1f'):>9} {format(gbps, '.0f') if gbps else '-':>7} "
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
        if kind == "ladder":
            print(format_acceptance(results))
    return shown


# ---------------------------------------------------------------------------------------------
# Notebook views of a run (05, 06): plain text, deterministic for a recording

def step_ratios(results: dict[str, Any], n: int, versions: Sequence[str] = R.LADDER,
                block: Optional[int] = None) -> list[tuple[str, str, float]]:
    """``(from, to, speed-up)`` for each step of ``versions`` at size ``n``, end to end
    (speed-up = time before / time after; < 1 means the step made it slower)."""
    block = block if block is not None else results.get("block", R.DEFAULT_BLOCK)
    rows = [_one(results, n, v, block) for v in versions]
    return [(versions[i], versions[i + 1], rows[i]["total_us"] / rows[i + 1]["total_us"])
            for i in range(len(rows) - 1) if rows[i] and rows[i + 1]]


def format_steps(results: dict[str, Any], sizes: Sequence[int] = (2**25, 2**28),
                 versions: Sequence[str] = R.LADDER) -> str:
    """One line per size: the end-to-end time of each version and the speed-up of each step;
    a step that made things slower is flagged ``SLOWER``."""
    block = results.get("block", R.DEFAULT_BLOCK)
    lines = [describe(results)]
    for n in sizes:
        rows = [_one(results, n, v, block) for v in versions]
        if not all(rows):
            lines.append(f"{size_label(n)}: not in this run")
            continue
        times = "  ".join(f"{v} {r['total_us']:.1f} us" for v, r in zip(versions, rows))
        steps = ", ".join(f"{a}->{b} x{k:.2f}{' SLOWER' if k < 1 else ''}"
                          for a, b, k in step_ratios(results, n, versions, block))
        lines.append(f"{size_label(n)} (block {block}): {times}")
        lines.append(f"{'':>6}{steps}")
    return "\n".join(lines)


def format_versus_seed(results: dict[str, Any], n: int = SEED_N) -> str:
    """v4 (block 256 and the seed's 128) against the seed's kernel at size ``n``, first pass only,
    all from the same run; and the seed's own way of timing (one launch, no warm-up) if recorded."""
    seed = _one(results, n, SEED)
    v4s = sorted(rows_for(results, n, "v4"), key=lambda r: r["block"])
    if not seed or not v4s:
        return f"{size_label(n)}: v4 and the seed kernel were not both run at this size"
    lines = [describe(results), f"first pass only, n = {size_label(n)}, same run, same input:"]
    for r in v4s:
        lines.append(f"  v4<{r['block']}>{'':<8} {r['first_pass_us']:8.1f} us  "
                     f"{4 * n / r['first_pass_us'] / 1e3:6.0f} GB/s  x{seed['first_pass_us'] / r['first_pass_us']:.2f} vs seed")
    lines.append(f"  seed_reduce_v4<128> {seed['first_pass_us']:8.1f} us  {seed['first_pass_gbps']:6.0f} GB/s")
    cold = seed.get("first_launch_us")
    if cold is not None:
        lines.append(f"  seed, timed as the seed times it (one launch, no warm-up): {cold:.1f} us, "
                     f"x{cold / seed['first_pass_us']:.1f} the warm median")
    else:
        lines.append("  seed, one cold launch: not in this recording (recorded from the next run of scripts/gpu/reduce.sh)")
    return "\n".join(lines)


GOAL_PREFIX = "best >="


def format_goals(results: dict[str, Any]) -> str:
    """The series' speed goals only (best kernel vs cupy.sum at 2^28 and 2^20, TB/s at 2^28), PASS/FAIL."""
    acc = results.get("acceptance") or acceptance(results)
    lines = [f"{'PASS' if a['pass'] else 'FAIL'}  {goal}: {a['detail']}" for goal, a in acc.items()
             if goal.startswith(GOAL_PREFIX)]
    return "\n".join([describe(results)] + (lines or ["no goal size (2^20, 2^28) in this run"]))


def format_accuracy(results: dict[str, Any], n: int, versions: Sequence[str] = R.VERSIONS) -> str:
    """Each version's float32 sum at size ``n`` against the float64 reference (same input):
    absolute error, the version's rigorous bound (:func:`helpers.reduce.error_bound`), relative error."""
    block = results.get("block", R.DEFAULT_BLOCK)
    head = f"{'version':<8} {'float32 sum':>16} {'|error|':>10} {'bound':>10} {'rel. error':>10}  within"
    lines = [describe(results), f"n = {size_label(n)}, input uniform in [0, 1), reference: float64 sum of the same input",
             head, "-" * len(head)]
    for v in versions:
        r = _one(results, n, v, block)
        if not r or "value" not in r:
            continue
        rel = r["abs_err"] / abs(r["value"]) if r["value"] else float("nan")
        lines.append(f"{v:<8} {r['value']:>16,.1f} {r['abs_err']:>10.3g} {r['err_bound']:>10.3g} {rel:>10.2e}  "
                     f"{'yes' if r['abs_err'] <= r['err_bound'] else 'NO'}")
    return "\n".join(lines)


def format_sweep(results: dict[str, Any], sizes: Optional[Sequence[int]] = None) -> str:
    """Per size: the best kernel, cupy.sum and the copy (time and GB/s), and the best's speed-up."""
    sizes = sizes or results.get("sizes", [])
    head = f"{'n':>5} {'best':<8} {'us':>8} {'GB/s':>6} {'cupy.sum us':>12} {'GB/s':>6} {'copy us':>8} {'GB/s':>6} {'x cupy':>7}"
    lines = [describe(results), head, "-" * len(head)]
    for n in sizes:
        best, cs, cp = best_kernel(results, n), _one(results, n, CUPY_SUM), _one(results, n, COPY)
        if not (best and cs and cp):
            continue
        lines.append(f"{size_label(n):>5} {best['name']:<8} {best['total_us']:8.1f} {best['gbps']:6.0f} "
                     f"{cs['total_us']:12.1f} {cs['gbps']:6.0f} {cp['total_us']:8.1f} {cp['gbps']:6.0f} "
                     f"{best['vs_cupy_sum']:7.2f}")
    return "\n".join(lines)


def format_tune(results: dict[str, Any], n: int) -> str:
    """A tune run at size ``n`` as a grid: one row per version and block, one column per unroll
    (float4 loads in flight per thread), cells in GB/s end to end; the best cell is starred."""
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


def _time_row(results: dict[str, Any], n: int, name: str) -> dict[str, Any]:
    """The row whose time stands for ``name`` at ``n``: a version at the run's block size, the seed
    (first pass only), cupy.sum or copy. ValueError when the run has no such row."""
    block = results.get("block", R.DEFAULT_BLOCK) if name in R.VERSIONS else None
    row = _one(results, n, name, block)
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
    ``v4 → v5: ×1.02 at 2^25, ×1.03 at 2^28 (end to end; recorded on …)``."""
    return f"{before} → {after}: {_ratios(results, before, after, sizes)} (end to end; {_source(results)})"


def format_versus(results: dict[str, Any], name: str, base: str = CUPY_SUM,
                  sizes: Sequence[int] = (2**25, 2**28)) -> str:
    """``name`` against ``base`` (time of base / time of name: > 1 means ``name`` is faster), one line:
    ``v4 against cupy.sum: ×0.76 at 2^25, ×0.56 at 2^28 (> 1: v4 faster; recorded on …)``."""
    return f"{name} against {base}: {_ratios(results, base, name, sizes)} (> 1: {name} faster; {_source(results)})"


def format_bandwidth(results: dict[str, Any], n: int, names: Sequence[str]) -> str:
    """GB/s of ``names`` at size ``n`` in TB/s, one line (copy: read + write bytes; others: bytes read)."""
    parts = []
    for name in names:
        row = _time_row(results, n, name)
        gbps = row.get("gbps", row.get("first_pass_gbps"))
        parts.append(f"{name} {gbps / 1e3:.2f} TB/s{' (read + write)' if name == COPY else ''}")
    return f"{size_label(n)}: {', '.join(parts)} ({_source(results)})"


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
    head = (f"{size_label(sizes[0])} .. {size_label(sizes[-1])}: best ({names}) {_range(times, '.1f')} µs, "
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
    return f"{a} takes less time than {b} from {size_label(n)} on ({here}{before}; {_source(results)})"


def format_timing(results: dict[str, Any]) -> str:
    """How a run timed each measurement: ``ladder: median of 50 timed runs after 10 warm-ups``."""
    return f"{results['kind']}: median of {results['n_repeat']} timed runs after {results['n_warmup']} warm-ups"


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
    parser = argparse.ArgumentParser(prog="python -m helpers.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="size sweep 2^16..2^30 of the fastest kernels")
    parser.add_argument("--tune", action="store_true", help="block size x unroll of v8 and onepass")
    parser.add_argument("--record", action="store_true", help="write data/bench_<kind>.json (GPU only)")
    parser.add_argument("--sizes", type=_parse_sizes, help="comma list of log2 sizes (20,25) or sizes")
    parser.add_argument("--versions", type=lambda s: s.split(","), help="comma list, e.g. v0,v4,onepass")
    parser.add_argument("--block", type=int, default=R.DEFAULT_BLOCK)
    parser.add_argument("--repeat", type=int, default=50, help="timed repetitions per measurement")
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls before timing")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
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
    common = {"n_repeat": args.repeat, "n_warmup": args.warmup, "progress": not args.quiet}
    if kind == "ladder":
        results = run_ladder(sizes=args.sizes or DEFAULT_SIZES, versions=args.versions or R.VERSIONS,
                             block=args.block, **common)
    elif kind == "sweep":
        results = run_sweep(sizes=args.sizes or SWEEP_SIZES, versions=args.versions or SWEEP_VERSIONS,
                            block=args.block, **common)
    else:
        results = run_tune(sizes=args.sizes or TUNE_SIZES, versions=args.versions or ("v8", "onepass"), **common)
    print(format_table(results))
    if kind == "ladder":
        print(format_acceptance(results))
    if args.record:
        print(f"recorded: {record(results)}", file=sys.stderr)
    for line in results["failures"]:
        print(f"WRONG: {line}", file=sys.stderr)
    return 0 if not results["failures"] else 3


if __name__ == "__main__":
    sys.exit(main())
