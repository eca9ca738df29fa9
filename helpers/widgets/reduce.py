"""Explorers and plain-text tables for notebooks 03 (warp reduce trees), 04 (block reduce) and 05
(the reduce_v0 -> v4 ladder).

Each explorer is a pure view function from the widget values to a :class:`helpers.widgets.base.View`
(a figure and a text table, or a message saying what is wrong and what is allowed; it never raises)
wired to ipywidgets by :func:`helpers.widgets.base.build`: :func:`warp_tree_view` /
:func:`warp_tree_explorer` (op, width, value pattern, valid lanes, tree, partial-warp method, step),
:func:`block_view` / :func:`block_explorer` (blockDim.x, blockDim.y, op) and :func:`ladder_view` /
:func:`ladder_explorer` (version, block, n). The text tables are deterministic and print "undef" for
undefined values, so notebook outputs are the same on the GPU and on the CPU.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Optional

import numpy as np
from matplotlib.figure import Figure

from helpers.engine import backend as _backend
from helpers import bench
from helpers.widgets import base as explorer
from helpers.viz import boxes
from helpers.viz import lanes as figures
from helpers.engine import params
from helpers.topics import reduce_maps
from helpers.viz import ladder as FR
from helpers.topics import reduce as R
from helpers.widgets.base import View
from helpers.topics.block_reduce import MAX_THREADS, block_reduce
from helpers.topics.block_reduce import expected as block_reduce_expected
from helpers.engine.ops import REDUCE_SYNC, ulps_apart
from helpers.engine.params import LANES, WIDTHS
from helpers.topics.warp_reduce import (BITWISE_OPS, OPS, PARTIALS, TREES, FloatOrderBatch, WarpReduceResult, warp_reduce,
                          warp_reduce_trace)

PATTERNS: tuple[str, ...] = ("lane", "ones", "random ints", "random floats")
BLOCK_X_MAX = 128
BLOCK_Y_MAX = 32
UNDEF = boxes.UNDEF_TEXT


def engine_label(backend: Optional[str] = None) -> str:
    """"GPU: <name>" or "the emulator": what runs the helpers with this ``backend`` (for "computed by ..." lines,
    which tests/nbval_sanitize.cfg normalises)."""
    return explorer.engine_label(backend, cpu=explorer.MACHINE)


# ---------------------------------------------------------------- warp trees


def pattern_values(pattern: str, op: str = "sum") -> np.ndarray:
    """The 32 input values of ``pattern``: "lane" (lane l holds l), "ones", "random ints" (fixed seed;
    0..255 for the bitwise ops, -99..99 otherwise) or "random floats" (float32, standard normal)."""
    if not params.is_one_of(pattern, PATTERNS):
        raise ValueError(f"pattern must be one of {', '.join(map(repr, PATTERNS))}; got {params.quote(pattern)}")
    rng = np.random.default_rng(7)
    if pattern == "lane":
        return np.arange(LANES, dtype=np.int32)
    if pattern == "ones":
        return np.ones(LANES, np.int32)
    if pattern == "random ints":
        lo, hi = (0, 256) if op in BITWISE_OPS else (-99, 100)
        return rng.integers(lo, hi, LANES).astype(np.int32)
    return rng.standard_normal(LANES).astype(np.float32)


def _cell(v: Any, defined: bool, active: bool = True, digits: int = 6) -> str:
    if not active:
        return "-"
    return boxes.format_value(v, None, digits) if defined else UNDEF


def tree_table(trace: Any, *, warp: int = 0, lanes_per_block: int = 16) -> str:
    """Held values after each step of a warp trace, one row per step: "undef" where undefined and "-"
    for a lane that does not take part (it never called the shuffle)."""
    hdef = figures.held_defined(trace)
    rows = [("lane", [str(l) for l in range(LANES)])]
    for k in range(trace.n_steps):
        cells = [_cell(v, d, a) for v, d, a in zip(trace.held[k, warp], hdef[k, warp], trace.active[k, warp])]
        rows.append((f"{k} {trace.labels[k]}", cells))
    return figures.lane_blocks(rows, lanes_per_block)


def partial_counts(trace: Any, *, warp: int = 0) -> str:
    """Per step, how many lanes hold a partial that still flows to the result lane(s), and how many
    hold values nobody reads (:func:`helpers.viz.lanes.meaningful_lanes`)."""
    m = figures.meaningful_lanes(trace)[:, warp]
    lanes = " ".join(map(str, figures.result_lanes_of(trace)))
    lines = [f"step  {'label':<14} flows to lane(s) {lanes}   nobody reads"]
    for k in range(trace.n_steps):
        lines.append(f"{k:>4}  {trace.labels[k]:<14} {int(m[k].sum()):>{17 + len(lanes)}}   {int((~m[k]).sum()):>12}")
    return "\n".join(lines)


def result_lines(r: WarpReduceResult) -> str:
    """One line per segment: the result read from its first lane against NumPy's answer."""
    out = []
    for s in range(LANES // r.width):
        got = r.values[0, s * r.width]
        ok = bool(r.defined[0, s * r.width])
        exp = r.expected[0, s]
        both_nan = r.values.dtype.kind == "f" and np.isnan(got) and np.isnan(exp)
        verdict = "undefined" if not ok else "correct" if got == exp or both_nan else "WRONG"
        if verdict == "WRONG" and r.values.dtype.kind == "f" and not (np.isfinite(got) and np.isfinite(exp)):
            verdict = "differs from NumPy: inf or NaN on one side only (a float overflow, or NaN meeting max/min)"
        elif verdict == "WRONG" and r.values.dtype == np.float32 and r.op == "sum":
            verdict = f"{int(ulps_apart(got, exp))} ULP(s) from NumPy: another rounding order"
        digits = 9 if r.values.dtype.kind == "f" else 6
        out.append(f"lanes {s * r.width:>2}..{(s + 1) * r.width - 1:<2}  lane {s * r.width:>2} holds "
                   f"{_cell(got, ok, digits=digits):>12}   NumPy {_cell(exp, True, digits=digits):>12}   {verdict}")
    return "\n".join(out)


def warp_tree_view(op: str = "sum", width: int = 32, pattern: str = "lane", n_valid: int = 32, tree: str = "down",
                   partial: str = "pad", step: Optional[int] = None, backend: Optional[str] = None) -> View:
    """The warp-tree explorer: the trace figure at ``step`` (default: the last), the step table and the
    result per segment. ``n_valid``: valid lanes per ``width``-lane segment (the rest padded with the
    identity for ``partial="pad"``, or left out of the ballot mask for ``partial="ballot"``)."""
    try:
        if pattern == "random floats" and params.is_one_of(op, BITWISE_OPS):
            return View.error(f"op {op!r} is bitwise: it needs integers; pick the pattern 'lane', 'ones' "
                                    f"or 'random ints' (or the op 'sum', 'max', 'min')")
        if partial == "ballot" and (tree != "down" or not params.is_integer(width) or width != LANES):
            return View.error(f"the ballot-mask way is the seed's shuffle-down code for a whole warp: it "
                                    f"needs tree 'down' and width 32; got tree {params.quote(tree)}, "
                                    f"width {params.quote(width)}")
        width = params.width(width)
        if params.is_integer(n_valid) and n_valid > width:
            return View.error(f"valid lanes must be at most the width ({width}): each {width}-lane "
                                    f"segment reduces its first n values; got {n_valid}")
        if step is not None and not params.is_integer(step):
            raise ValueError(f"step must be an integer (0 is the input) or None (the last step); got {params.quote(step)}")
        values = pattern_values(pattern, op)
        trace = warp_reduce_trace(values, op, width, tree, n_valid, partial, backend)
        result = warp_reduce(values, op, width, tree, n_valid, partial, backend)
    except (ValueError, RuntimeError) as exc:
        return View.error(str(exc))
    last = trace.n_steps - 1
    shown = last if step is None else min(max(int(step), 0), last)
    note = "" if step is None or int(step) <= last else f"(width {width} has {last} steps: showing step {last})\n"
    table = note + tree_table(trace) + "\n\n" + result_lines(result)
    return View(figures.trace_figure(trace, shown), table, engine=trace.source)


def _versus_numpy(r: WarpReduceResult) -> str:
    """"same bits" when every holder equals NumPy's answer; for a float32 sum that does not, how many
    ULPs (float32 steps) lane 0 is from it (another order of the adds: different, not wrong)."""
    if r.correct:
        return "same bits"
    v, ok, exp = r.values[0, 0], bool(r.defined[0, 0]), r.expected[0, 0]
    if ok and r.values.dtype == np.float32 and r.op == "sum":
        k = int(ulps_apart(v, exp))
        return f"{k} ULP{'' if k == 1 else 's'} away: another order"
    return "undefined" if not ok else "WRONG"


def methods_table(results: dict[str, WarpReduceResult]) -> str:
    """One row per method: who holds the result, lane 0's value, what the other lanes return
    ("undef" where the method defines nothing), and lane 0 against NumPy (:func:`_versus_numpy`)."""
    first = next(iter(results.values()))
    names = {"down": "shuffle-down tree", "xor": "xor butterfly", "intrinsic": REDUCE_SYNC[first.op],
             "cg": "cooperative_groups::reduce", "cub": "cub::WarpReduce"}
    lines = [f"{'method':<27} {'result in':<11} {'lane 0':>12} {'lane 31':>12}  against NumPy"]
    for m, r in results.items():
        holders = "every lane" if r.holders[0].all() else "lane 0"
        lines.append(f"{names.get(m, m):<27} {holders:<11} {_cell(r.values[0, 0], r.defined[0, 0], digits=9):>12} "
                     f"{_cell(r.values[0, 31], r.defined[0, 31], digits=9):>12}  {_versus_numpy(r)}")
    lines.append(f"{'NumPy (float64, rounded once)' if first.values.dtype.kind == 'f' else 'NumPy':<27} "
                 f"{'':<11} {_cell(first.expected[0, 0], True, digits=9):>12}")
    return "\n".join(lines)


def recorded_methods_table(recording: dict[str, Any], name: str) -> str:
    """:func:`methods_table`'s columns for a recorded input of ``data/warp_reduce_traces.json``."""
    rec = recording["methods"][name]
    dtype = np.dtype(rec["config"]["dtype"])
    lines = [f"{'method':<11} {'lane 0':>12} {'lane 31':>12}"]
    for m, r in rec["results"].items():
        v = np.asarray(r["values"], dtype)[0]
        d = np.asarray(r["defined"], bool)[0]
        lines.append(f"{m:<11} {_cell(v[0], d[0], digits=9):>12} {_cell(v[31], d[31], digits=9):>12}")
    return "\n".join(lines)


def float_order_text(b: FloatOrderBatch) -> str:
    """How far the tree's float32 sums land from the sequential ones, and which is closer to exact."""
    n = b.ulps.size
    buckets = [(0, "identical"), (1, "1 ULP apart"), (2, "2 ULPs apart"), (3, "3 or more ULPs apart")]
    lines = [f"{n} warps of 32 float32 values, tree (lane 0) vs sequential ((v0 + v1) + v2 ...):"]
    for k, label in buckets:
        count = int((b.ulps == k).sum()) if k < 3 else int((b.ulps >= 3).sum())
        lines.append(f"  {label:<24} {count:>5}  ({100 * count / n:5.1f} %)")
    closer_t = int((b.tree_error < b.sequential_error).sum())
    closer_s = int((b.tree_error > b.sequential_error).sum())
    lines.append(f"closer to the exact sum: tree {closer_t}, sequential {closer_s}, tie {n - closer_t - closer_s}")
    lines.append(f"mean |error|: tree {b.tree_error.mean():.3g}, sequential {b.sequential_error.mean():.3g}")
    return "\n".join(lines)


# ---------------------------------------------------------------- blocks


def block_values(block: tuple[int, int], op: str) -> np.ndarray:
    """The block explorer's input, shape (y, x): ones for "sum" (the answer is a count), random digits
    0..99 otherwise (fixed seed; 0..255 for the bitwise ops)."""
    bx, by = block
    if op == "sum":
        return np.ones((by, bx), np.int32)
    hi = 256 if op in BITWISE_OPS else 100
    return np.random.default_rng(11).integers(0, hi, (by, bx)).astype(np.int32)


def _group_summary(name: str, results: dict[str, Any], axis_name: str, max_rows: int = 8) -> list[str]:
    seed, fixed = results["seed"], results["fixed"]
    exp = fixed.expected[:, 0] if fixed.kind == "x" else fixed.expected[0, :]
    s_val, s_def = seed.result, seed.result_defined
    f_val, f_def = fixed.result, fixed.result_defined
    n = exp.size
    right = lambda v, d: int((d & (v == exp)).sum())  # noqa: E731
    lines = [f"{name}: seed right in {right(s_val, s_def)} of {n} {axis_name}s "
             f"({int((~s_def).sum())} undef); fixed right in {right(f_val, f_def)} of {n}",
             f"  {axis_name:>6} {'NumPy':>8} {'seed':>8} {'fixed':>8}"]
    for i in range(min(n, max_rows)):
        lines.append(f"  {i:>6} {_cell(exp[i], True):>8} {_cell(s_val[i], s_def[i]):>8} {_cell(f_val[i], f_def[i]):>8}")
    if n > max_rows:
        lines.append(f"  ... ({n - max_rows} more {axis_name}s)")
    return lines


def block_view(x: int = 96, y: int = 2, op: str = "sum", backend: Optional[str] = None) -> View:
    """The block explorer: the seed's and the fixed BlockXReduce and BlockYReduce on a (x, y) block,
    drawn on the blockDim picture, with a table per reduction."""
    try:
        if not (params.is_integer(x) and params.is_integer(y) and 1 <= x <= BLOCK_X_MAX and 1 <= y <= BLOCK_Y_MAX):
            return View.error(f"blockDim.x must be an integer in [1, {BLOCK_X_MAX}] and blockDim.y one in "
                                    f"[1, {BLOCK_Y_MAX}] here; got ({params.quote(x)}, {params.quote(y)})")
        if x * y > MAX_THREADS:
            return View.error(f"a block has at most {MAX_THREADS} threads: blockDim.x * blockDim.y = "
                                    f"{x} * {y} = {x * y}; make one of them smaller")
        if not params.is_one_of(op, OPS):
            return View.error(f"op must be one of {', '.join(map(repr, OPS))}; got {params.quote(op)}")
        v = block_values((x, y), op)
        res = {(k, ver): block_reduce(v, (x, y), op, k, ver, backend=backend)
               for k in ("x", "y") for ver in ("seed", "fixed")}
    except (ValueError, RuntimeError) as exc:
        return View.error(str(exc))
    source = res[("x", "fixed")].source
    label = "emulator" if source == "emulator" else source
    fig = _block_figure((x, y), list(res.values()), label)
    lines = [f"block ({x}, {y}): {x * y} threads = {-(-x * y // LANES)} warps; op {op}; "
             f"input: {'ones' if op == 'sum' else 'random digits'}"]
    lines += _group_summary("BlockXReduce (each row)", {"seed": res[("x", "seed")], "fixed": res[("x", "fixed")]}, "row")
    lines += _group_summary("BlockYReduce (each column)", {"seed": res[("y", "seed")], "fixed": res[("y", "fixed")]},
                            "column")
    races = res[("y", "seed")].hazards
    lines.append(f"data races the SIMT machine finds in the seed's BlockYReduce: {len(races)} "
                 f"({sum(h.count for h in races)} racing thread pairs)")
    return View(fig, "\n".join(lines), engine=label)


def _block_figure(block: tuple[int, int], results: list, label: str) -> Figure:
    from helpers.viz import block as figures_block

    return figures_block.block_grid_figure(block, results, source_label=label, show_tid=False)


SANITIZER_NAMES: dict[str, str] = {
    "sum": "BlockReduce", "all": "BlockAllReduce", "x": "BlockXReduce", "y": "BlockYReduce",
    "seed_y": "seed BlockYReduce", "b2b": "BlockReduce x2, barrier", "b2b_nobarrier": "BlockReduce x2, none",
    # notebook 05's data/sanitizer_ladder.json
    "seed": "seed reduce_v4", "v4": "reduce_v4", "v4_legacy": "v4, no __syncwarp()"}
# Runs recorded before the report mode and print limit were stored (2026-11-30) all used
# `--racecheck-report all --print-limit 20` (helpers/recording/record_reduce.py and scripts/gpu/reduce.sh of that date).
_OLD_RACECHECK = {"report": "all", "print_limit": 20}


def _run_settings(r: dict[str, Any]) -> tuple[Optional[str], int]:
    old = _OLD_RACECHECK if r["tool"] == "racecheck" else {"report": None, "print_limit": 20}
    return r.get("report", old["report"]), r.get("print_limit", old["print_limit"])


def sanitizer_table(recording: dict[str, Any], kernels: Optional[tuple[str, ...]] = None,
                    tools: Optional[tuple[str, ...]] = None) -> str:
    """``data/sanitizer_block.json`` (or notebook 05's ``sanitizer_ladder.json``) as a table, one row
    per compute-sanitizer run (only those of ``kernels`` and ``tools``, when given): tool, kernel,
    block (threads per block for the ladder), racecheck report mode
    (``--racecheck-report``; "analysis" is racecheck's default), ``--print-limit`` (0: none), then
    what the summary line says. ``printed`` is racecheck's "N hazards displayed": the reports it
    printed, which stop at the print limit; ``errors`` and ``warnings`` are what it counted, which do
    not ("-" where a tool prints no such number: synccheck has only an error count)."""
    lines = [f"{'tool':<10} {'kernel':<24} {'block':<9} {'report':<9} {'limit':>5} {'printed':>7} {'errors':>7} "
             f"{'warnings':>8}  outcome"]
    for r in recording["runs"]:
        if (kernels is not None and r["kernel"] not in kernels) or (tools is not None and r["tool"] not in tools):
            continue
        report, limit = _run_settings(r)
        race = r["tool"] == "racecheck"
        blk = f"({r['block'][0]}, {r['block'][1]})" if isinstance(r["block"], list) else str(r["block"])
        lines.append(f"{r['tool']:<10} {SANITIZER_NAMES.get(r['kernel'], r['kernel']):<24} {blk:<9} "
                     f"{report or '-':<9} {limit:>5} {r['hazards'] if race else '-':>7} {r['errors']:>7,} "
                     f"{format(r['warnings'], ',') if race else '-':>8}  {r['outcome']}")
    return "\n".join(lines)


def racecheck_side_by_side(recording: dict[str, Any], kernel: str, max_lines: int = 6) -> str:
    """``kernel``'s racecheck runs side by side (:func:`sanitizer_table` rows: every report mode and
    print limit recorded), then what the default mode (``analysis``) printed
    (:func:`sanitizer_excerpt`), or a plain note that it has not been recorded yet."""
    table = sanitizer_table(recording, (kernel,), tools=("racecheck",))
    try:
        shown = "racecheck's default report (--racecheck-report analysis), as printed:\n" + \
            sanitizer_excerpt(recording, kernel, "analysis", max_lines=max_lines)
    except ValueError:
        shown = ("racecheck's default mode, --racecheck-report analysis, has not been recorded on the H200 yet "
                 "(only the rows above)")
    return f"{table}\n\n{shown}"


def sanitizer_excerpt(recording: dict[str, Any], kernel: str, report: str = "analysis",
                      print_limit: int = 20, max_lines: int = 8) -> str:
    """The first ``max_lines`` report lines racecheck printed for ``kernel`` in ``report`` mode with
    ``print_limit``, and its summary line, as recorded; ValueError naming what was recorded when
    that run is not in ``recording`` (or was recorded before report lines were kept)."""
    runs = [r for r in recording["runs"] if r["tool"] == "racecheck" and r["kernel"] == kernel]
    run = next((r for r in runs if _run_settings(r) == (report, print_limit) and "excerpt" in r), None)
    if run is None:
        have = ", ".join(f"{_run_settings(r)[0]} (limit {_run_settings(r)[1]})" + ("" if "excerpt" in r else ", no lines")
                         for r in runs) or "none"
        raise ValueError(f"no racecheck run of {kernel!r} with --racecheck-report {report} --print-limit "
                         f"{print_limit} and its report lines in this recording; recorded: {have}")
    shown = run["excerpt"][:max_lines]
    more = len(run["excerpt"]) - len(shown)
    return "\n".join([*shown, *([f"... ({more} more lines kept)"] if more > 0 else []), run["summary_line"]])


# The racy runs recorded, and which threads race in each (from the kernels' code): the two block
# kernels race between warps, notebook 05's pre-Volta v4 between the lanes of warp 0.
RACES: tuple[tuple[str, str, str], ...] = (
    ("b2b_nobarrier", "BlockReduce x2, no barrier (128, 1)", "warp 0 and warps 1-3"),
    ("seed_y", "seed BlockYReduce (32, 3)", "warp 0 (row 0) and warp 1 (row 1)"),
    ("v4_legacy", "v4 without __syncwarp(), notebook 05", "lanes of warp 0"),
)


def race_severity_table(block: dict[str, Any], ladder: dict[str, Any], report: str = "all",
                        print_limit: int = 20) -> str:
    """The :data:`RACES` under racecheck (``data/sanitizer_block.json`` and notebook 05's
    ``data/sanitizer_ladder.json``), run with ``report`` and ``print_limit``: which threads race,
    racecheck's error and warning counts, and the first report it printed, which names the severity
    (racecheck prefixes a race inside one warp "(Warp Level Programming)")."""
    runs = {r["kernel"]: r for rec in (block, ladder) for r in rec["runs"]
            if r["tool"] == "racecheck" and _run_settings(r) == (report, print_limit)}
    lines = [f"{'kernel':<37} {'racing threads':<34} {'errors':>7} {'warnings':>8}  first report printed"]
    for kernel, name, who in RACES:
        if kernel not in runs:
            raise ValueError(f"no racecheck run of {kernel!r} with --racecheck-report {report} --print-limit "
                             f"{print_limit} recorded")
        r = runs[kernel]
        first = re.sub(r" detected at __shared__ 0x\.\.\. in block \(.*\)$", "", r["reports"][0] if r["reports"] else "-")
        lines.append(f"{name:<37} {who:<34} {r['errors']:>7,} {r['warnings']:>8,}  {first}")
    return "\n".join(lines)


def recorded_case(recording: dict[str, Any], name: str) -> Any:
    """A recorded block case of ``data/block_reduce.json`` as a BlockResult-like object for
    :func:`helpers.viz.block.block_grid_figure` (values, defined, expected, kind, version, block)."""
    from types import SimpleNamespace

    c = next((c for c in recording["cases"] if c["name"] == name), None)
    if c is None:
        raise ValueError(f"no recorded case {name!r}; recorded: {', '.join(c['name'] for c in recording['cases'])}")
    dtype = np.dtype(c["dtype"])
    vals = np.asarray(c["values"], dtype)
    out = np.asarray(c["result"], dtype)
    d = np.asarray(c["defined"], bool)
    r = SimpleNamespace(kind=c["kind"], version=c["version"], block=tuple(c["block"]), values=out, defined=d,
                        expected=block_reduce_expected(vals, c["kind"], c["op"]))
    r.result = out[0, 0] if r.kind == "sum" else out[:, 0] if r.kind == "x" else out[0, :]
    r.result_defined = d[0, 0] if r.kind == "sum" else d[:, 0] if r.kind == "x" else d[0, :]
    return r


def per_group_line(r: Any) -> str:
    """``row 0: 128, row 1: undef`` (kind x), the distinct column results (kind y), or the block's (sum)."""
    if r.kind == "sum":
        return f"thread 0: {_cell(r.result, bool(r.result_defined))}"
    word = "row" if r.kind == "x" else "column"
    cells = [_cell(v, d) for v, d in zip(r.result, r.result_defined)]
    if r.kind == "y" and len(set(cells)) == 1:
        return f"every {word} (all {len(cells)}): {cells[0]}"
    return ", ".join(f"{word} {i}: {c}" for i, c in enumerate(cells))


# ---------------------------------------------------------------- ipywidgets wiring


def warp_tree_explorer(backend: Optional[str] = None) -> Any:
    """ipywidgets explorer of :func:`warp_tree_view`: op, width, value pattern, valid lanes, tree,
    partial-warp method and step. ``.controls`` maps those names to their widgets."""
    controls = {
        "op": explorer.toggle("op", OPS, "sum"),
        "width": explorer.toggle("width", WIDTHS, 32),
        "pattern": explorer.toggle("values", PATTERNS, "lane"),
        "n_valid": explorer.slider("valid lanes per segment", 32, 1, 32, "360px"),
        "tree": explorer.toggle("tree", TREES, "down"),
        "partial": explorer.toggle("partial warp", PARTIALS, "pad"),
        "step": explorer.slider("step", 5, 0, 5, "260px"),
    }
    rows = (("op",), ("width", "tree"), ("pattern",), ("n_valid", "partial"), ("step",))

    def clamp(values: dict[str, Any], _change: Any) -> None:   # valid lanes live inside one segment
        controls["n_valid"].max = values["width"]

    return explorer.build(controls, rows, lambda **v: warp_tree_view(**v, backend=backend),
                          "<b>Warp tree explorer</b>: every lane at every step (the figure shows one step, "
                          "the table all).", on_change=clamp)


def block_explorer(backend: Optional[str] = None) -> Any:
    """ipywidgets explorer of :func:`block_view`: blockDim.x, blockDim.y and op."""
    controls = {
        "x": explorer.slider("blockDim.x", 96, 1, BLOCK_X_MAX, "420px"),
        "y": explorer.slider("blockDim.y", 2, 1, BLOCK_Y_MAX, "300px"),
        "op": explorer.toggle("op", OPS, "sum"),
    }
    rows = (("x", "y"), ("op",))
    return explorer.build(controls, rows, lambda **v: block_view(**v, backend=backend),
                          "<b>Block explorer</b>: the seed's and the fixed BlockXReduce / BlockYReduce on one block.")


# ---------------------------------------------------------------- the ladder (notebook 05)


LADDER_VERSIONS: tuple[str, ...] = R.LADDER
LADDER_BLOCKS: tuple[int, ...] = (64, 128, 256, 512, 1024)
LADDER_LOG2_N: tuple[int, int] = (10, 30)


def ladder_view(version: str = "v0", block: int = 256, log2_n: int = 25,
                results: Optional[dict[str, Any]] = None, live: bool = False) -> View:
    """The ladder explorer's view of ``reduce_<version><block>`` on n = 2^log2_n float32. Never raises.

    Always: the lanes map of the block tree (:func:`helpers.viz.ladder.lanes_figure`), the grids
    of every launch, who works in the first add, barriers, shared-memory requests and bank-conflict
    wavefronts per block, lane slots. ``results`` (a ladder run, e.g. the recording): its numbers for
    this version, block and size, or a line saying what was recorded instead. ``live`` (a GPU): time
    it now (median of 20).
    """
    try:
        if version not in LADDER_VERSIONS:
            raise ValueError(f"version must be one of {', '.join(LADDER_VERSIONS)}; got {params.quote(version)}")
        block = R.check_block(block)
        lo, hi = LADDER_LOG2_N
        if not params.is_integer(log2_n) or not lo <= log2_n <= hi:
            raise ValueError(f"log2_n must be an integer in [{lo}, {hi}] (n = 2^log2_n); got {params.quote(log2_n)}")
        if not isinstance(live, (bool, np.bool_)):
            raise ValueError(f"live must be True or False; got {params.quote(live)}")
        n = 2**int(log2_n)
        recorded = None if results is None else _recorded_line(results, version, block, n)
    except ValueError as exc:
        return View.error(str(exc))
    lines = [_map_summary(version, block, n)]
    if recorded is not None:
        lines.append(recorded)
    if live:
        lines.append(_live_line(version, block, n))
    return View(_lanes_map(version, block), "\n".join(lines), engine=LADDER_MAP_ENGINE)


# What the lanes map and the summary are drawn from (helpers.topics.reduce_maps).
LADDER_MAP_ENGINE = "the SIMT machine: one block of the real kernel, measured (helpers.topics.reduce_maps)"


@functools.lru_cache(maxsize=len(LADDER_VERSIONS) * len(LADDER_BLOCKS))
def _lanes_map(version: str, block: int) -> Figure:
    """:func:`helpers.viz.ladder.lanes_figure` for the explorer, drawn once per (version, block): it
    does not depend on n, and the explorer shows it again every time only n changes."""
    import matplotlib.pyplot as plt

    fig = FR.lanes_figure(version, block)
    plt.close(fig)  # shown as an image by the explorer or the notebook, not kept by pyplot
    return fig


def _map_summary(version: str, block: int, n: int) -> str:
    fs = reduce_maps.first_step(version, block)
    bar = reduce_maps.barriers(version, block)
    traffic = reduce_maps.shared_traffic(version, block)
    slots = reduce_maps.lane_slots(version, block)
    grids = R.pass_grids(version, n, block)
    return "\n".join([
        f"reduce_{version}<{block}> on n = {bench.size_label(n)} ({n:,} float32; per block: measured on the SIMT machine)",
        f"  launches: {len(grids)}, grids {' -> '.join(f'{g:,}' for g in grids)} blocks",
        f"  first add: {fs.working} of {fs.threads} threads add, {fs.idle} only load; {fs.elements_per_block} elements per block",
        f"  barriers per block: {bar['syncthreads']} __syncthreads(), {bar['syncwarp']} __syncwarp() in warp 0",
        f"  shared requests per block: {traffic['ld_requests']} loads (+{traffic['ld_extra_wavefronts']} conflict wavefronts), "
        f"{traffic['st_requests']} stores (+{traffic['st_extra_wavefronts']})",
        f"  tree lane slots (PTX): {slots['working']} working lanes in {slots['issued']} issued, "
        f"{slots['efficiency']:.0%} used",
    ])


def _recorded_line(results: dict[str, Any], version: str, block: int, n: int) -> str:
    """The run's numbers for this version, block and size; ValueError if ``results`` is not a ladder run."""
    try:
        return _recorded_numbers(results, version, block, n)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"results must be a ladder run (a dict with 'rows', as data.load('bench_ladder') gives) or "
                         f"None; this one could not be read ({type(exc).__name__}: {str(exc)[:80]})") from None


