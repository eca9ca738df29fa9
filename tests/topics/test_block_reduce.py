"""Block reductions, the real kernels on the SIMT machine: against NumPy over awkward shapes, the seeds'
bugs reproduced, races found (beside racecheck's recorded verdicts), the phase trace drawn from the
machine's run, validation, compile errors, sanitizer parsing, and every H200 recording reproduced."""
from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.engine import kernels
from helpers.topics import block_reduce as br
from helpers.topics.launch import launch
from helpers.engine.trace import Trace
from helpers.recording import record_reduce as rr
from recordings import needs
from helpers.topics.warp_reduce import BITWISE_OPS, OPS

EMU = "emulator"
SHAPES = [(32, 1), (48, 1), (1024, 1), (1, 1), (20, 1), (1, 1024), (7, 13), (33, 31), (100, 10), (3, 341),
          (96, 2), (6, 4), (32, 3), (32, 5), (5, 7), (48, 3), (17, 60)]


def _values(rng: np.random.Generator, block: tuple[int, int], dtype: str) -> np.ndarray:
    v = rng.integers(-100, 100, (block[1], block[0]))
    return v.astype(dtype) if dtype != "uint32" else (v + 100).astype(np.uint32)


@pytest.mark.parametrize("kind", br.KINDS)
@pytest.mark.parametrize("block", SHAPES)
def test_fixed_matches_numpy_on_any_shape(block: tuple[int, int], kind: str) -> None:
    """The real kernels on the machine: right, defined and clean on every shape (one dtype and op per
    shape, rotating, so every (dtype, op) pair runs over the shapes)."""
    rng = np.random.default_rng(block[0] * 7919 + block[1])
    pairs = [(d, op) for d in ("int32", "float32", "uint32") for op in OPS
             if not (op in BITWISE_OPS and d == "float32")]
    dtype, op = pairs[(SHAPES.index(block) * 3 + br.KINDS.index(kind)) % len(pairs)]
    r = br.block_reduce(_values(rng, block, dtype), block, op, kind, backend=EMU)
    assert r.correct and r.defined.all() and not r.findings, (dtype, op, [str(f) for f in r.findings])
    assert r.source == "the SIMT machine" and r.trace.is_block


def test_who_holds_the_result() -> None:
    v = np.arange(100, dtype=np.int32)
    r = br.block_reduce(v, backend=EMU)
    assert r.holders.sum() == 1 and r.holders[0, 0] and r.result == 4950
    assert not (r.values == 4950).all()                             # other threads hold partials
    every = br.block_reduce(v, broadcast=True, backend=EMU)
    assert every.holders.all() and (every.values == 4950).all()
    x = br.block_reduce(v.reshape(4, 25), kind="x", backend=EMU)
    assert x.result.tolist() == v.reshape(4, 25).sum(axis=1).tolist() and x.holders.all()
    y = br.block_reduce(v.reshape(4, 25), kind="y", backend=EMU)
    assert y.result.tolist() == v.reshape(4, 25).sum(axis=0).tolist()


# ---------------------------------------------------------------- the seeds' bugs, reproduced

def _ones(x: int, y: int) -> np.ndarray:
    return np.ones((y, x), np.int32)


def test_seed_block_reduce_sum_drops_the_tail_warp() -> None:
    r = br.block_reduce(_ones(48, 1), version="seed", backend=EMU)
    assert r.result_defined and r.result == 32
    assert br.block_reduce(_ones(64, 1), version="seed", backend=EMU).result == 64
    small = br.block_reduce(_ones(20, 1), version="seed", backend=EMU)
    assert not small.result_defined             # a 20-thread warp shuffles with lanes that do not exist


