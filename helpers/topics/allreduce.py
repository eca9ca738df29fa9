"""All-reduce across GPUs (notebook 08): ring and tree schedules, emulated on the CPU with simulated
ranks; what each rank sends; NCCL's algbw and busbw; the NCCL recording and its text.

An **all-reduce** over ``n`` ranks (one process per GPU) leaves on every rank the elementwise sum of
all ranks' input buffers. NCCL runs it on real GPUs (``scripts/gpu/nccl_allreduce.py``); here the
same data movement is replayed in NumPy so every step can be drawn and checked:

* a :class:`Schedule` says which rank sends which chunk to which rank at each step, and whether the
  receiver adds it to its own copy (``"add"``) or overwrites its copy with it (``"copy"``). It
  depends only on the algorithm, the rank count and the chunk count, never on the values;
* :func:`run` applies a schedule to real float32 inputs of shape ``(n_ranks, n_elements)``. All
  transfers of a step read the values held at the start of the step (every rank sends at once);
  adds into one cell apply in the schedule's order, so the float32 rounding is defined;
* :func:`contributors` and :func:`meaningful` (what figures draw) and :func:`summation_order` (which
  float additions a result went through) are derived from the schedule alone.

The algorithms:

* **ring** (reduce-scatter, then all-gather): the buffer is cut into ``n`` chunks. In reduce-scatter
  step ``s`` (0-based) rank ``r`` sends chunk ``(r - s) mod n`` to rank ``r + 1``, which adds it to its
  own; after ``n - 1`` steps rank ``r`` holds the full sum of chunk ``(r + 1) mod n``. All-gather step
  ``s`` passes chunk ``(r + 1 - s) mod n`` on, and the receiver overwrites its copy.
* **tree**: the binary tree of ``ncclGetBtree`` (NCCL's ``src/graph/trees.cc``; root 0, at most two
  children each). NCCL builds it over the nodes of a job and chains the GPUs inside a node; here it is
  built over the ranks, as if every rank were its own node. **Pipelined**: chunk ``j`` leaves a rank of
  height ``h`` (0 for a leaf) towards the root at step ``j + h`` (0-based), and once the root has it,
  moves one level down per step. NCCL runs two such trees at once (``ncclGetDtree``: the second one
  mirrored, or shifted by one for an odd count), each carrying half of the data;
  :func:`tree_bytes_sent` counts both variants.

The byte counts and the bandwidth formulas follow NCCL's own performance notes, nccl-tests
``doc/PERFORMANCE.md`` (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
``algbw = S / t`` and, for an all-reduce, ``busbw = algbw * 2 (n - 1) / n``.

Nothing here imports CuPy or matplotlib.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from helpers.topics.allreduce_recording import (NVLS_VAR, RECORDING, child_env, code_markdown, format_busbw_vs_nvlink,
                                                format_correctness, format_float_check, format_hierarchical,
                                                format_sweep, is_multi_gpu, iterations_for, load_recording,
                                                nccl_version_text, nvlink_links, parse_size, recording_status,
                                                size_label, sweep_sizes, validate_recording)


# The all-reduce notebook and the NCCL script read the recording through this module too: its names are re-exported.
__all__ = ["ALGORITHMS", "MAX_RANKS", "MAX_HISTORY_VALUES", "U32", "U64", "check_algorithm", "check_ranks",
           "chunk_bounds", "Transfer", "Schedule", "check_step", "check_chunk", "ring_schedule", "btree_parent",
           "btree_parents", "dtree_parents", "tree_heights", "tree_schedule", "schedule", "contributors", "meaningful",
           "summation_order", "AllReduceRun", "check_inputs", "run", "error_bound", "ulps_apart", "OrderComparison",
           "compare_orders", "random_inputs", "integer_inputs", "order_text", "bytes_moved", "busbw_factor",
           "ring_bytes_per_rank", "algbw", "busbw", "tree_bytes_sent", "reduce_broadcast_bytes_sent", "traffic_table",
           "step_table", "factor_table", "ring_model", "ring_model_table", "RECORDING", "NVLS_VAR", "parse_size", "size_label", "sweep_sizes",
           "iterations_for", "child_env", "nccl_version_text", "validate_recording", "load_recording", "is_multi_gpu",
           "recording_status", "format_sweep", "format_correctness", "format_float_check", "format_hierarchical",
           "nvlink_links", "format_busbw_vs_nvlink", "code_markdown"]

ALGORITHMS: tuple[str, ...] = ("ring", "tree")
MAX_RANKS = 64                  # simulated ranks; NCCL itself has no such limit
MAX_HISTORY_VALUES = 1 << 22    # float32 values kept when run(..., history=True): 16 MiB
U32 = 2.0 ** -24                # float32 unit roundoff
U64 = 2.0 ** -53


# ---------------------------------------------------------------- checks


def check_algorithm(algorithm: Any) -> str:
    """Return ``algorithm`` if it is one of :data:`ALGORITHMS`."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(map(repr, ALGORITHMS))}; got {algorithm!r}")
    return algorithm


