"""A run's results, recorded or live, and the queries over them (anywhere: no GPU, no CuPy).

A run is a JSON-ready dict: ``kind`` (one of :data:`KINDS`), ``sizes``, ``versions``, ``block``,
``timing`` and ``rows``, one dict per measurement: ``name`` (a version of
:mod:`helpers.topics.reduce`, :data:`CUPY_SUM`, :data:`COPY`, :data:`EMPTY` or :data:`SEED`),
``n``, ``block`` and its times (``total_us``, or ``first_pass_us`` for the seed's first pass alone;
``<key>_reps`` every repetition; ``host_us``), and ``ceiling`` (the GPU's memory attributes,
:mod:`helpers.bench.ceiling`). :func:`load_recorded` reads ``data/bench_<kind>.json`` (the shipped
H200 runs) and labels it with its ``source``, :func:`load_local` a learner's own run;
:func:`record` writes one, stamped.

Contract: the queries find rows (:func:`rows_for`, :func:`find_row`, :func:`version_row`,
:func:`best_kernel`, :func:`time_row`) or derive numbers from them (:func:`graph_time_usable`, :func:`spread`, :func:`time_us`,
:func:`speedup`, :func:`crossover`, :func:`step_ratios`, :func:`step_verdict`); none changes a run.
Imports engine and topics (and :mod:`helpers.data`, which imports only engine, for the files).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from helpers.engine import backend
from helpers.topics import reduce as R

KINDS: tuple[str, ...] = ("ladder", "sweep", "tune")
CUPY_SUM = "cupy.sum"
COPY = "copy"
SEED = "seed_reduce_v4"
EMPTY = "empty kernel"
SEED_N = 2**25


def record_name(kind: str) -> str:
    """The data/ file of a recorded run: ``bench_ladder``, ``bench_sweep`` or ``bench_tune``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return f"bench_{kind}"


def size_label(n: int) -> str:
    """``2^25`` for powers of two, the number otherwise."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


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


def load_local(kind: str = "ladder") -> Optional[dict[str, Any]]:
    """The learner's own run of ``kind`` (``python -m helpers.bench --record`` or
    ``python -m helpers.recording.record`` on their GPU: :func:`helpers.data.local_dir`), labelled
    ``recorded on <GPU> ... (your GPU)``; None when there is none (the charts then draw as shipped)."""
    from helpers import data

    results = data.load_local(record_name(kind))
    if results is None:
        return None
    results["source"] = data.label(results.get("stamp", {})) + " (your GPU)"
    return results


def record(results: dict[str, Any]) -> Any:
    """Write ``results`` (from a run on this GPU) to ``bench_<kind>.json`` in
    :func:`helpers.data.record_dir`, stamped; return the path."""
    from helpers import data

    return data.write(record_name(results["kind"]), results, backend.stamp())


def rows_for(results: dict[str, Any], n: int, name: Optional[str] = None, block: Optional[int] = None) -> list[dict[str, Any]]:
    """The rows of ``results`` at size ``n`` (and ``name``, ``block`` if given)."""
    return [r for r in results["rows"] if r["n"] == n and (name is None or r["name"] == name)
            and (block is None or r.get("block") == block)]


def find_row(results: dict[str, Any], n: int, name: str, block: Optional[int] = None) -> Optional[dict[str, Any]]:
    """The first row of ``results`` at size ``n`` named ``name`` (at ``block`` if given), or None."""
    found = rows_for(results, n, name, block)
    return found[0] if found else None


def version_row(results: dict[str, Any], n: int, version: str) -> Optional[dict[str, Any]]:
    """The row that stands for ``version`` at size ``n``: at the run's block size, or, for a
    version that picks its own block (v9), the row run with its own choice."""
    return (find_row(results, n, version, results.get("block", R.DEFAULT_BLOCK))
            or next((r for r in rows_for(results, n, version) if r.get("default_block")), None))


def graph_time_usable(row: dict[str, Any]) -> bool:
    """False when a row's device time per call (CUDA-graph replay) is longer than its host-inclusive
    time per call (the direct call, launch path included): the graph then ran something slower than the
    call itself, so that device time does not stand for the call. Seen for the copy on the H200 from
    2^27 floats on (791 µs against 524 µs at 2^28 in data/bench_sweep.json). True when either is absent."""
    dev, host = row.get("total_us"), row.get("host_us")
    return not (isinstance(dev, (int, float)) and isinstance(host, (int, float)) and dev > host)


def spread(row: dict[str, Any], key: str = "total_us") -> Optional[tuple[float, float]]:
    """(min, max) over a row's interleaved repetitions of ``key`` (None for older recordings)."""
    reps = row.get(f"{key}_reps")
    return (min(reps), max(reps)) if reps else None


