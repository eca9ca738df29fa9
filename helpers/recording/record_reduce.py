"""Recordings for notebooks 03-04, made on a GPU: warp reduce traces, block reduce results, sanitizers.

:func:`record` writes, stamped with :func:`helpers.engine.backend.stamp`:

* ``warp_reduce_traces.json``  every :data:`WARP_TRACES` configuration traced by the instrumented
  kernels (``{"traces": {name: {"config", "trace"}}, "methods": {name: {"config", "results"}}}``),
  and every warp-reduce method of :func:`helpers.topics.warp_reduce.compare_methods` on :data:`METHOD_INPUTS`;
* ``block_reduce.json``  every :data:`BLOCK_CASES` configuration run on the GPU (``{"cases": [...]}``,
  each with its config, input, and what every thread returned, 0 where the SIMT machine says undefined);
* ``sanitizer_block.json``  compute-sanitizer racecheck and synccheck on :data:`SANITIZER_RUNS`
  (one process per kernel, tool and racecheck report mode, in parallel, through
  :mod:`helpers.recording.block_reduce_target`), parsed by :func:`helpers.recording.tool_output.parse_sanitizer`, with
  the summary line and the first report lines as printed; written only where compute-sanitizer exists.
  Racecheck runs once per :data:`RACECHECK_REPORTS` mode (its default, ``analysis``, and ``all``),
  and in ``hazard`` mode too for the :data:`RACY` kernels. Every run prints at most
  :data:`PRINT_LIMIT` reports (``--print-limit``: our choice, compute-sanitizer's default is 100),
  except the :data:`UNLIMITED` runs, repeated with ``--print-limit 0`` (no limit) to show which
  numbers of the summary the limit changes.

``python -m helpers.recording.record`` calls :func:`record`; ``python3 -m helpers.recording.record_reduce`` does too.
CI, without a GPU, checks that the emulator reproduces each file (tests/topics/test_warp_reduce.py,
tests/topics/test_block_reduce.py).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional

import numpy as np

from helpers import data
from helpers.engine import backend
from helpers.topics.block_reduce import block_reduce
from helpers.topics.warp_reduce import compare_methods, warp_reduce_trace

SANITIZER_TOOLS: tuple[str, ...] = ("racecheck", "synccheck")
SANITIZER_TIMEOUT_S = 180
SANITIZER_WORKERS = 8    # compute-sanitizer processes at once (8 ran side by side on the H200 on 2026-11-30)
# racecheck --racecheck-report modes recorded for every kernel: "analysis" is racecheck's default (one
# report per racing pair of instructions, with its hazard count), "all" adds the byte-accurate
# "hazard" reports (one per byte of shared memory in contention).
RACECHECK_REPORTS: tuple[str, ...] = ("analysis", "all")
PRINT_LIMIT = 20         # --print-limit: reports printed per run (compute-sanitizer's default is 100)
UNLIMITED: tuple[tuple[str, str], ...] = (("seed_y", "all"),)   # (kernel, report) also run with --print-limit 0
EXCERPT_LINES = 16       # report lines kept verbatim per run


def _ints(seed: int, shape: Any, lo: int = -9, hi: int = 10) -> np.ndarray:
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(np.int32)


def warp_trace_configs() -> dict[str, dict[str, Any]]:
    """name -> keyword arguments of :func:`helpers.topics.warp_reduce.warp_reduce_trace` (values included)."""
    lane = np.arange(32, dtype=np.int32)
    normal = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    return {
        "down_sum_lane": {"values": lane, "op": "sum", "tree": "down"},
        "xor_sum_lane": {"values": lane, "op": "sum", "tree": "xor"},
        "down_sum_normal_float32": {"values": normal, "op": "sum", "tree": "down"},
        "xor_sum_normal_float32": {"values": normal, "op": "sum", "tree": "xor"},
        "down_max_width8": {"values": _ints(1, 32, -99, 100), "op": "max", "width": 8, "tree": "down"},
        "xor_min_width4": {"values": _ints(2, 32, -99, 100), "op": "min", "width": 4, "tree": "xor"},
        "down_bit_xor_width16": {"values": _ints(4, 32, 0, 256), "op": "bit_xor", "width": 16, "tree": "down"},
        "pad_sum_20_of_32": {"values": lane, "op": "sum", "n_valid": 20, "partial": "pad"},
        "ballot_sum_20_of_32": {"values": lane, "op": "sum", "n_valid": 20, "partial": "ballot"},
        "ballot_sum_32_of_32": {"values": lane, "op": "sum", "n_valid": 32, "partial": "ballot"},
        "two_warps_sum": {"values": _ints(5, (2, 32)), "op": "sum", "tree": "down"},
    }


def method_inputs() -> dict[str, np.ndarray]:
    """The inputs notebook 03 reduces every way (trees, __reduce_*_sync, cooperative groups, CUB)."""
    return {"random_int32": _ints(6, 32, -99, 100),
            "normal_float32": np.random.default_rng(3).standard_normal(32).astype(np.float32)}


def block_cases() -> list[dict[str, Any]]:
    """The fixed block configurations recorded: the seeds' facts, their fixes, awkward shapes."""
    ones = lambda x, y: np.ones((y, x), np.int32)  # noqa: E731
    cases = [
        ("seed_sum_48_ones", ones(48, 1), "sum", "sum", "seed", False),
        ("fixed_sum_48_ones", ones(48, 1), "sum", "sum", "fixed", False),
        ("fixed_all_48_ones", ones(48, 1), "sum", "sum", "fixed", True),
        ("seed_sum_64_ones", ones(64, 1), "sum", "sum", "seed", False),
        ("seed_x_96x2_ones", ones(96, 2), "sum", "x", "seed", False),
        ("fixed_x_96x2_ones", ones(96, 2), "sum", "x", "fixed", False),
        ("seed_x_64x2_ones", ones(64, 2), "sum", "x", "seed", False),
        ("seed_x_6x4_ones", ones(6, 4), "sum", "x", "seed", False),
        ("fixed_x_6x4_ones", ones(6, 4), "sum", "x", "fixed", False),
        ("seed_x_48x2_random", _ints(7, (2, 48)), "sum", "x", "seed", False),
        ("seed_y_32x3_ones", ones(32, 3), "sum", "y", "seed", False),
        ("seed_y_32x5_ones", ones(32, 5), "sum", "y", "seed", False),
        ("seed_y_32x4_ones", ones(32, 4), "sum", "y", "seed", False),
        ("fixed_y_32x3_ones", ones(32, 3), "sum", "y", "fixed", False),
        ("fixed_y_32x5_ones", ones(32, 5), "sum", "y", "fixed", False),
        ("fixed_sum_300x3_max", _ints(8, (3, 300), -999, 1000), "max", "sum", "fixed", False),
        ("fixed_x_33x31_sum", _ints(9, (31, 33)), "sum", "x", "fixed", False),
        ("fixed_y_7x13_min", _ints(10, (13, 7), -999, 1000), "min", "y", "fixed", False),
        ("fixed_x_100x10_float32", _ints(11, (10, 100)).astype(np.float32), "sum", "x", "fixed", False),
    ]
    return [{"name": n, "values": v, "block": (v.shape[1], v.shape[0]), "op": op, "kind": kind, "version": ver,
             "broadcast": bc} for n, v, op, kind, ver, bc in cases]