def _check_int(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}]; got {value!r}")
    return int(value)


def check_ranks(n_ranks: Any) -> int:
    """Return ``n_ranks`` if it is an integer in [1, MAX_RANKS]."""
    return _check_int(n_ranks, "n_ranks (the number of simulated ranks)", 1, MAX_RANKS)


def chunk_bounds(n_elements: int, n_chunks: int) -> tuple[tuple[int, int], ...]:
    """``(start, stop)`` of each of ``n_chunks`` chunks of ``n_elements`` elements.

    As ``numpy.array_split``: the first ``n_elements % n_chunks`` chunks hold one element more, so
    sizes differ by at most one; with fewer elements than chunks the last chunks are empty.
    """
    m = _check_int(n_elements, "n_elements", 0, 2**62)
    c = _check_int(n_chunks, "n_chunks", 1, 2**31)
    base, extra = divmod(m, c)
    stops = np.cumsum([base + (1 if k < extra else 0) for k in range(c)])
    starts = np.concatenate([[0], stops[:-1]])
    return tuple((int(a), int(b)) for a, b in zip(starts, stops))


# ---------------------------------------------------------------- schedules


@dataclass(frozen=True)
class Transfer:
    """One message of one step: ``src`` sends its copy of ``chunk`` to ``dst``, which adds it to its
    own copy (``op == "add"``) or replaces its copy with it (``op == "copy"``)."""

    src: int
    dst: int
    chunk: int
    op: str


@dataclass(frozen=True)
class Schedule:
    """Who sends what at each step of one all-reduce (independent of the values).

    ``steps[k - 1]`` holds the transfers of step ``k`` (k = 1 .. n_steps); ``labels[0]`` describes
    the input and ``labels[k]`` step ``k``. ``parent`` is the tree (``-1`` for the root) or None.
    """

    algorithm: str
    n_ranks: int
    n_chunks: int
    steps: tuple[tuple[Transfer, ...], ...]
    labels: tuple[str, ...]
    parent: Optional[tuple[int, ...]] = None

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    def transfers(self, step: int) -> tuple[Transfer, ...]:
        """The transfers of ``step`` (none for step 0, the input)."""
        check_step(self, step)
        return self.steps[step - 1] if step else ()


def check_step(schedule: Schedule, step: Any) -> int:
    """Return ``step`` if it is in [0, schedule.n_steps]."""
    return _check_int(step, f"step (for {schedule.algorithm} with {schedule.n_ranks} ranks)", 0, schedule.n_steps)


def check_chunk(schedule: Schedule, chunk: Any, name: str = "chunk") -> int:
    """Return ``chunk`` if it is one of the schedule's chunks, [0, n_chunks - 1]."""
    return _check_int(chunk, f"{name} (for {schedule.n_chunks} chunks)", 0, schedule.n_chunks - 1)