def best_kernel(results: dict[str, Any], n: int) -> Optional[dict[str, Any]]:
    """The fastest full reduction (end to end, device time) of the series at size ``n``, or None."""
    ours = [r for r in results["rows"] if r["n"] == n and r["name"] in R.VERSIONS and "total_us" in r]
    return min(ours, key=lambda r: r["total_us"]) if ours else None


def time_row(results: dict[str, Any], n: int, name: str) -> dict[str, Any]:
    """The row whose time stands for ``name`` at ``n``: a version (:func:`version_row`), the seed
    at its own 128 threads (first pass only), cupy.sum, copy or the empty kernel. ValueError when
    the run has no such row."""
    if name in R.VERSIONS:
        row = version_row(results, n, name)
    else:
        row = find_row(results, n, name, R.SEED_BLOCK if name == SEED else None)
    if row is None or not isinstance(row.get("total_us", row.get("first_pass_us")), (int, float)):
        names = sorted({r["name"] for r in results["rows"] if r["n"] == n})
        raise ValueError(f"name must be one of the rows at n={size_label(n)} ({', '.join(names) or 'none'}); "
                         f"got {name!r}")
    return row


def time_us(results: dict[str, Any], name: str, n: int) -> float:
    """End-to-end microseconds of ``name`` at size ``n`` (the seed kernel: its first pass only)."""
    row = time_row(results, n, name)
    return float(row.get("total_us", row.get("first_pass_us")))


def speedup(results: dict[str, Any], before: str, after: str, n: int) -> float:
    """Time of ``before`` / time of ``after`` at size ``n``, end to end, from one run (> 1: ``after``
    is faster). Names are versions (at the run's block size), ``cupy.sum``, ``copy`` or the seed."""
    return time_us(results, before, n) / time_us(results, after, n)


def crossover(results: dict[str, Any], a: str, b: str) -> Optional[int]:
    """The smallest size of the run from which ``a`` takes less time than ``b`` at that size and at
    every larger one (None if ``a`` is not faster at the largest size)."""
    found = None
    for n in sorted(results.get("sizes", []), reverse=True):
        if time_us(results, a, n) >= time_us(results, b, n):
            break
        found = n
    return found


# Two runs of the same kernels on the H200 an hour apart (2026-12-01)
# differed by up to 3 % at 2^20 and 0.1 % at 2^28, each time inside one run's tight spread: a step
# whose speed-up is within this of 1 is reported as drift, never as faster or slower.
DRIFT = 0.03


def step_ratios(results: dict[str, Any], n: int, versions: Sequence[str] = R.LADDER,
                block: Optional[int] = None) -> list[tuple[str, str, float]]:
    """``(from, to, speed-up)`` for each step of ``versions`` at size ``n``, end to end
    (speed-up = time before / time after; < 1 means the step made it slower)."""
    rows = [find_row(results, n, v, block) if block is not None else version_row(results, n, v) for v in versions]
    return [(versions[i], versions[i + 1], rows[i]["total_us"] / rows[i + 1]["total_us"])
            for i in range(len(rows) - 1) if rows[i] and rows[i + 1]]


def step_verdict(speedup: float) -> str:
    """``faster`` / ``SLOWER`` / ``same within drift`` (:data:`DRIFT`) for one step's speed-up."""
    if speedup > 1 + DRIFT:
        return "faster"
    if speedup < 1 - DRIFT:
        return "SLOWER"
    return "same within drift"