# (target kernel, x, y): every corrected kernel on an awkward shape, and the seed's racy BlockYReduce.
SANITIZER_RUNS: tuple[tuple[str, int, int], ...] = (
    ("sum", 100, 3), ("all", 48, 1), ("x", 48, 3), ("y", 5, 7), ("y", 32, 3), ("seed_y", 32, 3),
    ("b2b", 128, 1), ("b2b_nobarrier", 128, 1),
)
# The runs racecheck must report: the seed's BlockYReduce, and two BlockReduce calls with no barrier between.
RACY: tuple[str, ...] = ("seed_y", "b2b_nobarrier")


def expected_outcome(kernel: str, tool: str) -> str:
    """"reported" for the :data:`RACY` kernels under racecheck, "clean" for every other run."""
    return "reported" if kernel in RACY and tool == "racecheck" else "clean"


Job = tuple[str, int, int, str, Optional[str], int]   # kernel, x, y, tool, racecheck report or None, print limit


def sanitizer_jobs() -> list[Job]:
    """(kernel, x, y, tool, racecheck report mode or None, print limit) of every compute-sanitizer run."""
    jobs: list[Job] = []
    for k, x, y in SANITIZER_RUNS:
        reports = (*RACECHECK_REPORTS, *(("hazard",) if k in RACY else ()))
        jobs += [(k, x, y, "racecheck", r, PRINT_LIMIT) for r in reports]
        jobs += [(k, x, y, "racecheck", r, 0) for kk, r in UNLIMITED if kk == k]
        jobs.append((k, x, y, "synccheck", None, PRINT_LIMIT))
    return jobs