def test_seed_block_x_reduce_needs_power_of_two_warps_per_row() -> None:
    r = br.block_reduce(_ones(96, 2), kind="x", version="seed", backend=EMU)
    assert r.result_defined[0] and r.result[0] == 128            # row 0 borrows row 1's first warp
    assert not r.result_defined[1]                                # row 1 reads a slot nobody wrote
    for ok_shape in ((64, 2), (128, 4), (32, 8), (16, 4), (1024, 1)):
        assert br.block_reduce(_ones(*ok_shape), kind="x", version="seed", backend=EMU).correct, ok_shape
    six = br.block_reduce(_ones(6, 4), kind="x", version="seed", backend=EMU)
    assert six.result[:3].tolist() == [8, 8, 8]                   # 8 lanes summed, across row boundaries


def test_seed_block_x_reduce_write_write_race() -> None:
    v = np.random.default_rng(7).integers(-9, 10, (2, 48)).astype(np.int32)
    r = br.block_reduce(v, kind="x", version="seed", backend=EMU)
    ww = [h for h in r.hazards if h.detail["hazard"] == "WAW"]
    assert ww and ww[0].lines == (142, 142)                        # tids 32 and 48 both store shared[1]
    assert {t[1] for t in ww[0].threads} == {(32, 0, 0), (0, 1, 0)}
    assert not r.result_defined[1] and r.result[0] == v[0, :32].sum()
    assert "uninitialized" in {f.kind for f in r.findings}


def test_seed_block_y_reduce_drops_rows_and_races() -> None:
    for rows, got in ((3, 2), (5, 4), (4, 4), (6, 4), (7, 4)):
        r = br.block_reduce(_ones(32, rows), kind="y", version="seed", backend=EMU)
        assert r.result_defined.all() and (r.result == got).all(), rows   # the racing store rewrites the same value
        assert r.hazards and {h.detail["hazard"] for h in r.hazards} == {"WAR"}, rows
        assert r.hazards[0].lines[0] == 195                              # the read of the partner row
    three = br.block_reduce(_ones(32, 3), kind="y", version="seed", backend=EMU)
    assert len(three.hazards) == 1 and three.hazards[0].count == 32      # one per column, folded into one finding


def test_fixed_versions_have_no_hazards() -> None:
    for kind in br.KINDS:
        assert not br.block_reduce(_ones(32, 3), kind=kind, backend=EMU).hazards


def test_back_to_back_race_is_undefined_where_the_racy_load_happened() -> None:
    """Without the barrier, warp 0's loads of the first call race with the second call's stores: what
    lanes 1-3 loaded, what they offered to the first call's second shuffle tree, and thread 0's first
    result are undefined; the second call (its loads after its own barrier) is defined."""
    b = br.back_to_back(_ones(128, 1), 2 * _ones(128, 1), barrier=False)
    t = b.trace
    undefined = [np.flatnonzero(t.active[k].reshape(-1) & ~t.defined[k].reshape(-1)).tolist() for k in range(t.n_steps)]
    assert t.kinds == ("input", "warp", "store", "barrier", "load", "warp", "warp", "store", "barrier", "load",
                       "warp", "return")
    assert undefined[4] == [1, 2, 3] and undefined[5] == [1, 2, 3]
    assert t.stores[7].tolist() == [[0, 0], [32, 1], [64, 2], [96, 3]] and undefined[7] == []
    assert all(u == [] for u in undefined[8:11]) and undefined[11] == [0, 1, 2, 3]   # r1 of threads 0-3
    assert not b.first_defined and b.second_defined and b.second == 256
    (race,) = b.hazards
    assert race.detail["hazard"] == "WAR" and race.lines == (51, 48) and race.count == 3
    ok = br.back_to_back(_ones(128, 1), 2 * _ones(128, 1), barrier=True)
    assert not ok.hazards and ok.first == 128 and ok.second == 256 and ok.first_defined


def test_block_trace_phases_and_json() -> None:
    t = br.block_trace(np.arange(48, dtype=np.int32))
    assert t.kinds == ("input", "warp", "store", "barrier", "load", "warp", "return")
    assert t.held.shape == (7, 2, 32) and t.source == "SIMT machine"
    assert not t.active[0, 1, 16:].any()                           # lanes 48..63 do not exist
    assert t.defined[1][t.active[1]].all()
    assert t.stores[2].tolist() == [[0, 0], [32, 1]] and t.shared[2, :2].tolist() == [496, 632]
    assert t.shared_defined[4, :2].all() and not t.shared_defined[4, 2:].any()
    assert t.loads[4].tolist() == [[0, 0], [1, 1]] and t.held[6, 0, 0] == 1128
    assert "block_reduce.cuh:48" in t.labels[2]                    # the line of the kernel that stores
    back = Trace.from_dict(json.loads(json.dumps(t.to_dict())))
    assert back.to_dict() == t.to_dict() and back.is_block


