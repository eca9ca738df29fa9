"""What a run must show, checked on its rows (anywhere: no GPU, no CuPy).

:func:`failures` lists the rows whose correctness check failed; :func:`acceptance` holds the
ladder's checks (each step v0 -> v4 no slower, v4 against the seed at equal block size, every
version correct, then the goals); :func:`goals` the series' speed goals: relative ones on any GPU (against ``cupy.sum`` in the same run,
as a fraction of the GPU's memory ceiling, :mod:`helpers.bench.ceiling`), and the H200's absolute
ones (``H200_GOAL_*``) on a run made on an H200.

Contract: each check is ``{"pass": bool, "detail": str}``, decided on the median of the interleaved
repetitions of one run, in device time; the detail gives the numbers behind it, with their spread
where the run has one. Only checks whose sizes the run holds are returned. Imports topics and
:mod:`helpers.bench.ceiling`, :mod:`helpers.bench.results`.
"""
from __future__ import annotations

from typing import Any

from helpers.bench.ceiling import ceiling_of, datasheet
from helpers.bench.results import CUPY_SUM, EMPTY, SEED, best_kernel, find_row, size_label, spread
from helpers.topics import reduce as R


def failures(results: dict[str, Any]) -> list[str]:
    """One line per row whose correctness check failed (empty when all passed)."""
    return [f"{r['name']}<{r.get('block')}> n={r['n']}: "
            f"{'partials not all written' if not r.get('partials_written', True) else 'sum off'} "
            f"(|err| {r.get('abs_err', float('nan')):.3g} > bound {r.get('err_bound', float('nan')):.3g})"
            for r in results["rows"] if r.get("correct") is False]


def _with_spread(row: dict[str, Any], key: str = "total_us", unit: str = "µs") -> str:
    """``2.98 µs (2.97–3.00 over 5 repetitions)`` or ``2.98 µs``."""
    sp = spread(row, key)
    text = f"{row[key]:.2f} {unit}"
    return text + (f" ({sp[0]:.2f}–{sp[1]:.2f} over {len(row[key + '_reps'])} repetitions)" if sp else "")


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
        ladder = [find_row(results, n, v, block) for v in R.LADDER]
        if all(ladder):
            ratios = [ladder[i]["total_us"] / ladder[i + 1]["total_us"] for i in range(len(ladder) - 1)]
            out[f"ladder v0->v4 monotone at {size_label(n)}"] = {
                "pass": all(r >= 1.0 for r in ratios),
                "detail": ", ".join(f"{R.LADDER[i]}->{R.LADDER[i + 1]} x{r:.2f}" for i, r in enumerate(ratios))}
        for b in R.SEED_BLOCKS:
            seed, v4 = find_row(results, n, SEED, b), find_row(results, n, "v4", b)
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


# The speed goals, checked on the median of the interleaved repetitions of one run, device time,
# best kernel. Relative goals hold on any GPU: against cupy.sum in the same run, against the empty
# kernel's host-inclusive time, and as a fraction of the GPU's memory ceiling (helpers.bench.ceiling).
GOAL_VS_CUPY = {2**20: 1.5, 2**24: 1.04, 2**28: 1.00, 2**30: 1.00}
GOAL_SWEEP_SLACK = 0.97        # the best kernel within 3 % of cupy.sum, or faster, at every size
GOAL_HOST_FLOOR = 1.2          # host-inclusive time at 2^20 within 1.2x of the empty kernel's
# The H200's absolute goals (issue "beat CUB in device time at every size"): checked only on runs
# made on an H200, as the recording's goals. The fractions of the ceiling are the H200's TB/s goals
# over its datasheet's 4.8 TB/s, so on an H200 both say the same.
H200_GOAL_2_20_US = 2.6
H200_GOAL_TBPS = {2**28: 4.50, 2**30: 4.55}
GOAL_CEILING_FRACTION = {n: tbps / datasheet("NVIDIA H200")[0] for n, tbps in H200_GOAL_TBPS.items()}


