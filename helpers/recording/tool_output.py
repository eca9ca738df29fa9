"""Reading compute-sanitizer and Nsight Compute output for the reduction ladder, into ``data/``.

``scripts/gpu/reduce.sh`` runs every reduce kernel under memcheck, racecheck and synccheck (one
process per kernel and tool, ``helpers.recording.reduce_target``), and the first passes of v0..v4 under
``ncu --csv``; the functions here turn that text into small JSON recordings:

* ``data/sanitizer_ladder.json``: per kernel and tool, the errors / warnings / hazards counts from
  the tool's summary line, the first distinct reports, and whether that is what we expect
  (everything clean, except ``v4_legacy`` under racecheck and the seed kernel under memcheck);
* ``data/ncu_ladder.json``: per version, the divergent-branch and bank-conflict counters (and, as
  recorded, the counts the project then computed beside them; :func:`format_ncu` now sets the SIMT
  machine's counts of the same kernels beside ncu's, :mod:`helpers.topics.reduce_maps`).

    python3 -m helpers.recording.tool_output sanitizer LOG_DIR [--record]
    python3 -m helpers.recording.tool_output ncu NCU.csv --n 16777216 --block 256 [--record]
    python3 -m helpers.recording.tool_output summary
    python3 -m helpers.recording.tool_output metric-sets     # the ncu --metrics lists reduce.sh tries in turn

The parsers are pure functions of the text, tested on sample output without a GPU.
"""
from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