def ring_schedule(n_ranks: int) -> Schedule:
    """Ring all-reduce over ``n_ranks``: reduce-scatter (n - 1 steps), then all-gather (n - 1 steps)."""
    n = check_ranks(n_ranks)
    steps, labels = [], [_input_label(n, "cut into one chunk per rank")]
    for s in range(n - 1):      # reduce-scatter: pass partial sums on, adding your own
        steps.append(tuple(Transfer(r, (r + 1) % n, (r - s) % n, "add") for r in range(n)))
        labels.append(f"reduce-scatter {s + 1}/{n - 1}: every rank adds the chunk it receives from the rank before it")
    for s in range(n - 1):      # all-gather: pass complete sums on, overwriting
        steps.append(tuple(Transfer(r, (r + 1) % n, (r + 1 - s) % n, "copy") for r in range(n)))
        labels.append(f"all-gather {s + 1}/{n - 1}: every rank copies the complete chunk it receives")
    return Schedule("ring", n, n, tuple(steps), tuple(labels))


def btree_parent(n_ranks: int, rank: int) -> int:
    """The parent of ``rank`` in NCCL's binary tree over ``n_ranks`` (-1 for the root, rank 0). NCCL
    applies the rule to node indices (its trees span nodes); the emulator applies it to ranks.

    The rule of ``ncclGetBtree`` (NCCL ``src/graph/trees.cc``): with ``bit`` the lowest set bit of
    ``rank``, the parent is ``(rank ^ bit) | (bit << 1)``, or ``rank ^ bit`` when that is out of range.
    """
    n = check_ranks(n_ranks)
    r = _check_int(rank, "rank", 0, n - 1)
    if r == 0:
        return -1
    bit = r & -r
    up = (r ^ bit) | (bit << 1)
    return up if up < n else r ^ bit


def btree_parents(n_ranks: int) -> tuple[int, ...]:
    """:func:`btree_parent` of every rank."""
    return tuple(btree_parent(n_ranks, r) for r in range(check_ranks(n_ranks)))