def test_block_trace_is_drawn_from_the_machine_trace() -> None:
    """The same launch through helpers.topics.launch: the block trace's stores are the machine's memory events."""
    v = np.arange(48, dtype=np.int32)
    run = launch("block_reduce", "block_reduce_kernel<int, warplab::ops::Sum<int>>", 1, (48, 1),
                 [v, np.zeros(48, np.int32)], backend=EMU, trace=True)
    m = run.report.trace.memory
    st = m[m["shared"] & m["store"]]
    assert sorted(zip(st["tid"].tolist(), st["index"].tolist(), st["bits"].tolist())) == [(0, 0, 496), (32, 1, 632)]
    mine, theirs = run.report.trace.block((48, 1), np.int32, 1), br.block_trace(v)
    assert mine.kinds == theirs.kinds and np.array_equal(mine.shared, theirs.shared)
    assert np.array_equal(mine.held, theirs.held) and np.array_equal(mine.defined, theirs.defined)


def test_machine_racecheck_matches_the_recorded_verdicts() -> None:
    """Racecheck on a laptop: for every launch compute-sanitizer watched on the H200, the machine finds a
    race exactly where racecheck reported one."""
    rec = needs("sanitizer_block")
    for kernel, x, y in rr.SANITIZER_RUNS:
        verdicts = {r["outcome"] for r in rec["runs"]
                    if r["tool"] == "racecheck" and (r["kernel"], tuple(r["block"])) == (kernel, (x, y))}
        assert verdicts == {"reported" if kernel in rr.RACY else "clean"}, kernel
        assert bool(br.machine_races(kernel, x, y)) == (kernel in rr.RACY), kernel
    table = br.machine_vs_racecheck(rec).splitlines()
    assert len(table) == 1 + len(rr.SANITIZER_RUNS)
    seed = next(line for line in table if line.startswith("seed_y"))
    assert seed.split()[3:5] == ["race", "WAR"] and "reported" in seed


@pytest.mark.parametrize("kwargs, message", [
    ({"block": (40, 40)}, r"block must be \(x, y\) with x >= 1, y >= 1 and x \* y <= 1024; got \(40, 40\) \(1600 threads\)"),
    ({"block": (0, 4)}, r"block must be \(x, y\) with x >= 1"),
    ({"block": (5, 3)}, r"values must have shape \(3, 5\) or \(15,\) for block \(5, 3\); got shape \(32,\)"),
    ({"op": "mean"}, "op must be one of 'sum', 'max', 'min', 'bit_and', 'bit_or', 'bit_xor'; got 'mean'"),
    ({"kind": "z"}, "kind must be one of 'sum', 'x', 'y'; got 'z'"),
    ({"version": "v2"}, "version must be one of 'fixed', 'seed'; got 'v2'"),
    ({"kind": "x", "broadcast": True}, "broadcast=True needs kind='sum' and version='fixed'"),
    ({"version": "seed", "op": "max"}, "the seed's BlockReduceSum sums a 1D block: it needs op='sum'"),
])
def test_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        br.block_reduce(np.ones(32, np.int32), **kwargs)


def test_validation_seed_x_rows() -> None:
    with pytest.raises(ValueError, match=r"block y must be <= 64 for the seed's BlockXReduce"):
        br.block_reduce(_ones(2, 100), kind="x", version="seed")
    with pytest.raises(ValueError, match=r"op 'bit_or' needs an integer dtype"):
        br.block_reduce(np.ones(32, np.float32), op="bit_or")


# ---------------------------------------------------------------- kernels and the as-printed seed