_SUMMARY_LINE = re.compile(r"^=+ ((?:RACECHECK|ERROR) SUMMARY: .*)$")
_REPORT_LINE = re.compile(r"^=+ (?!\s*(?:COMPUTE-SANITIZER|RACECHECK SUMMARY|ERROR SUMMARY))(.*\S.*)$")


def sanitizer_run(text: str, tool: str, kernel: str, block: tuple[int, int], exit_code: Optional[int],
                  report: Optional[str] = None, print_limit: int = PRINT_LIMIT) -> dict[str, Any]:
    """One run's record: the parsed summary, its outcome (clean / reported / incomplete) and expectation,
    the racecheck ``report`` mode and ``print_limit`` it ran with, the summary line as printed
    (``summary_line``) and its first :data:`EXCERPT_LINES` report lines, prefix stripped (``excerpt``)."""
    from helpers.recording.tool_output import parse_sanitizer

    s = parse_sanitizer(text, tool)
    total = s["errors"] + s["warnings"] + s["hazards"]
    outcome = "incomplete" if not s["summary_found"] else "reported" if total else "clean"
    expected = expected_outcome(kernel, tool)
    lines = text.splitlines()
    summary = [m.group(1).strip() for line in lines if (m := _SUMMARY_LINE.match(line.rstrip()))]
    excerpt = [m.group(1) for line in lines if (m := _REPORT_LINE.match(line.rstrip()))][:EXCERPT_LINES]
    return {**s, "kernel": kernel, "block": list(block), "exit_code": exit_code, "outcome": outcome,
            "expected": expected, "as_expected": outcome == expected, "report": report,
            "print_limit": print_limit, "summary_line": " | ".join(summary), "excerpt": excerpt}


def sanitizer_command(kernel: str, x: int, y: int, tool: str, report: Optional[str] = None,
                      print_limit: int = PRINT_LIMIT) -> list[str]:
    """The compute-sanitizer command line of one run (racecheck: ``--racecheck-report report``;
    ``print_limit`` 0 prints every report)."""
    if (tool == "racecheck") != (report is not None):
        raise ValueError(f"report must be one of 'analysis', 'hazard', 'all' for racecheck and None for other "
                         f"tools; got tool={tool!r}, report={report!r}")
    mode = ["--racecheck-report", report] if report is not None else []
    return ["compute-sanitizer", "--tool", tool, *mode, "--print-limit", str(print_limit), sys.executable, "-m",
            "helpers.recording.block_reduce_target", kernel, str(x), str(y)]


def _sanitize(kernel: str, x: int, y: int, tool: str, report: Optional[str], print_limit: int) -> dict[str, Any]:
    cmd = sanitizer_command(kernel, x, y, tool, report, print_limit)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=SANITIZER_TIMEOUT_S, cwd=root, env=env)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as exc:
        text, rc = f"timed out after {SANITIZER_TIMEOUT_S} s\n{exc.stdout or ''}", None
    return sanitizer_run(text, tool, kernel, (x, y), rc, report, print_limit)