def dtree_parents(n_ranks: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The two trees of NCCL's double binary tree (``ncclGetDtree``): the binary tree, and its mirror
    image (rank r -> n - 1 - r) for an even rank count, or the tree shifted by one rank for an odd one."""
    n = check_ranks(n_ranks)
    first = btree_parents(n)
    if n % 2 == 0:
        second = tuple(-1 if (p := first[n - 1 - r]) < 0 else n - 1 - p for r in range(n))
    else:
        second = tuple(-1 if (p := first[(r - 1) % n]) < 0 else (p + 1) % n for r in range(n))
    return first, second


def _children(parent: Sequence[int]) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in parent]
    for r, p in enumerate(parent):
        if p >= 0:
            kids[p].append(r)
    return kids


def tree_heights(parent: Sequence[int]) -> list[int]:
    """Height of every rank in the tree ``parent``: 0 for a leaf, 1 + the highest child's otherwise."""
    kids = _children(parent)
    height = [0] * len(parent)
    for r in sorted(range(len(parent)), key=lambda r: -_depth(parent, r)):   # deepest ranks first
        height[r] = 1 + max((height[c] for c in kids[r]), default=-1)
    return height


def _depth(parent: Sequence[int], rank: int) -> int:
    d = 0
    while parent[rank] >= 0:
        rank, d = parent[rank], d + 1
    return d


def tree_schedule(n_ranks: int, n_chunks: Optional[int] = None) -> Schedule:
    """Pipelined binary-tree all-reduce over ``n_ranks`` with ``n_chunks`` chunks (default: one per rank).

    Reduce: chunk j leaves a rank of height h for its parent at step j + h + 1 (1-based), when all of
    the rank's children have sent it theirs; the parent adds it. Broadcast: once the root holds chunk
    j complete, the chunk moves one level down per step (the receiver overwrites its copy). One chunk
    per link and direction per step; (n_chunks - 1) + 2 * height(root) steps in all.
    """
    n = check_ranks(n_ranks)
    c = n if n_chunks is None else _check_int(n_chunks, "n_chunks", 1, 4 * MAX_RANKS)
    parent = btree_parents(n)
    height = tree_heights(parent)
    top = height[0]
    n_steps = (c - 1) + 2 * top if n > 1 else 0
    by_step: list[list[Transfer]] = [[] for _ in range(n_steps)]
    for r in range(1, n):
        for j in range(c):
            by_step[j + height[r]].append(Transfer(r, parent[r], j, "add"))
            by_step[j + top + _depth(parent, r) - 1].append(Transfer(parent[r], r, j, "copy"))
    steps = tuple(tuple(sorted(ts, key=lambda t: (t.op, t.dst, t.chunk, t.src))) for ts in by_step)
    labels = [_input_label(n, "cut into chunks")]
    for ts in steps:
        up = sorted({t.chunk for t in ts if t.op == "add"})
        down = sorted({t.chunk for t in ts if t.op == "copy"})
        parts = ([f"chunk{'s' if len(up) > 1 else ''} {_list(up)} up (parents add)"] if up else []) + \
                ([f"chunk{'s' if len(down) > 1 else ''} {_list(down)} down (children copy)"] if down else [])
        labels.append("; ".join(parts))
    return Schedule("tree", n, c, steps, tuple(labels), parent)


def _input_label(n_ranks: int, how: str) -> str:
    if n_ranks == 1:
        return "input: one rank, nothing to send: its buffer already is the sum"
    return f"input: rank r holds its own buffer, {how}"


def _list(items: Sequence[int]) -> str:
    return ", ".join(map(str, items))


def schedule(algorithm: str, n_ranks: int, n_chunks: Optional[int] = None) -> Schedule:
    """The schedule of ``algorithm`` ("ring" or "tree") over ``n_ranks``. ``n_chunks`` applies to the
    tree only (the ring always cuts the buffer into one chunk per rank)."""
    if check_algorithm(algorithm) == "ring":
        if n_chunks is not None and n_chunks != n_ranks:
            raise ValueError(f"n_chunks must equal n_ranks ({n_ranks}) for the ring; got {n_chunks!r}")
        return ring_schedule(n_ranks)
    return tree_schedule(n_ranks, n_chunks)


# ---------------------------------------------------------------- what each cell holds


def contributors(sched: Schedule) -> np.ndarray:
    """(n_steps + 1, n_ranks, n_chunks, n_ranks) bool: whose input is summed into each rank's copy of
    each chunk after each step (``[k, r, c, q]``: rank q's input is in rank r's chunk c after step k)."""
    n, c = sched.n_ranks, sched.n_chunks
    out = np.zeros((sched.n_steps + 1, n, c, n), bool)
    out[0, np.arange(n), :, np.arange(n)] = True
    for k, ts in enumerate(sched.steps, start=1):
        out[k] = out[k - 1]
        for t in ts:
            out[k, t.dst, t.chunk] = (out[k, t.dst, t.chunk] | out[k - 1, t.src, t.chunk]) if t.op == "add" \
                else out[k - 1, t.src, t.chunk]
    return out


def meaningful(sched: Schedule) -> np.ndarray:
    """(n_steps + 1, n_ranks, n_chunks) bool: does the value a rank holds for a chunk after each step
    still flow into a result? After the last step every copy is a result; before, a copy matters if
    it is kept (not overwritten by a copy) and matters afterwards, or if it is sent to a copy that
    matters. The rest are values nobody reads."""
    m = np.zeros((sched.n_steps + 1, sched.n_ranks, sched.n_chunks), bool)
    m[-1] = True
    for k in range(sched.n_steps, 0, -1):
        keep = m[k].copy()
        ts = sched.steps[k - 1]
        for t in ts:
            if t.op == "copy":
                keep[t.dst, t.chunk] = False
        for t in ts:
            if m[k, t.dst, t.chunk]:
                keep[t.src, t.chunk] = True
        m[k - 1] = keep
    return m


def _apply_step(state: Any, ts: Sequence[Transfer], get: Callable[[Any, int, int], Any],
                put: Callable[[Any, int, int, Any], None], add: Callable[[Any, Any], Any]) -> None:
    """Apply one step: every transfer reads what its source held at the start of the step; adds into
    one cell apply in schedule order (``(own + first) + second``), copies overwrite."""
    sent = [get(state, t.src, t.chunk) for t in ts]
    for t, v in zip(ts, sent):
        put(state, t.dst, t.chunk, add(get(state, t.dst, t.chunk), v) if t.op == "add" else v)


def summation_order(sched: Schedule, chunk: int, rank: int = 0) -> str:
    """The float additions behind ``rank``'s copy of ``chunk`` at the end, as an expression over the
    ranks' inputs ``x0 .. x{n-1}`` (outer parentheses dropped), e.g. ``"((x2 + x3) + x0) + x1"``."""
    check_chunk(sched, chunk)
    _check_int(rank, "rank", 0, sched.n_ranks - 1)
    expr = [f"x{r}" for r in range(sched.n_ranks)]   # this chunk, on every rank

    def get(state: list, r: int, c: int) -> str:
        return state[r]

    def put(state: list, r: int, c: int, v: str) -> None:
        state[r] = v

    # Float addition is commutative (a + b == b + a bit for bit), so only the grouping matters; the
    # operands are written so that a ring's chain reads left to right and a tree node's own value first.
    join = (lambda own, got: f"({got} + {own})") if sched.algorithm == "ring" else (lambda own, got: f"({own} + {got})")
    for ts in sched.steps:
        _apply_step(expr, [t for t in ts if t.chunk == chunk], get, put, join)
    text = expr[rank]
    return text[1:-1] if text.startswith("(") and _matching(text) == len(text) - 1 else text


def _matching(text: str) -> int:
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return i
    return -1


# ---------------------------------------------------------------- running it on values


@dataclass(frozen=True)
class AllReduceRun:
    """One emulated all-reduce: ``result`` (n_ranks, n_elements) float32 is every rank's buffer at the
    end; ``held`` (n_steps + 1, n_ranks, n_elements) what each rank held after each step (with
    ``history=True``, else None)."""

    schedule: Schedule
    inputs: np.ndarray
    bounds: tuple[tuple[int, int], ...]
    result: np.ndarray
    held: Optional[np.ndarray]

    @property
    def reference(self) -> np.ndarray:
        """The sum computed in float64 and rounded once to float32 (far more accurate than any float32 order)."""
        return self.inputs.astype(np.float64).sum(axis=0).astype(np.float32)

    @property
    def numpy_float32(self) -> np.ndarray:
        """NumPy's own float32 answer, ``np.sum(inputs, axis=0)``."""
        return np.sum(self.inputs, axis=0)

    def agrees(self) -> bool:
        """Every rank holds the same buffer, and each element is within the float32 error bound of any
        summation order (:func:`error_bound`) of the float64 reference."""
        same = bool((self.result == self.result[:1]).all())
        err = np.abs(self.result[0].astype(np.float64) - self.inputs.astype(np.float64).sum(axis=0))
        return same and bool((err <= error_bound(self.inputs)).all())


def check_inputs(inputs: Any) -> np.ndarray:
    """``inputs`` as a (n_ranks, n_elements) float32 array (one row per rank); ValueError otherwise."""
    x = np.asarray(inputs)
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"inputs must have shape (n_ranks, n_elements), one row per rank; got shape {x.shape}")
    check_ranks(x.shape[0])
    if x.dtype != np.float32:
        raise ValueError(f"inputs must be float32 (the dtype NCCL sums here); got {x.dtype}")
    return x