def is_h200(results: dict[str, Any]) -> bool:
    """Whether a run was made on an H200 (its absolute goals apply)."""
    return ceiling_of(results).gpu.startswith("NVIDIA H200")


def goals(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The speed goals whose sizes ``results`` holds, each ``{"pass", "detail"}`` (device time;
    the details give each median with its spread over the repetitions): the relative ones on any
    GPU, and the H200's absolute ones on a run made on an H200."""
    out: dict[str, dict[str, Any]] = {}
    sizes = set(results.get("sizes", []))
    top = ceiling_of(results)
    n = 2**20
    best, cs = best_kernel(results, n), find_row(results, n, CUPY_SUM)
    if best and cs:
        name = f"{best['name']}<{best['block']}>"
        if is_h200(results):
            out[f"best <= {H200_GOAL_2_20_US} us at 2^20 (the H200's goal)"] = {
                "pass": best["total_us"] <= H200_GOAL_2_20_US,
                "detail": f"{name} {_with_spread(best)}"}
        if "deterministic" in best:
            out["best deterministic at 2^20"] = {
                "pass": bool(best["deterministic"]) and bool(best.get("correct")),
                "detail": f"{name}: {'the same bits' if best['deterministic'] else 'different bits'} in "
                          f"{best['determinism_runs']} runs, |error| {best['abs_err']:.3g} <= bound {best['err_bound']:.3g}"}
        empty = find_row(results, n, EMPTY)
        if empty and "host_us" in best and "host_us" in empty:
            ratio = best["host_us"] / empty["host_us"]
            out[f"best host-inclusive at 2^20 within {GOAL_HOST_FLOOR}x of the empty kernel's"] = {
                "pass": ratio <= GOAL_HOST_FLOOR,
                "detail": f"{name} {_with_spread(best, 'host_us')}, empty kernel {_with_spread(empty, 'host_us')}: "
                          f"x{ratio:.2f}"}
    for n, goal in GOAL_VS_CUPY.items():
        best, cs = best_kernel(results, n), find_row(results, n, CUPY_SUM)
        if best and cs:
            out[f"best >= {goal:.2f}x cupy.sum at {size_label(n)}"] = {
                "pass": best["vs_cupy_sum"] >= goal,
                "detail": f"{best['name']}<{best['block']}> {_with_spread(best)}, cupy.sum {_with_spread(cs)}: "
                          f"x{best['vs_cupy_sum']:.3f}"}
    for n, frac in GOAL_CEILING_FRACTION.items():
        best = best_kernel(results, n)
        if not best:
            continue
        sp = spread(best)
        rng = f" ({4 * n / sp[1] / 1e6:.3f}–{4 * n / sp[0] / 1e6:.3f})" if sp else ""
        measured = f"{best['name']}<{best['block']}> {best['gbps'] / 1e3:.3f} TB/s{rng}, {top.percent(best['gbps'])}"
        if top.tbps is not None:
            out[f"best >= {100 * frac:.1f} % of the memory ceiling at {size_label(n)}"] = {
                "pass": best["gbps"] / 1e3 >= frac * top.tbps, "detail": measured}
        if is_h200(results):
            goal = H200_GOAL_TBPS[n]
            out[f"best >= {goal:.2f} TB/s at {size_label(n)} (the H200's goal)"] = {
                "pass": best["gbps"] >= goal * 1e3, "detail": measured}
    if results.get("kind") == "sweep" and sizes:
        worst = min((best_kernel(results, n) for n in sorted(sizes)), key=lambda r: r["vs_cupy_sum"])
        out[f"best within {100 * (1 - GOAL_SWEEP_SLACK):.0f} % of cupy.sum or faster at every size"] = {
            "pass": worst["vs_cupy_sum"] >= GOAL_SWEEP_SLACK,
            "detail": f"lowest: {worst['name']}<{worst['block']}> x{worst['vs_cupy_sum']:.3f} at {size_label(worst['n'])}"}
    return out
