"""The text views of a run (anywhere; plain text, deterministic for a recording), for the command
line and notebooks 05 to 07.

Tables (:func:`format_table`, :func:`format_sweep`, :func:`format_tune`); checks
(:func:`format_acceptance`, :func:`format_goals`); the ladder's steps (:func:`format_steps`,
:func:`format_versus_seed`, :func:`format_accuracy`); and the measured numbers a notebook's prose
relies on, one line each, so that the text itself can stay qualitative (:func:`format_effect`,
:func:`format_versus`, :func:`format_bandwidth`, :func:`format_span`, :func:`format_crossover`,
:func:`format_timing`).

Contract: every view says where its numbers come from (:func:`describe`: live on a GPU, or the
recording's label) and which clock its times are; a name or size the run lacks raises ValueError
naming the allowed ones; a percentage of a memory ceiling names that ceiling
(:mod:`~helpers.bench.ceiling`). Imports topics and :mod:`~helpers.bench.clock`,
:mod:`~helpers.bench.results`, :mod:`~helpers.bench.ceiling`, :mod:`~helpers.bench.checks`.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from helpers.bench.ceiling import ceiling_of
from helpers.bench.checks import acceptance, goals
from helpers.bench.clock import DEVICE_CLOCK, DEVICE_METHOD, HOST_CLOCK, HOST_METHOD, TIMING_VERSION, graph_calls
from helpers.bench.results import (COPY, CUPY_SUM, DRIFT, EMPTY, SEED, SEED_N, best_kernel, crossover, find_row,
                                   graph_time_usable, rows_for, size_label, speedup, spread, step_ratios, step_verdict, time_row,
                                   time_us, version_row)
from helpers.topics import reduce as R


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


def format_table(results: dict[str, Any], sizes: Optional[Iterable[int]] = None,
                 names: Optional[Iterable[str]] = None, block: Optional[int] = None) -> str:
    """A fixed-width table of a run's rows (all sizes, or only ``sizes``; all rows, or only those
    named in ``names``; kernels of every block size, or only ``block``). The first line names only the
    versions shown; the ``unr`` column appears only when a shown row has an unroll factor."""
    wanted = set(sizes) if sizes is not None else None
    named = set(names) if names is not None else None
    shown = [r for r in results["rows"]
             if (wanted is None or r["n"] in wanted) and (named is None or r["name"] in named)
             and (block is None or r.get("block") in (None, block))]
    unr = any(isinstance(r.get("unroll"), int) for r in shown)
    head = (f"{'n':>6} {'name':<15} {'block':>5}{' unr' if unr else ''} {'launch':>6} {'1st dev us':>10} "
            f"{'2nd dev us':>10} {'device us':>10} {'host us':>8} {'GB/s':>7} {'% copy':>6} {'x cupy':>7}  ok")
    versions = [v for v in results.get("versions", []) if named is None or v in named]
    lines = [describe(dict(results, versions=versions)), "device us: " + DEVICE_METHOD, "host us: " + HOST_METHOD,
             "GB/s and x cupy from device time", head, "-" * len(head)]
    for r in shown:

        def num(key: str, fmt: str) -> str:
            v = r.get(key)
            return format(v, fmt) if isinstance(v, (int, float)) else "-"

        gbps = r.get("gbps", r.get("first_pass_gbps"))
        ok = {True: "yes", False: "NO"}.get(r.get("correct"), "")
        name = r["name"] + (" (1st)" if r.get("first_pass_only") else "")
        total = "total_us" if "total_us" in r else "first_pass_us"
        lines.append(f"{size_label(r['n']):>6} {name:<15} {num('block', 'd'):>5}{' ' + format(num('unroll', 'd'), '>3') if unr else ''} "
                     f"{num('launches', 'd'):>6} {num('first_pass_us', '.2f'):>10} {num('second_pass_us', '.2f'):>10} "
                     f"{num(total, '.2f'):>10} {num('host_us', '.1f'):>8} {format(gbps, '.0f') if gbps else '-':>7} "
                     f"{num('pct_copy', '.0f'):>6} {num('vs_cupy_sum', '.2f'):>7}  {ok}")
    return "\n".join(lines)


def format_acceptance(results: dict[str, Any]) -> str:
    """One line per goal: PASS/FAIL, the goal and the numbers behind it."""
    acc = results.get("acceptance") or acceptance(results)
    return "\n".join(f"{'PASS' if a['pass'] else 'FAIL'}  {goal}: {a['detail']}" for goal, a in acc.items())


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
    pairs = [(b, find_row(results, n, "v4", b), find_row(results, n, SEED, b)) for b in R.SEED_BLOCKS]
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
    seed128 = find_row(results, n, SEED, R.SEED_BLOCK)
    if cold and seed128:
        warm = seed128["first_pass_us"]
        lines.append(f"  the seed's own timing (one launch in a fresh process, no warm-up), {len(cold)} processes: "
                     f"{', '.join(f'{c:.1f}' for c in cold)} µs = x{_span(min(cold) / warm, max(cold) / warm)} "
                     f"the warm median ({warm:.1f} µs)")
    else:
        lines.append("  the seed's own timing (first launch in a fresh process): not in this recording")
    return "\n".join(lines)


def format_goals(results: dict[str, Any]) -> str:
    """The series' speed goals whose sizes the run holds (:func:`goals`), PASS/FAIL, device time,
    after the line naming the GPU's memory ceiling the percentages use."""
    acc = goals(results)
    lines = [f"{'PASS' if a['pass'] else 'FAIL'}  {goal}: {a['detail']}" for goal, a in acc.items()]
    return "\n".join([describe(results), ceiling_of(results).describe()]
                     + (lines or ["no goal size (2^20, 2^24, 2^28, 2^30) in this run"]))


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
        best, cs, em = best_kernel(results, n), find_row(results, n, CUPY_SUM), find_row(results, n, EMPTY)
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


def _source(results: dict[str, Any]) -> str:
    return results.get("source") or f"live on {results.get('gpu', 'this GPU')}"


def _clock(results: dict[str, Any]) -> str:
    """The clock of a run's times, in two words (older recordings: cupyx's event time)."""
    return DEVICE_CLOCK if results.get("timing") == TIMING_VERSION else "GPU event time with launch overhead"


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
        row = time_row(results, n, name)
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
    sums, copies = ([time_row(results, n, k) for n in sizes] for k in (CUPY_SUM, COPY))
    head = (f"{size_label(sizes[0])} .. {size_label(sizes[-1])}, {_clock(results)}: best ({names}) {_range(times, '.1f')} µs, "
            f"{_range([b['gbps'] for b in best], ',.0f')} GB/s"
            + (f", time ×{_range(growth, '.2f')} per doubling of n" if growth else ""))
    tail = (f"  cupy.sum {_range([r['total_us'] for r in sums], '.1f')} µs, "
            f"{_range([r['gbps'] for r in sums], ',.0f')} GB/s; "
            f"copy {_copy_range(copies)}; "
            f"best ×{_range([b['vs_cupy_sum'] for b in best], '.2f')} cupy.sum")
    return f"{head}\n{tail}"


def _copy_range(copies: Sequence[dict[str, Any]]) -> str:
    usable = [r["gbps"] for r in copies if graph_time_usable(r)]
    left = len(copies) - len(usable)
    out = f"{_range(usable, ',.0f')} GB/s" if usable else "no usable device time"
    return out + (f" ({left} size{'s' if left > 1 else ''} left out: graph time above host-inclusive)" if left and usable else "")


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