def run(inputs: Any, algorithm: str, n_chunks: Optional[int] = None, history: bool = False) -> AllReduceRun:
    """All-reduce ``inputs`` (n_ranks, n_elements) float32 with ``algorithm``, step by step, on the CPU.

    Memory: ``history=True`` keeps every step (at most :data:`MAX_HISTORY_VALUES` values; ValueError
    beyond); otherwise only the current buffers are held.
    """
    x = check_inputs(inputs)
    sched = schedule(algorithm, x.shape[0], n_chunks)
    bounds = chunk_bounds(x.shape[1], sched.n_chunks)
    if history and (sched.n_steps + 1) * x.size > MAX_HISTORY_VALUES:
        raise ValueError(f"history=True would keep {(sched.n_steps + 1) * x.size:,} values (more than "
                         f"{MAX_HISTORY_VALUES:,}); use fewer ranks or elements, or history=False")
    state = x.copy()
    held = [state.copy()] if history else None

    def get(s: np.ndarray, r: int, c: int) -> np.ndarray:
        a, b = bounds[c]
        return s[r, a:b].copy()

    def put(s: np.ndarray, r: int, c: int, v: np.ndarray) -> None:
        a, b = bounds[c]
        s[r, a:b] = v

    for ts in sched.steps:
        _apply_step(state, ts, get, put, np.add)   # float32 + float32: one rounding per addition
        if held is not None:
            held.append(state.copy())
    return AllReduceRun(sched, x, bounds, state, None if held is None else np.stack(held))