def _recorded_numbers(results: dict[str, Any], version: str, block: int, n: int) -> str:
    rows = bench.rows_for(results, n, version, block)
    src = results.get("source") or f"live on {results.get('gpu', 'this GPU')}"
    if not rows:
        blocks = sorted({r["block"] for r in results["rows"] if r["name"] == version and r.get("block")})
        sizes = ", ".join(bench.size_label(s) for s in results.get("sizes", []))
        return (f"  not measured for block {block} at {bench.size_label(n)} in the run {src}; "
                f"it has {version} with block {', '.join(map(str, blocks)) or '-'} at {sizes}")
    r = rows[0]
    return (f"  {src}: first pass {r['first_pass_us']:.1f} us, total {r['total_us']:.1f} us, "
            f"{r['gbps']:,.0f} GB/s, x{r['vs_cupy_sum']:.2f} cupy.sum")


def _live_line(version: str, block: int, n: int) -> str:
    try:
        import cupy

        x = cupy.ones(n, dtype=cupy.float32)
        plan = R.make_plan(version, n, block)
        dev, host = bench.quick_times(lambda: plan(x))
        got = float(plan(x)[0])
        return (f"  live: {dev:.1f} us device time, {4 * n / dev / 1e3:,.0f} GB/s; {host:.1f} us host-inclusive; "
                f"sum of {n:,} ones = {got:,.0f}")
    except Exception as exc:  # shown as a line, never a traceback
        return f"  live timing unavailable: {type(exc).__name__}: {exc}"