@pytest.mark.needs_nvrtc
def test_seed_as_printed_does_not_compile() -> None:
    x = br.seed_compile_error("x")
    assert "namespace-qualified name is required" in x and "using kWarpSize;" in x
    assert "seed_as_printed/block_x_reduce.cu(" in x and ".txt" not in x
    y = br.seed_compile_error("y")
    assert "expected a declaration" in y
    with pytest.raises(ValueError, match="kind must be one of 'x', 'y'"):
        br.seed_compile_error("sum")


def test_seed_fixes_are_the_only_changes() -> None:
    src = kernels.source("seed_block_reduce")
    assert src.count("// SEED FIX:") == 2
    printed_x = kernels.source("seed_as_printed/block_x_reduce.cu.txt")
    fixed_x = kernels.anchor("seed_block_reduce", "seed_block_x_reduce")
    body = lambda s: [l.strip() for l in s[s.index("template <typename T, typename ReduceOp>\n__device__ __forceinline__ T BlockXReduce"):].splitlines()]  # noqa: E501,E731
    diff = [(a, b) for a, b in zip(body(printed_x), body(fixed_x)) if a != b]
    assert diff == [("using kWarpSize;", "constexpr int kWarpSize = 32;  // SEED FIX: printed as `using kWarpSize;`, "
                                         "which does not compile")]


def test_block_anchors_exist() -> None:
    assert {"block_reduce", "block_all_reduce", "block_x_reduce", "block_y_reduce"} <= set(kernels.anchors("block_reduce.cuh"))
    assert {"seed_block_reduce_sum", "seed_warp_reduce", "seed_block_x_reduce", "seed_block_y_reduce",
            "seed_partial_warp"} <= set(kernels.anchors("seed_block_reduce"))


# ---------------------------------------------------------------- sanitizer summaries

RACECHECK_SAMPLE = """========= COMPUTE-SANITIZER
seed_y block=(32, 3): WRONG, 96/96 threads defined
========= Error: Race reported between Read access at void seed::BlockYReduce<int, warplab::ops::Sum<int>>(T1, T2)+0x2a0
=========     and Write access at void seed::BlockYReduce<int, warplab::ops::Sum<int>>(T1, T2)+0x310 [124 hazards]
=========
========= RACECHECK SUMMARY: 5 hazards displayed (5 errors, 0 warnings)
"""
SYNCCHECK_SAMPLE = """========= COMPUTE-SANITIZER
y block=(5, 7): correct, 35/35 threads defined
========= ERROR SUMMARY: 0 errors
"""


def test_sanitizer_runs_are_judged() -> None:
    race = rr.sanitizer_run(RACECHECK_SAMPLE, "racecheck", "seed_y", (32, 3), 1, "analysis")
    assert (race["hazards"], race["errors"], race["warnings"]) == (5, 5, 0)
    assert race["outcome"] == "reported" and race["as_expected"] and race["reports"]
    assert race["report"] == "analysis" and race["print_limit"] == rr.PRINT_LIMIT
    assert race["summary_line"] == "RACECHECK SUMMARY: 5 hazards displayed (5 errors, 0 warnings)"
    assert race["excerpt"][0].startswith("Error: Race reported between Read access")
    assert race["excerpt"][1].endswith("[124 hazards]") and len(race["excerpt"]) == 2
    sync = rr.sanitizer_run(SYNCCHECK_SAMPLE, "synccheck", "y", (5, 7), 0)
    assert sync["outcome"] == "clean" and sync["as_expected"]
    cut = rr.sanitizer_run("========= COMPUTE-SANITIZER\n", "racecheck", "x", (48, 3), None)
    assert cut["outcome"] == "incomplete" and not cut["as_expected"]
    assert rr.expected_outcome("y", "racecheck") == "clean"
    assert rr.expected_outcome("b2b_nobarrier", "racecheck") == "reported"
    assert rr.expected_outcome("b2b_nobarrier", "synccheck") == "clean"


