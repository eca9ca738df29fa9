"""How results are compared with the NumPy reference, and what a wrong result suggests.

Float sums: with small whole-number inputs (:func:`whole_numbers`) every partial sum is exact in float32 (all stay far below
2^24), so any order of additions gives exactly the exact sum. With real inputs the order matters,
and a result passes within the worst-case error of any order of n - 1 float32 additions:
|got - exact| <= gamma(n - 1) * sum |x_i|, gamma(k) = k u / (1 - k u), u = 2^-24 (Higham, *Accuracy
and Stability of Numerical Algorithms*, 2nd ed., chapter 4: every x_i takes part in at most n - 1
additions, whatever the order).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from helpers.exercises.spec import fmt, lane_ranges

U32 = 2.0 ** -24

SUM_RULE = ("Sums are compared with a float64 reference. With small whole numbers (in [−8, 8]) as inputs, "
            "every partial sum is exact in float32, so any order of additions gives exactly that sum and the "
            "result must equal it. With real inputs the order of float32 additions changes the last bits, "
            "so the result passes when |got - exact| <= gamma(n-1) * sum|x|, gamma(k) = k*2^-24 / (1 - k*2^-24): "
            "a bound on the rounding error that holds for every order of the n - 1 float32 additions (Higham, Accuracy and Stability of "
            "Numerical Algorithms, chapter 4).")


def sum_bound(x: np.ndarray) -> float:
    """gamma(n - 1) * sum |x|: the float32 error bound of any summation order of ``x``."""
    k = max(int(np.size(x)) - 1, 0)
    gamma = k * U32 / (1.0 - k * U32)
    return gamma * float(np.abs(np.asarray(x, np.float64)).sum())


def sum_ok(got: float, x: np.ndarray, exact: bool = False) -> bool:
    """``got`` equals the exact sum of ``x`` (``exact``: for whole numbers), or is within
    :func:`sum_bound` of it."""
    if not np.isfinite(got):
        return False
    err = abs(float(got) - float(np.asarray(x, np.float64).sum()))
    return err == 0.0 if exact else err <= sum_bound(x)


def whole_numbers(rng: np.random.Generator, n: int, lo: int = -8, hi: int = 8) -> np.ndarray:
    """``n`` whole-number float32 values in [lo, hi], none of them zero (a dropped value always shows)."""
    v = rng.integers(lo, hi, size=n, endpoint=True)
    v[v == 0] = 1
    return v.astype(np.float32)


def explain_sum(got: float, x: np.ndarray, *, threads_per_warp: int = 32) -> Optional[str]:
    """A guess, from the numbers alone, at what a wrong block sum of ``x`` (one block) left out.

    Tried in order: thread 0's own value; warp 0 alone; the full warps without the partial last
    one; the warp sums of the first k warps only; the first k values. None when nothing fits.
    """
    n = x.size
    warps = (n + threads_per_warp - 1) // threads_per_warp
    sums = [x[w * threads_per_warp:(w + 1) * threads_per_warp] for w in range(warps)]

    def near(sub: np.ndarray) -> bool:
        return sub.size > 0 and abs(float(got) - float(np.asarray(sub, np.float64).sum())) <= sum_bound(sub)

    if float(got) == 0.0 and float(np.asarray(x, np.float64).sum()) != 0.0:
        if n < threads_per_warp:
            return ("0 is where a sum starts: thread 0 added none of the values. A block of fewer than 32 threads "
                    "still has one warp: is the number of warps rounded down to 0?")
        return "0 is where a sum starts: thread 0 added none of the values"
    if n > 1 and float(got) == float(x[0]):
        return "that is thread 0's own value: nothing was added to it"
    if warps > 1 and near(sums[0]):
        return ("that is the sum of warp 0 (threads 0..31) alone: the other warps' sums never reached "
                "thread 0")
    full = n // threads_per_warp * threads_per_warp
    if 0 < full < n and near(x[:full]):
        return (f"that is the sum of the full warps only (threads 0..{full - 1}): the partial last warp "
                f"(threads {full}..{n - 1}) was left out")
    for k in range(2, warps):
        if near(x[:k * threads_per_warp]):
            return (f"that is the sum of warps 0..{k - 1} only: the sums of warps {k}..{warps - 1} were "
                    f"never added")
    for k in range(2, n):
        if near(x[:k]) and not near(x):
            return f"that is the sum of threads 0..{k - 1} only"
    return None


def explain_max(got: float, x: np.ndarray) -> Optional[str]:
    """A guess at what a wrong warp maximum of the 32 values ``x`` did."""
    if float(got) == 0.0 and not (x == 0).any():
        return ("0 is not one of the 32 values: is your code starting from 0 (or adding)? With negative "
                "inputs the maximum is below 0")
    if np.isclose(float(got), float(np.asarray(x, np.float64).sum()), rtol=1e-5):
        return "that is the sum of the 32 values: combine with fmaxf, not +"
    fits = [k for k in range(1, 32) if float(got) == float(x[:k].max())]
    if fits and float(got) != float(x.max()):
        # A tree reduces power-of-two prefixes: of the prefixes that fit, name the one a missing step leaves.
        powers = [k for k in fits if k & (k - 1) == 0]
        k = max(powers) if powers else max(fits)
        return f"that is the maximum of lanes 0..{k - 1} only: the values of lanes {k}..31 never reached lane 0"
    if (x == got).any():
        lanes = np.flatnonzero(x == got)
        return f"that is the value of lane {lane_ranges(lanes)}, not the largest one"
    return None


def values_line(x: Sequence[float], limit: int = 40) -> str:
    """The values as a learner reads them, shortened past ``limit``."""
    x = list(x)
    head = ", ".join(fmt(v) for v in x[:limit])
    return head + (f", ... ({len(x)} values)" if len(x) > limit else "")