def measure_ladder_maps() -> None:
    """Run the SIMT machine on one block of every (version, block) the ladder explorer offers, so
    that its first look at each is only drawn (25 settings; about a second of CPU, once per
    process: :mod:`helpers.topics.reduce_maps` keeps what it measured). A setting the machine
    cannot measure is left for the view, which says why."""
    for version in LADDER_VERSIONS:
        for block in LADDER_BLOCKS:
            try:
                reduce_maps.measure(version, block)
                reduce_maps.shared_traffic(version, block)
                reduce_maps.barriers(version, block)
            except (ValueError, RuntimeError):
                continue


def ladder_explorer(results: Optional[dict[str, Any]] = None, live: Optional[bool] = None) -> Any:
    """An ipywidgets VBox: version, block size and n = 2^k; shows :func:`ladder_view` (the lanes map,
    the table, or a red message). ``live`` defaults to True where a GPU is in use (a checkbox then
    lets the learner time the choice). ``.controls`` maps the names to the widgets.

    Speed: every setting's machine run is done while the explorer is built
    (:func:`measure_ladder_maps`), and each lanes map is drawn once, the first time it is shown."""
    import ipywidgets as w

    notice = ""
    if live is None:
        try:
            live = _backend.resolve() == "cupy"
        except (ValueError, RuntimeError) as exc:   # a bad WARPLAB_BACKEND, or cupy demanded without a GPU
            live, notice = False, f"{exc} (the maps below need no GPU; timing is off)"
    lo, hi = LADDER_LOG2_N
    controls = {
        "version": explorer.toggle("version", LADDER_VERSIONS, "v0", "48px"),
        "block": explorer.toggle("block", LADDER_BLOCKS, 256, "56px"),
        "log2_n": explorer.slider("n = 2^", 25, lo, hi),
        "time_it": w.Checkbox(value=False, description="time it on this GPU", disabled=not live),
    }
    layout = (("version",), ("block",), ("log2_n", "time_it"))

    def view(version: str, block: int, log2_n: int, time_it: bool) -> View:
        return ladder_view(version, block, log2_n, results, live=bool(live and time_it))

    measure_ladder_maps()

    return explorer.build(controls, layout, view, "<b>Ladder explorer</b>: who works at each step of the block tree.",
                          notice=notice, remember=not live)