def test_sanitizer_jobs_and_commands() -> None:
    jobs = rr.sanitizer_jobs()
    assert len(jobs) == len(set(jobs))
    for kernel, x, y, tool, report, limit in jobs:
        cmd = rr.sanitizer_command(kernel, x, y, tool, report, limit)
        assert cmd[:3] == ["compute-sanitizer", "--tool", tool] and cmd[-3:] == [kernel, str(x), str(y)]
        assert cmd[cmd.index("--print-limit") + 1] == str(limit)
        assert ("--racecheck-report" in cmd) == (tool == "racecheck")
    modes = {(k, r, n) for k, _, _, t, r, n in jobs if t == "racecheck"}
    assert {("seed_y", m, rr.PRINT_LIMIT) for m in ("analysis", "all", "hazard")} <= modes
    assert ("seed_y", "all", 0) in modes and ("sum", "hazard", rr.PRINT_LIMIT) not in modes
    assert {k for k, *_ in jobs} == {k for k, _, _ in rr.SANITIZER_RUNS}
    with pytest.raises(ValueError, match="report must be one of"):
        rr.sanitizer_command("y", 5, 7, "synccheck", "all")
    with pytest.raises(ValueError, match="report must be one of"):
        rr.sanitizer_command("y", 5, 7, "racecheck")


def test_sanitizer_targets_are_valid() -> None:
    from helpers.topics.block_reduce import BACK_TO_BACK_TARGETS as BACK_TO_BACK, SANITIZER_TARGETS as KERNELS
    for kernel, x, y in rr.SANITIZER_RUNS:
        ones = np.ones((y, x), np.int32)
        if kernel in BACK_TO_BACK:  # the machine says which of the two races
            b2b = br.back_to_back(ones, ones, (x, y), barrier=BACK_TO_BACK[kernel])
            assert bool(b2b.hazards) == (kernel in rr.RACY)
            continue
        kind, version, broadcast = KERNELS[kernel]
        br.block_reduce(ones, (x, y), "sum", kind, version, broadcast, backend=EMU)


# ---------------------------------------------------------------- the H200 recordings

def test_machine_reproduces_recorded_blocks() -> None:
    rec = needs("block_reduce")
    names = {c["name"] for c in rec["cases"]}
    assert names == {c["name"] for c in rr.block_cases()}
    for c in rec["cases"]:
        v = np.asarray(c["values"], dtype=c["dtype"])
        r = br.block_reduce(v, tuple(c["block"]), c["op"], c["kind"], c["version"], c["broadcast"], backend=EMU)
        assert r.defined.astype(int).tolist() == c["defined"], c["name"]
        assert (r.values == np.asarray(c["result"], dtype=v.dtype)).all(), c["name"]
        assert r.correct == c["correct"], c["name"]


def test_recorded_seed_facts() -> None:
    cases = {c["name"]: c for c in needs("block_reduce")["cases"]}
    assert cases["seed_sum_48_ones"]["result"][0][0] == 32
    assert cases["seed_x_96x2_ones"]["result"][0][0] == 128
    assert set(cases["seed_y_32x3_ones"]["result"][0]) == {2}
    assert set(cases["seed_y_32x5_ones"]["result"][0]) == {4}


def test_recorded_sanitizer_outcomes() -> None:
    runs = needs("sanitizer_block")["runs"]
    assert {(r["kernel"], tuple(r["block"]), r["tool"]) for r in runs} == \
        {(k, (x, y), t) for k, x, y in rr.SANITIZER_RUNS for t in rr.SANITIZER_TOOLS}
    if all("report" in r for r in runs):   # recorded since report modes were: one run per job
        assert sorted((r["kernel"], *r["block"], r["tool"], r["report"], r["print_limit"]) for r in runs) == \
            sorted(rr.sanitizer_jobs())
    bad = [(r["tool"], r["kernel"], r.get("report"), r["outcome"]) for r in runs if not r["as_expected"]]
    assert not bad, bad