def error_bound(inputs: np.ndarray) -> np.ndarray:
    """Per element, a bound on |float32 sum - exact sum| that holds for ANY order of the n - 1 additions:
    ``gamma(n - 1) * sum(|x|)`` with ``gamma(k) = k u / (1 - k u)``, u = 2^-24 (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2nd ed., section 4.2), plus the float64 reference's own error."""
    x = np.asarray(inputs, np.float64)
    k = x.shape[0] - 1
    gamma = lambda u: k * u / (1 - k * u)  # noqa: E731
    return (gamma(U32) + gamma(U64) + U64) * np.abs(x).sum(axis=0)


def ulps_apart(a: Any, b: Any) -> np.ndarray:
    """How many float32 steps apart ``a`` and ``b`` are, elementwise (0: bitwise equal)."""
    def ordered(v: Any) -> np.ndarray:
        i = np.asarray(v, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(-(2**31)) - i, i)
    return np.abs(ordered(a) - ordered(b))


# ---------------------------------------------------------------- float order: different, not wrong


@dataclass(frozen=True)
class OrderComparison:
    """Ring, tree and NumPy float32 sums of the same inputs against each other and the float64 reference."""

    n_ranks: int
    n_elements: int
    results: dict[str, np.ndarray]   # "ring", "tree", "numpy float32" -> (n_elements,) float32
    reference: np.ndarray            # float64 sum, rounded once to float32
    bound: np.ndarray                # error_bound(inputs)
    exact: np.ndarray                # float64 sum

    def differ(self, a: str, b: str) -> int:
        """Elements where ``a`` and ``b`` are not bitwise equal."""
        return int((ulps_apart(self.results[a], self.results[b]) > 0).sum())

    def worst_fraction(self, name: str) -> float:
        """The largest |error| against the float64 sum, as a fraction of the any-order bound."""
        err = np.abs(self.results[name].astype(np.float64) - self.exact)
        return float((err / np.where(self.bound > 0, self.bound, 1.0)).max())

    def within_bound(self, name: str) -> bool:
        return bool((np.abs(self.results[name].astype(np.float64) - self.exact) <= self.bound).all())


def compare_orders(inputs: Any) -> OrderComparison:
    """:func:`run` both algorithms on ``inputs`` and compare them with NumPy's float32 ``np.sum``."""
    x = check_inputs(inputs)
    results = {name: run(x, name).result[0] for name in ALGORITHMS}
    results["numpy float32"] = np.sum(x, axis=0)
    exact = x.astype(np.float64).sum(axis=0)
    return OrderComparison(x.shape[0], x.shape[1], results, exact.astype(np.float32), error_bound(x), exact)


def random_inputs(n_ranks: int, n_elements: int, seed: int = 0) -> np.ndarray:
    """(n_ranks, n_elements) float32, standard normal, fixed by ``seed``."""
    check_ranks(n_ranks)
    _check_int(n_elements, "n_elements", 1, 1 << 26)
    return np.random.default_rng([seed, n_ranks]).standard_normal((n_ranks, n_elements)).astype(np.float32)


def integer_inputs(n_ranks: int, n_elements: int) -> np.ndarray:
    """(n_ranks, n_elements) float32 small integers, rank r element i = (r + 1) * (i % 5 + 1): any
    order of additions gives the exact sum, so every algorithm must match NumPy bit for bit."""
    check_ranks(n_ranks)
    _check_int(n_elements, "n_elements", 1, 1 << 26)
    r, i = np.meshgrid(np.arange(n_ranks), np.arange(n_elements), indexing="ij")
    return ((r + 1) * (i % 5 + 1)).astype(np.float32)