def _write(out_dir: Path, name: str, payload: dict[str, Any], stamp: dict[str, str]) -> Path:
    if out_dir == data.DATA_DIR:
        return data.write(name, payload, stamp)
    p = out_dir / f"{name}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"stamp": {**stamp, "date": _dt.date.today().isoformat()}, **payload}, indent=1) + "\n")
    return p


def _jsonable(config: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else list(v) if isinstance(v, tuple) else v)
            for k, v in config.items()} | ({"dtype": config["values"].dtype.name} if "values" in config else {})


def record_warp(out_dir: Path, stamp: dict[str, str]) -> Path:
    traces = {name: {"config": _jsonable(cfg), "trace": warp_reduce_trace(**cfg, backend="cupy").to_dict()}
              for name, cfg in warp_trace_configs().items()}
    methods = {}
    for name, v in method_inputs().items():
        results = compare_methods(v, "sum", backend="cupy")
        methods[name] = {"config": {"values": v.tolist(), "dtype": v.dtype.name, "op": "sum"},
                         "results": {m: {"values": r.values.tolist(), "defined": r.defined.astype(int).tolist()}
                                     for m, r in results.items()}}
    return _write(out_dir, "warp_reduce_traces", {"traces": traces, "methods": methods}, stamp)


def record_block(out_dir: Path, stamp: dict[str, str]) -> Path:
    cases = []
    for case in block_cases():
        r = block_reduce(case["values"], case["block"], case["op"], case["kind"], case["version"], case["broadcast"],
                         backend="cupy")
        cases.append({**_jsonable(case), "result": r.values.tolist(), "defined": r.defined.astype(int).tolist(),
                      "correct": r.correct})
    return _write(out_dir, "block_reduce", {"cases": cases}, stamp)


def record_sanitizer(out_dir: Path, stamp: dict[str, str]) -> Optional[Path]:
    if shutil.which("compute-sanitizer") is None:
        print("record_reduce: compute-sanitizer not found; sanitizer_block.json not written", file=sys.stderr)
        return None
    jobs = sanitizer_jobs()
    with ThreadPoolExecutor(max_workers=min(SANITIZER_WORKERS, len(jobs))) as pool:
        runs = list(pool.map(lambda j: _sanitize(*j), jobs))
    return _write(out_dir, "sanitizer_block", {"runs": runs}, stamp)


def record(out_dir: Optional[Path] = None, sanitizer: bool = True) -> list[Path]:
    """Record all three files into ``out_dir`` (default ``data/``) on this machine's GPU; returns the paths."""
    out = Path(out_dir) if out_dir is not None else data.DATA_DIR
    stamp = backend.stamp()
    written = [record_warp(out, stamp), record_block(out, stamp)]
    if sanitizer and (p := record_sanitizer(out, stamp)) is not None:
        written.append(p)
    return written


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m helpers.recording.record_reduce", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the JSON files (default: data/)")
    parser.add_argument("--no-sanitizer", action="store_true", help="skip the compute-sanitizer runs")
    args = parser.parse_args(argv)
    if not backend.detect().usable:
        print(f"helpers.recording.record_reduce needs a CUDA GPU: {backend.detect().reason}", file=sys.stderr)
        return 2
    written = record(args.out, sanitizer=not args.no_sanitizer)
    for p in written:
        print(f"wrote {p}")
    for p in (p for p in written if p.stem == "sanitizer_block"):
        for r in json.loads(p.read_text())["runs"]:
            flag = "" if r["as_expected"] else "  UNEXPECTED"
            mode = (f" --racecheck-report {r['report']}" if r["report"] else "") + f" --print-limit {r['print_limit']}"
            print(f"  {r['tool']:9} {r['kernel']:13} {tuple(r['block'])}{mode}: {r['outcome']} "
                  f"({r['summary_line'] or 'no summary'}){flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