def test_sanitizer_table_tells_printed_from_counted() -> None:
    from helpers.widgets import reduce as W

    rec = {"runs": [rr.sanitizer_run(RACECHECK_SAMPLE, "racecheck", "seed_y", (32, 3), 1, "analysis"),
                    rr.sanitizer_run(RACECHECK_SAMPLE, "racecheck", "seed_y", (32, 3), 1, "all", 0),
                    rr.sanitizer_run(SYNCCHECK_SAMPLE, "synccheck", "y", (5, 7), 0)]}
    lines = W.sanitizer_table(rec).splitlines()
    assert lines[0].split() == ["tool", "kernel", "block", "report", "limit", "printed", "errors", "warnings",
                                "outcome"]
    assert lines[1].split()[-6:] == ["analysis", "20", "5", "5", "0", "reported"]
    assert lines[2].split()[-6:] == ["all", "0", "5", "5", "0", "reported"]
    assert lines[3].split()[-6:] == ["-", "20", "-", "0", "-", "clean"]
    assert len(W.sanitizer_table(rec, tools=("racecheck",)).splitlines()) == 3
    text = W.sanitizer_excerpt(rec, "seed_y")
    assert text.splitlines()[0].startswith("Error: Race reported between Read access")
    assert text.splitlines()[-1] == "RACECHECK SUMMARY: 5 hazards displayed (5 errors, 0 warnings)"
    assert W.sanitizer_excerpt(rec, "seed_y", max_lines=1).splitlines()[1] == "... (1 more lines kept)"
    with pytest.raises(ValueError, match="recorded: analysis \\(limit 20\\), all \\(limit 0\\)"):
        W.sanitizer_excerpt(rec, "seed_y", "hazard")
    old = {"runs": [{k: v for k, v in rec["runs"][1].items() if k not in ("report", "print_limit", "excerpt")}]}
    assert W.sanitizer_table(old).splitlines()[1].split()[-6:-3] == ["all", "20", "5"]   # 2026-11-30 settings
    both = W.racecheck_side_by_side(rec, "seed_y").split("\n\n")
    assert len(both[0].splitlines()) == 3 and both[1].startswith("racecheck's default report")
    assert both[1].splitlines()[1].startswith("Error: Race reported between")
    assert W.racecheck_side_by_side(old, "seed_y").endswith("has not been recorded on the H200 yet (only the rows above)")


def test_race_severity_table() -> None:
    from helpers.widgets import reduce as W

    warp_sample = RACECHECK_SAMPLE.replace("Error: Race", "Warning: (Warp Level Programming) Potential RAW hazard "
                                           "detected at __shared__ 0x10 in block (1,0,0) :\n========= Race") \
        .replace("(5 errors, 0 warnings)", "(0 errors, 203314 warnings)")
    block = {"runs": [rr.sanitizer_run(RACECHECK_SAMPLE, "racecheck", k, (32, 3), 1, "all")
                      for k in ("seed_y", "b2b_nobarrier")]}
    ladder = {"runs": [{**rr.sanitizer_run(warp_sample, "racecheck", "v4_legacy", (256, 1), 0, "all"), "block": 256}]}
    lines = W.race_severity_table(block, ladder).splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["BlockReduce", "seed", "v4"]
    assert "warp 0 (row 0) and warp 1 (row 1)" in lines[2] and "lanes of warp 0" in lines[3]
    assert lines[3].endswith("0  203,314  Warning: (Warp Level Programming) Potential RAW hazard")
    with pytest.raises(ValueError, match="no racecheck run of 'b2b_nobarrier' with --racecheck-report analysis"):
        W.race_severity_table(block, ladder, report="analysis")


def test_block_trace_of_64_bit_values() -> None:
    """A double shuffles as two 32-bit words (high, then low): the trace puts them back together."""
    v = np.arange(48, dtype=np.float64) / 4
    t = br.block_trace(v)
    assert t.held.dtype == np.float64 and t.held[1, 0, :4].tolist() == [0.0, 0.25, 0.5, 0.75]
    assert t.shared[2, :2].tolist() == [v[:32].sum(), v[32:].sum()] and t.held[-1, 0, 0] == v.sum()