def order_text(cmp: OrderComparison, values: str = "standard normal") -> str:
    """The comparison as a table: per result, elements that differ from each other result, and the worst
    error against the float64 sum as a fraction of :func:`error_bound` (inside: at most 1). ``values``
    says what the inputs are, for the heading."""
    names = list(cmp.results)
    head = f"{cmp.n_ranks} ranks, {cmp.n_elements:,} float32 elements ({values})"
    w = max(map(len, names))
    lines = [head, "elements that differ (not bitwise equal), and the worst error against the float64 sum "
                   "as a fraction of the any-order bound:",
             f"{'':<{w}}  " + "  ".join(f"{'≠ ' + b:>16}" for b in names) + "  worst error / bound"]
    for a in names:
        cells = "  ".join(f"{('-' if a == b else f'{cmp.differ(a, b):,}'):>16}" for b in names)
        verdict = "inside" if cmp.within_bound(a) else "OUTSIDE"
        lines.append(f"{a:<{w}}  {cells}  {cmp.worst_fraction(a):>10.4f} ({verdict})")
    return "\n".join(lines)


# ---------------------------------------------------------------- bytes and bandwidth


def bytes_moved(sched: Schedule, n_elements: int, itemsize: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(sent, received) bytes per rank for one all-reduce of ``n_elements`` items with ``sched``,
    counted from the transfers (empty chunks send nothing)."""
    sizes = np.array([b - a for a, b in chunk_bounds(n_elements, sched.n_chunks)], np.int64) * itemsize
    sent = np.zeros(sched.n_ranks, np.int64)
    received = np.zeros(sched.n_ranks, np.int64)
    for ts in sched.steps:
        for t in ts:
            sent[t.src] += sizes[t.chunk]
            received[t.dst] += sizes[t.chunk]
    return sent, received


def busbw_factor(n_ranks: int) -> float:
    """NCCL's all-reduce bus-bandwidth factor ``2 (n - 1) / n`` (nccl-tests ``doc/PERFORMANCE.md``):
    the fraction of the buffer each rank must send (and receive) at best."""
    n = _check_int(n_ranks, "n_ranks", 1, 1 << 20)
    return 2.0 * (n - 1) / n


def ring_bytes_per_rank(size_bytes: float, n_ranks: int) -> float:
    """Bytes each rank sends in a ring all-reduce of ``size_bytes`` (evenly divisible): 2 (n - 1) S / n."""
    return busbw_factor(n_ranks) * size_bytes


def algbw(size_bytes: float, seconds: float) -> float:
    """Algorithm bandwidth ``S / t`` in bytes per second (nccl-tests ``doc/PERFORMANCE.md``)."""
    if seconds <= 0:
        raise ValueError(f"seconds must be > 0; got {seconds!r}")
    return size_bytes / seconds


def busbw(size_bytes: float, seconds: float, n_ranks: int) -> float:
    """All-reduce bus bandwidth ``algbw * 2 (n - 1) / n`` in bytes per second: comparable to the
    hardware's link bandwidth whatever the rank count (0 for one rank, which sends nothing)."""
    return algbw(size_bytes, seconds) * busbw_factor(n_ranks)


def tree_bytes_sent(n_ranks: int, size_bytes: float, double: bool = False) -> np.ndarray:
    """Bytes each rank sends in a tree all-reduce of ``size_bytes``: every non-root sends the buffer up
    once and every rank sends it down to each child. ``double``: NCCL's two trees, each carrying
    half the buffer (:func:`dtree_parents`)."""
    trees = dtree_parents(n_ranks) if double else (btree_parents(n_ranks),)
    share = size_bytes / len(trees)
    sent = np.zeros(check_ranks(n_ranks))
    for parent in trees:
        for r, kids in enumerate(_children(parent)):
            sent[r] += share * ((parent[r] >= 0) + len(kids))
    return sent


def reduce_broadcast_bytes_sent(n_ranks: int, size_bytes: float) -> np.ndarray:
    """Bytes each rank sends when everyone sends its buffer to rank 0, which adds them and sends the
    sum back to everyone: rank 0 sends (n - 1) S, the others S."""
    n = check_ranks(n_ranks)
    sent = np.full(n, float(size_bytes) if n > 1 else 0.0)
    sent[0] = (n - 1) * size_bytes
    return sent


def traffic_table(rank_counts: Sequence[int] = (2, 4, 8, 16), n_elements: int = 1 << 20) -> str:
    """Most bytes any one rank sends, in units of the buffer size S, per algorithm and rank count.

    ring and tree are counted from the emulator's schedules (:func:`bytes_moved`), the double tree and
    reduce-then-broadcast from their rules; the last column is NCCL's ``2 (n - 1) / n``.
    """
    size = 4 * n_elements
    cols = ("ring", "tree", "double tree", "reduce+bcast", "2(n-1)/n")
    lines = [f"{'ranks':>5}  " + "  ".join(f"{c:>12}" for c in cols)]
    for n in rank_counts:
        ring = bytes_moved(ring_schedule(n), n_elements)[0].max() / size
        tree = bytes_moved(tree_schedule(n), n_elements)[0].max() / size
        dtree = tree_bytes_sent(n, size, double=True).max() / size
        star = reduce_broadcast_bytes_sent(n, size).max() / size
        lines.append(f"{n:>5}  " + "  ".join(f"{v:>11.3f}S" for v in (ring, tree, dtree, star, busbw_factor(n))))
    return "\n".join(lines)


def step_table(rank_counts: Sequence[int] = (2, 4, 8, 16, 64)) -> str:
    """Steps of one all-reduce: ring 2 (n - 1); pipelined tree (chunks - 1) + 2 * height, for one chunk
    (no pipelining) and for one chunk per rank."""
    lines = [f"{'ranks':>5}  {'ring':>6}  {'tree height':>11}  {'tree, 1 chunk':>13}  {'tree, n chunks':>14}"]
    for n in rank_counts:
        h = tree_heights(btree_parents(n))[0]
        lines.append(f"{n:>5}  {ring_schedule(n).n_steps:>6}  {h:>11}  {tree_schedule(n, 1).n_steps:>13}  "
                     f"{tree_schedule(n).n_steps:>14}")
    return "\n".join(lines)


def factor_table(rank_counts: Sequence[int] = (1, 2, 3, 4, 8, 16, 64)) -> str:
    """``busbw / algbw = 2 (n - 1) / n`` for some rank counts."""
    return "ranks         " + "".join(f"{n:>7}" for n in rank_counts) + "\n" + \
           "2(n-1)/n      " + "".join(f"{busbw_factor(n):>7.3f}" for n in rank_counts)


def ring_model(n_ranks: int, size: float) -> tuple[float, float, float]:
    """A ring all-reduce under the simplest cost model, not a measurement: each of its 2(n - 1) steps
    costs one latency α, and each rank sends 2(n - 1)/n · S over a link of bandwidth B (sections 2-3).

    ``size`` is S in units of α·B, the message whose bandwidth term equals one step's latency. Returns
    (t / α, algbw / B, busbw / B): time in latencies, and both bandwidths as fractions of the link's."""
    n = check_ranks(n_ranks)
    if n < 2:
        raise ValueError(f"n_ranks must be at least 2 for a ring that sends anything; got {n}")
    if not size > 0:
        raise ValueError(f"size must be a positive multiple of α·B; got {size!r}")
    t = 2 * (n - 1) + busbw_factor(n) * size
    alg = size / t
    return t, alg, alg * busbw_factor(n)


def ring_model_table(n_ranks: int = 8, sizes: Sequence[float] = (0.01, 0.1, 1, 10, 100, 1000, 10000)) -> str:
    """:func:`ring_model` at each of ``sizes`` (S in units of α·B): the shape a recorded sweep should take
    (flat time and rising bandwidth while latency rules; time growing with S and busbw approaching B once
    bandwidth rules), with no hardware's numbers in it."""
    lines = [f"ring, {n_ranks} ranks; S in units of α·B (α: one step's latency, B: link bandwidth)",
             f"{'S / (α·B)':>10}{'t / α':>10}{'algbw / B':>11}{'busbw / B':>11}"]
    for s in sizes:
        t, alg, bus = ring_model(n_ranks, s)
        lines.append(f"{s:>10g}{t:>10.1f}{alg:>11.3f}{bus:>11.3f}")
    return "\n".join(lines)