SANITIZER_TOOLS: tuple[str, ...] = ("memcheck", "racecheck", "synccheck")
# Nsight Compute metrics collected for the ladder (names as `ncu --query-metrics` lists them).
#
# v0's `if (tid % (2 * s) == 0)` is compiled to *predicated* instructions, not a branch: every lane
# of every warp issues the body and the lanes whose guard is false do nothing. So the divergent-branch
# counter reads 0, and so does the "active threads per instruction" ratio's shortfall (predicated-off
# lanes are still active). The waste shows in the *predicated-on* threads per instruction and in the
# number of warp instructions executed.
SIMT_METRICS: tuple[str, ...] = (
    "smsp__inst_executed.sum",                                      # warp instructions executed
    "smsp__thread_inst_executed_per_inst_executed.ratio",           # active lanes per warp instruction
    "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",   # lanes whose predicate is true
)
NCU_METRICS: tuple[str, ...] = (
    "smsp__sass_branch_targets.sum",
    "smsp__sass_branch_targets_threads_divergent.sum",
    *SIMT_METRICS,
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "gpu__time_duration.sum",
)
# The list ncu accepted on the H200 on 2026-11-30 (before SIMT_METRICS grew), then the four that
# matter most: scripts/gpu/reduce.sh tries each set in turn until ncu accepts one.
NCU_METRICS_2026_11: tuple[str, ...] = tuple(
    m for m in NCU_METRICS if m not in ("smsp__inst_executed.sum",
                                        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"))
NCU_CORE_METRICS: tuple[str, ...] = (
    "smsp__sass_branch_targets_threads_divergent.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
)
NCU_METRIC_SETS: tuple[tuple[str, ...], ...] = (NCU_METRICS, NCU_METRICS_2026_11, NCU_CORE_METRICS)


def metric_sets_text() -> str:
    """One comma-separated metric list per line, widest first (what reduce.sh hands to ``ncu --metrics``)."""
    return "\n".join(",".join(ms) for ms in NCU_METRIC_SETS)


_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
_RACE_SUMMARY = re.compile(
    r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*\(\s*(\d+)\s+errors?,\s*(\d+)\s+warnings?\s*\)")
_HEADLINE = re.compile(r"^=+ (\S.*)$")
_NOT_A_REPORT = re.compile(r"^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY)")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_TARGET_LINE = re.compile(r" n=(\d+) block=(\d+) offset=")
_BY_THREAD = re.compile(r"by thread \((\d+),\d+,\d+\) in block \((\d+),\d+,\d+\)")
# scripts/gpu/reduce.sh's --print-limit: the most reports a run PRINTS; its summary still COUNTS all.
PRINT_LIMIT = 20


def parse_sanitizer(text: str, tool: str) -> dict[str, Any]:
    """Counts from one compute-sanitizer run's output.

    Returns ``{"tool", "summary_found", "errors", "warnings", "hazards", "reports"}``: errors is the
    ``ERROR SUMMARY`` count (memcheck, synccheck, ...) or the racecheck summary's errors; warnings and
    hazards come from ``RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)``; summaries of
    several processes add up. ``reports`` lists the distinct report headlines (addresses elided),
    at most 8. ``summary_found`` is False when the run ended before its tool printed a summary.
    """
    if tool not in SANITIZER_TOOLS:
        raise ValueError(f"tool must be one of {', '.join(SANITIZER_TOOLS)}; got {tool!r}")
    errors = warnings = hazards = 0
    found = False
    if tool == "racecheck":
        for h, e, w in _RACE_SUMMARY.findall(text):
            found = True
            hazards, errors, warnings = hazards + int(h), errors + int(e), warnings + int(w)
    else:
        for e in _ERROR_SUMMARY.findall(text):
            found = True
            errors += int(e)
    reports: list[str] = []
    counts: dict[str, int] = {}
    for line in text.splitlines():
        m = _HEADLINE.match(line.rstrip())
        if not m or _NOT_A_REPORT.match(m.group(1)):
            continue
        headline = _HEX.sub("0x...", m.group(1)).rstrip(" :")
        counts[headline] = counts.get(headline, 0) + 1
        if headline not in reports and len(reports) < 8:
            reports.append(headline)
    threads = sorted({(int(b), int(t)) for t, b in _BY_THREAD.findall(text)})
    return {"tool": tool, "summary_found": found, "errors": errors, "warnings": warnings,
            "hazards": hazards, "reports": reports, "printed": sum(counts.values()),
            "printed_by_headline": counts, "threads": [list(bt) for bt in threads[:256]]}


def expected_outcome(kernel: str, tool: str) -> str:
    """``"reported"`` for the two kernels kept to be caught, ``"clean"`` for every other run."""
    if (kernel, tool) in (("v4_legacy", "racecheck"), ("seed", "memcheck")):
        return "reported"
    return "clean"


def judge(summary: dict[str, Any], kernel: str) -> dict[str, Any]:
    """``summary`` plus ``outcome`` (clean / reported / incomplete), ``expected`` and ``as_expected``."""
    total = summary["errors"] + summary["warnings"] + summary["hazards"]
    outcome = "incomplete" if not summary["summary_found"] else "reported" if total else "clean"
    expected = expected_outcome(kernel, summary["tool"])
    return {**summary, "kernel": kernel, "outcome": outcome, "expected": expected,
            "as_expected": outcome == expected}


def summarize_sanitizer_logs(log_dir: Path) -> list[dict[str, Any]]:
    """Every ``TOOL__KERNEL.log`` in ``log_dir`` (with its exit status in ``TOOL__KERNEL.rc`` if
    present), judged, with the n and block the target printed; sorted by kernel then tool."""
    runs = []
    for log in sorted(Path(log_dir).glob("*__*.log")):
        tool, kernel, *variant = log.stem.split("__")
        if tool not in SANITIZER_TOOLS:
            continue
        text = log.read_text(errors="replace")
        run = judge(parse_sanitizer(text, tool), kernel)
        if tool == "racecheck":  # TOOL__KERNEL__default.log: racecheck's default report (analysis)
            run["report"] = variant[0] if variant else "all"
        launch = _TARGET_LINE.search(text)  # printed by helpers.recording.reduce_target
        run["n"], run["block"] = (int(launch.group(1)), int(launch.group(2))) if launch else (None, None)
        limit = log.with_suffix(".limit")  # the --print-limit the script gave this run
        run["print_limit"] = int(limit.read_text().strip()) if limit.is_file() else PRINT_LIMIT
        rc = log.with_suffix(".rc")
        run["exit_code"] = int(rc.read_text().strip()) if rc.is_file() and rc.read_text().strip() else None
        runs.append(run)
    order = {k: i for i, k in enumerate(("v0", "v1", "v2", "v3", "v4", "v4_legacy", "v5", "v6", "v7", "v8",
                                         "onepass", "v9", "v9_many_blocks", "v9_one_block", "seed"))}
    return sorted(runs, key=lambda r: (order.get(r["kernel"], 99), r["tool"], r.get("report", "")))


def format_racecheck_reports(runs: Sequence[dict[str, Any]], kernel: str) -> str:
    """``kernel``'s racecheck runs side by side, default report and ``--racecheck-report all``:
    what each PRINTED (at most the script's --print-limit) and what its summary COUNTED, by severity
    (racecheck calls a hazard between threads of one warp a warning, between warps an error)."""
    rows = [r for r in runs if r["kernel"] == kernel and r["tool"] == "racecheck"]
    if not rows:
        return f"no racecheck run of {kernel} in this recording"
    head = (f"{'report':<8} {'printed':>8} {'summary: hazards displayed':>27} {'errors':>8} {'warnings':>9}")
    limits = sorted({r.get("print_limit", PRINT_LIMIT) for r in rows})
    lines = [f"racecheck on {kernel} (--print-limit {', '.join(map(str, limits))}): printed = reports in the log; "
             f"errors / warnings = the summary's counts", head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.get('report', 'all'):<8} {r.get('printed', 0):>8,} {r['hazards']:>27,} {r['errors']:>8,} "
                     f"{r['warnings']:>9,}")
    return "\n".join(lines)


def format_thread_ranges(run: dict[str, Any]) -> str:
    """The threads a sanitizer run named (``by thread (t,0,0) in block (b,0,0)``), as ranges per block."""
    by_block: dict[int, list[int]] = {}
    for b, t in run.get("threads", []):
        by_block.setdefault(b, []).append(t)
    parts = []
    for b, ts in sorted(by_block.items()):
        ts.sort()
        spans, start, prev = [], ts[0], ts[0]
        for t in ts[1:] + [None]:
            if t is not None and t == prev + 1:
                prev = t
                continue
            spans.append(f"{start}..{prev}" if prev > start else f"{start}")
            if t is not None:
                start = prev = t
        parts.append(f"block {b}: threads {', '.join(spans)} ({len(ts)} threads)")
    return "; ".join(parts) or "no thread named"


def format_sanitizer(runs: Sequence[dict[str, Any]]) -> str:
    """A table: kernel, tool, errors, warnings, reports shown (racecheck's "hazards displayed", up to its
    --print-limit: not a count of hazards), outcome, expected."""
    head = f"{'kernel':<10} {'tool':<10} {'errors':>6} {'warn':>5} {'shown':>7}  {'outcome':<10} expected"
    lines = [head, "-" * len(head)]
    for r in runs:
        if r.get("report", "all") != "all":
            continue  # the default-report run is shown by format_racecheck_reports
        flag = "" if r["as_expected"] else "   <-- UNEXPECTED"
        lines.append(f"{r['kernel']:<10} {r['tool']:<10} {r['errors']:>6} {r['warnings']:>5} {r['hazards']:>7}  "
                     f"{r['outcome']:<10} {r['expected']}{flag}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Nsight Compute

_KERNEL = re.compile(r"(seed_reduce_v4|reduce_(?:v\d+(?:_legacy)?|onepass))")


def _number(text: str) -> Optional[float]:
    """``"1,234.5"`` -> 1234.5; ``"n/a"`` or empty -> None."""
    text = text.strip().replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """The launches in ``ncu --csv`` output (long format: one row per metric).

    Lines before the CSV header (``==PROF==`` progress, the application's own output) are skipped.
    Returns one dict per profiled launch, in ID order: ``{"id", "kernel" (the full name ncu printed),
    "version" (v0, ..., onepass, seed, or None), "block", "grid", "metrics": {name: value or None}}``.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        return []
    body = [line for line in lines[start:] if line.startswith('"')]
    launches: dict[str, dict[str, Any]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(body))):
        launch = launches.setdefault(row["ID"], _launch(row))
        launch["metrics"][row["Metric Name"]] = _number(row.get("Metric Value", ""))
    return sorted(launches.values(), key=lambda launch: launch["id"])


def _launch(row: dict[str, str]) -> dict[str, Any]:
    m = _KERNEL.search(row.get("Kernel Name", ""))
    version = None
    if m:
        version = "seed" if m.group(1) == "seed_reduce_v4" else m.group(1)[len("reduce_"):]
    dims = re.findall(r"\d+", row.get("Block Size", ""))
    grid = re.findall(r"\d+", row.get("Grid Size", ""))
    return {"id": int(row["ID"]), "kernel": row.get("Kernel Name", ""), "version": version,
            "block": int(dims[0]) if dims else None, "grid": int(grid[0]) if grid else None, "metrics": {}}


LADDER_TREES: tuple[str, ...] = ("v0", "v1", "v2", "v3", "v4", "v4_legacy", "v5")   # the shared-memory trees


def predicted_counters(version: str, block: int, grid: int) -> dict[str, int]:
    """What the SIMT machine counts for one first pass (:func:`helpers.topics.reduce_maps.shared_traffic`,
    one block of the real kernel): shared-memory requests and the extra wavefronts bank conflicts
    cost (each per block x grid)."""
    from helpers.topics import reduce_maps

    per_block = reduce_maps.shared_traffic(version, block)
    return {k: v * grid for k, v in per_block.items()}


def summarize_ncu(launches: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per version (the first launch of each): the measured counters and, for the shared-memory
    trees, the predicted ones."""
    from helpers.topics import reduce_maps

    by_version: dict[str, Any] = {}
    for launch in launches:
        v = launch["version"]
        if v is None or v in by_version:
            continue
        entry = {"block": launch["block"], "grid": launch["grid"], "measured": launch["metrics"]}
        if v in reduce_maps.TREE_VERSIONS and launch["block"] and launch["grid"]:
            entry["predicted"] = predicted_counters(v, launch["block"], launch["grid"])
        by_version[v] = entry
    return by_version


def format_ncu(by_version: dict[str, Any]) -> str:
    """A table: divergent branch targets, shared ld/st instructions, bank conflicts (ld/st) measured by
    ncu, and the SIMT machine's ld/st conflict wavefronts on the same kernels (x ncu's grid)."""
    cols = [("div. branches", "smsp__sass_branch_targets_threads_divergent.sum"),
            ("shared ld", "smsp__sass_inst_executed_op_shared_ld.sum"),
            ("conflicts ld", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
            ("conflicts st", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")]
    head = f"{'version':<8}" + "".join(f"{c:>15}" for c, _ in cols) + f"{'machine ld/st conflicts':>28}"
    lines = [head, "-" * len(head)]
    for v, e in by_version.items():
        cells = "".join(f"{_fmt(e['measured'].get(m)):>15}" for _, m in cols)
        p = predicted_counters(v, e["block"], e["grid"]) if v in LADDER_TREES and e.get("block") and e.get("grid") else None
        pred = f"{p['ld_extra_wavefronts']:,}/{p['st_extra_wavefronts']:,}" if p else "-"
        lines.append(f"{v:<8}{cells}{pred:>28}")
    return "\n".join(lines)


def _fmt(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{v:,.0f}"


NOT_RECORDED = "not recorded"


def format_ncu_simt(by_version: dict[str, Any]) -> str:
    """A table of what each warp instruction did: warp instructions executed, active lanes per
    instruction, predicated-on lanes per instruction (the SIMT efficiency that predication hides),
    and the divergent-branch counter. A metric the recording lacks prints ``not recorded``; a
    footnote names the missing ones (an older recording: re-run ``scripts/gpu/reduce.sh`` ncu)."""
    cols = [("warp inst", "smsp__inst_executed.sum", "{:,.0f}"),
            ("active/inst", "smsp__thread_inst_executed_per_inst_executed.ratio", "{:.2f}"),
            ("pred-on/inst", "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "{:.2f}"),
            ("div. branches", "smsp__sass_branch_targets_threads_divergent.sum", "{:,.0f}")]
    head = f"{'version':<8}" + "".join(f"{c:>15}" for c, _, _ in cols)
    lines = [head, "-" * len(head)]
    missing: list[str] = []
    for v, e in by_version.items():
        cells = ""
        for _, metric, fmt in cols:
            value = e.get("measured", {}).get(metric)
            if metric not in e.get("measured", {}) and metric not in missing:
                missing.append(metric)
            cells += f"{(NOT_RECORDED if value is None else fmt.format(value)):>15}"
        lines.append(f"{v:<8}{cells}")
    if missing:
        lines.append(f"{NOT_RECORDED}: {', '.join(missing)} (the recording predates it; "
                     f"scripts/gpu/reduce.sh ncu collects it)")
    return "\n".join(lines)


BEYOND_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",   # achieved occupancy
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "launch__registers_per_thread",
)


def summarize_beyond(launches: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The LAST launch of each (kernel, grid) in a profile-v9 capture (the warm ones), with
    sectors per request computed."""
    last: dict[tuple[str, Optional[int]], dict[str, Any]] = {}
    for launch in launches:
        name = launch["version"] or ("cub " + ("single tile" if "SingleTile" in launch["kernel"] else "first pass")
                                     if "DeviceReduce" in launch["kernel"] else launch["kernel"][:40])
        last[(name, launch["grid"])] = {"kernel": name, "grid": launch["grid"], "block": launch["block"],
                                        "metrics": launch["metrics"]}
    out = list(last.values())
    for e in out:
        m = e["metrics"]
        req = m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
        sec = m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        e["sectors_per_request"] = sec / req if req and sec is not None else None
    return out


def format_beyond(entries: Sequence[dict[str, Any]], l2_hit: bool = True) -> str:
    """A table of the warm v9 and cupy.sum launches: time, DRAM bytes and % of peak, L2 hit rate
    (left out when ``l2_hit`` is False), achieved occupancy, sectors per request; a last line says
    which peak each % is of (ncu's own)."""
    head = (f"{'kernel':<20} {'grid':>6} {'block':>5} {'ncu us':>8} {'DRAM MB':>8} {'DRAM %':>7} "
            + (f"{'L2 hit %':>8} " if l2_hit else "") + f"{'occup. %':>8} {'sect/req':>8}")
    lines = [head, "-" * len(head)]
    for e in entries:
        m = e["metrics"]

        def f(key: str, fmt: str, scale: float = 1.0) -> str:
            v = m.get(key)
            return "n/a" if v is None else format(v / scale, fmt)

        spr = e.get("sectors_per_request")
        lines.append(f"{e['kernel']:<20} {e['grid'] or 0:>6} {e['block'] or 0:>5} "
                     f"{f('gpu__time_duration.sum', '.2f', 1e3):>8} {f('dram__bytes_read.sum', '.1f', 1e6):>8} "
                     f"{f('dram__throughput.avg.pct_of_peak_sustained_elapsed', '.1f'):>7} "
                     + (f"{f('lts__t_sector_hit_rate.pct', '.1f'):>8} " if l2_hit else "")
                     + f"{f('sm__warps_active.avg.pct_of_peak_sustained_active', '.1f'):>8} "
                     f"{'n/a' if spr is None else format(spr, '.1f'):>8}")
    lines.append("DRAM %: of the DRAM throughput ncu takes as this GPU's peak (dram__throughput.avg.pct_of_peak_sustained_elapsed), "
                 "not of a datasheet; occup. %: of the warps an SM can hold")
    return "\n".join(lines)


def beyond_metrics_text() -> str:
    """The ncu --metrics list for reduce_target profile-v9."""
    return ",".join(BEYOND_METRICS)


def metric_value(by_version: dict[str, Any], version: str, metric: str) -> Optional[float]:
    """One recorded counter, or None when the version or the metric is not in the recording."""
    return by_version.get(version, {}).get("measured", {}).get(metric)


def collected_metrics(launches: Sequence[dict[str, Any]]) -> list[str]:
    """The metric names ncu actually reported, in :data:`NCU_METRICS` order, then any others."""
    seen = {m for launch in launches for m in launch["metrics"]}
    return [m for m in NCU_METRICS if m in seen] + sorted(seen - set(NCU_METRICS))


# ---------------------------------------------------------------------------------------------
# Command line

def summary_lines() -> list[str]:
    """A short summary of everything recorded for the ladder in data/ (for the end of reduce.sh)."""
    from helpers import data
    from helpers import bench

    def best_per_size(recorded: dict[str, Any], cell: Callable[[dict[str, Any]], str],
                      sizes: Optional[Sequence[int]] = None) -> str:
        """"SIZE cell(best); ..." with each size's best kernel, over the recording's sizes (those in ``sizes``)."""
        bests = ((n, bench.best_kernel(recorded, n)) for n in recorded["sizes"] if sizes is None or n in sizes)
        return "; ".join(f"{bench.size_label(n)} {cell(best)}" for n, best in bests if best)

    out: list[str] = []
    ladder = bench.load_recorded("ladder")
    if ladder:
        out.append(f"ladder, {ladder['source']}:")
        out += ["  " + line for line in bench.format_acceptance(ladder).splitlines()]
    sweep = bench.load_recorded("sweep")
    if sweep:
        cells = best_per_size(sweep, lambda b: f"{b['name']} x{b['vs_cupy_sum']:.2f} {b['gbps']:,.0f} GB/s",
                              sizes=(2**16, 2**20, 2**24, 2**28, 2**30))
        out.append("sweep, best vs cupy.sum (device time): " + cells)
        out += ["  " + line for line in bench.format_acceptance(sweep).splitlines()]
    tune = bench.load_recorded("tune")
    if tune:
        out.append("tune, best: " + best_per_size(
            tune, lambda b: f"{b['name']}<{b['block']}> unroll {b.get('unroll')} x{b['vs_cupy_sum']:.2f}"))
    if data.exists("ncu_ladder"):
        ncu = data.load("ncu_ladder")["by_version"]
        div = "smsp__sass_branch_targets_threads_divergent.sum"
        ld = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
        pred = "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"
        out.append("ncu: " + "; ".join(f"{v} div {_fmt(e['measured'].get(div))} conflicts ld {_fmt(e['measured'].get(ld))}"
                                       + (f" pred-on/inst {e['measured'][pred]:.1f}" if e['measured'].get(pred) is not None else "")
                                       for v, e in ncu.items()))
    if data.exists("sanitizer_ladder"):
        runs = data.load("sanitizer_ladder")["runs"]
        odd = [f"{r['kernel']}/{r['tool']}: {r['outcome']}" for r in runs if not r["as_expected"]]
        caught = [f"{r['kernel']}/{r['tool']} {r['errors']} errors {r['hazards']} hazards"
                  for r in runs if r["expected"] == "reported"]
        out.append(f"sanitizer: {len(runs) - len(odd)}/{len(runs)} runs as expected; caught: {'; '.join(caught)}"
                   + (f"; UNEXPECTED: {'; '.join(odd)}" if odd else ""))
    return out or ["nothing recorded for the reduction ladder in data/"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m helpers.recording.tool_output", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sanitizer", help="TOOL__KERNEL.log files -> data/sanitizer_ladder.json")
    s.add_argument("log_dir", type=Path)
    n = sub.add_parser("ncu", help="ncu --csv output -> data/ncu_ladder.json")
    n.add_argument("csv", type=Path)
    n.add_argument("--n", type=int, required=True, help="the n the first passes ran with")
    n.add_argument("--block", type=int, required=True)
    n.add_argument("--beyond", type=Path, help="ncu --csv of reduce_target profile-v9 (v9 and cupy.sum, warm)")
    for p in (s, n):
        p.add_argument("--record", action="store_true", help="write the JSON into data/ (GPU host only)")
    sub.add_parser("summary", help="what data/ holds for the ladder, in a few lines")
    sub.add_parser("metric-sets", help="the ncu metric lists to try, widest first, one per line")
    sub.add_parser("beyond-metrics", help="the ncu metric list for reduce_target profile-v9")
    args = parser.parse_args(argv)

    if args.command == "metric-sets":
        print(metric_sets_text())
        return 0
    if args.command == "beyond-metrics":
        print(beyond_metrics_text())
        return 0
    if args.command == "summary":
        print("\n".join(summary_lines()))
        return 0
    if args.command == "sanitizer":
        runs = summarize_sanitizer_logs(args.log_dir)
        print(format_sanitizer(runs))
        payload: dict[str, Any] = {"runs": runs,
                                   "all_as_expected": bool(runs) and all(r["as_expected"] for r in runs)}
        name, ok = "sanitizer_ladder", payload["all_as_expected"]
    else:
        launches = parse_ncu_csv(args.csv.read_text(errors="replace"))
        by_version = summarize_ncu(launches)
        print(format_ncu(by_version))
        print(format_ncu_simt(by_version))
        payload = {"n": args.n, "block": args.block, "metrics": collected_metrics(launches), "by_version": by_version,
                   "launches": launches}
        if args.beyond and args.beyond.is_file():
            payload["beyond"] = summarize_beyond(parse_ncu_csv(args.beyond.read_text(errors="replace")))
            print(format_beyond(payload["beyond"]))
        name, ok = "ncu_ladder", bool(by_version)
    if args.record:
        from helpers import data
        from helpers.engine import backend

        print(f"recorded: {data.write(name, payload, backend.stamp())}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
