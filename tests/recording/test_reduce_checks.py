"""Parsing compute-sanitizer and Nsight Compute output (sample text in the tools' formats)."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers.recording import tool_output as C

MEMCHECK_SEED = """\
========= COMPUTE-SANITIZER
seed n=1000 block=128 offset=0: sum 3.0, exact 7.0, WRONG
========= Invalid __global__ read of size 4 bytes
=========     at seed_reduce_v4<(int)128>(float *, float *)+0x70
=========     by thread (104,0,0) in block (3,0,0)
=========     Address 0x7f2a4e003e80 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f2a4e000000 of size 4000 bytes
=========
========= Invalid __global__ read of size 4 bytes
=========     at seed_reduce_v4<(int)128>(float *, float *)+0x70
=========     by thread (105,0,0) in block (3,0,0)
=========     Address 0x7f2a4e003e84 is out of bounds
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaMemcpy.
=========
========= ERROR SUMMARY: 25 errors
"""

RACECHECK_LEGACY = """\
========= COMPUTE-SANITIZER
========= Warning: (Warp Level Programming) Potential RAW hazard detected at __shared__ 0x40 in block (0,0,0) :
=========     Write Thread (16,0,0) at reduce_v4_legacy<(int)256>(const float *, float *, long long)+0x3a0
=========     Read Thread (0,0,0) at reduce_v4_legacy<(int)256>(const float *, float *, long long)+0x390
=========     Current Value : 0, Incoming Value : 0
=========
========= Warning: (Warp Level Programming) Potential RAW hazard detected at __shared__ 0x20 in block (1,0,0) :
=========     Write Thread (8,0,0) at reduce_v4_legacy<(int)256>(const float *, float *, long long)+0x3c0
=========
v4_legacy n=100003 block=256 offset=0: sum -120.0, exact -120.0, ok
========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)
"""

CLEAN_RACECHECK = """\
========= COMPUTE-SANITIZER
v4 n=100003 block=256 offset=0: sum -120.0, exact -120.0, ok
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
"""

CLEAN_MEMCHECK = """\
========= COMPUTE-SANITIZER
v8 n=100003 block=256 offset=0: sum 12.0, exact 12.0, ok
v8 n=100003 block=256 offset=1: sum 3.0, exact 3.0, ok
========= ERROR SUMMARY: 0 errors
"""

CRASHED = """\
========= COMPUTE-SANITIZER
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
ModuleNotFoundError: No module named 'cupy'
"""


def test_memcheck_errors_and_reports() -> None:
    s = C.parse_sanitizer(MEMCHECK_SEED, "memcheck")
    assert (s["summary_found"], s["errors"], s["warnings"], s["hazards"]) == (True, 25, 0, 0)
    assert s["reports"][0] == "Invalid __global__ read of size 4 bytes"
    assert any(r.startswith("Program hit cudaErrorLaunchFailure") for r in s["reports"])
    assert len(s["reports"]) == 2  # distinct headlines only


def test_racecheck_summary() -> None:
    s = C.parse_sanitizer(RACECHECK_LEGACY, "racecheck")
    assert (s["errors"], s["warnings"], s["hazards"]) == (0, 5, 5)
    assert s["reports"] == ["Warning: (Warp Level Programming) Potential RAW hazard detected at __shared__ 0x... "
                            "in block (0,0,0)",
                            "Warning: (Warp Level Programming) Potential RAW hazard detected at __shared__ 0x... "
                            "in block (1,0,0)"]
    one = C.parse_sanitizer("========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)", "racecheck")
    assert (one["hazards"], one["errors"], one["warnings"]) == (1, 1, 0)


def test_clean_and_incomplete_runs() -> None:
    assert C.judge(C.parse_sanitizer(CLEAN_MEMCHECK, "memcheck"), "v8")["outcome"] == "clean"
    assert C.judge(C.parse_sanitizer(CLEAN_RACECHECK, "racecheck"), "v4")["as_expected"]
    crashed = C.judge(C.parse_sanitizer(CRASHED, "memcheck"), "v0")
    assert crashed["outcome"] == "incomplete" and not crashed["as_expected"]
    # a racecheck log holds no ERROR SUMMARY: it must not count as found for racecheck
    assert not C.parse_sanitizer(CLEAN_MEMCHECK, "racecheck")["summary_found"]


def test_expected_outcomes() -> None:
    assert C.expected_outcome("v4_legacy", "racecheck") == "reported"
    assert C.expected_outcome("seed", "memcheck") == "reported"
    assert C.expected_outcome("v4_legacy", "memcheck") == "clean"
    assert C.expected_outcome("onepass", "racecheck") == "clean"
    assert C.judge(C.parse_sanitizer(RACECHECK_LEGACY, "racecheck"), "v4_legacy")["as_expected"]
    assert C.judge(C.parse_sanitizer(MEMCHECK_SEED, "memcheck"), "seed")["as_expected"]
    assert not C.judge(C.parse_sanitizer(RACECHECK_LEGACY, "racecheck"), "v4")["as_expected"]


def test_bad_tool() -> None:
    with pytest.raises(ValueError, match="tool must be one of memcheck, racecheck, synccheck"):
        C.parse_sanitizer("", "initcheck")


def test_summarize_log_folder(tmp_path: Path) -> None:
    (tmp_path / "memcheck__seed.log").write_text(MEMCHECK_SEED)
    (tmp_path / "memcheck__seed.rc").write_text("1\n")
    (tmp_path / "racecheck__v4_legacy.log").write_text(RACECHECK_LEGACY)
    (tmp_path / "racecheck__v4.log").write_text(CLEAN_RACECHECK)
    (tmp_path / "memcheck__v8.log").write_text(CLEAN_MEMCHECK)
    (tmp_path / "jobs.txt").write_text("ignored\n")
    runs = C.summarize_sanitizer_logs(tmp_path)
    assert [(r["kernel"], r["tool"]) for r in runs] == [("v4", "racecheck"), ("v4_legacy", "racecheck"),
                                                         ("v8", "memcheck"), ("seed", "memcheck")]
    seed = runs[-1]
    assert (seed["n"], seed["block"], seed["exit_code"], seed["as_expected"]) == (1000, 128, 1, True)
    assert runs[0]["exit_code"] is None
    table = C.format_sanitizer(runs)
    assert "UNEXPECTED" not in table and "v4_legacy" in table


NCU_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
              '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
V0 = ("void reduce_v0<256>(const float *, float *, long long)", "(256, 1, 1)", "(65536, 1, 1)")
V1 = ("void reduce_v1<256>(const float *, float *, long long)", "(256, 1, 1)", "(65536, 1, 1)")
V2 = ("void reduce_v2<256>(const float *, float *, long long)", "(256, 1, 1)", "(65536, 1, 1)")
ONEPASS = ("reduce_onepass", "(256, 1, 1)", "(1056, 1, 1)")
DIVERGENT = "smsp__sass_branch_targets_threads_divergent.sum"
LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


def ncu_csv(*rows: tuple, chatter: tuple[str, ...] = ()) -> str:
    """What ``ncu --csv`` prints: ==PROF== lines (and any ``chatter`` of the profiled program) around
    the header and one line per (ID, (kernel, block, grid), metric, unit, value)."""
    lines = ["==PROF== Connected to process 4242 (/usr/bin/python3.12)", *chatter, NCU_HEADER]
    for i, (kernel, block, grid), metric, unit, value in rows:
        fields = (i, 4242, "python3.12", "127.0.0.1", kernel, 1, 7, block, grid, 0, "9.0",
                  "Command line profiler metrics", metric, unit, value)
        lines.append(",".join(f'"{f}"' for f in fields))
    return "\n".join(lines + ["==PROF== Disconnected from process 4242", ""])


NCU_CSV = ncu_csv((0, V0, DIVERGENT, "", "2,621,440"), (0, V0, LD_CONFLICTS, "", "0"),
                  (1, V1, DIVERGENT, "", "327,680"), (1, V1, LD_CONFLICTS, "", "4,587,520"),
                  (1, V1, "gpu__time_duration.sum", "usecond", "n/a"),
                  (2, ONEPASS, "gpu__time_duration.sum", "usecond", "12.50"),
                  chatter=('==PROF== Profiling "reduce_v0" - 0: 0%....50%....100% - 9 passes',
                           "profiled reduce_v0<256> n=16777216"))


def test_parse_ncu_csv() -> None:
    launches = C.parse_ncu_csv(NCU_CSV)
    assert [l["version"] for l in launches] == ["v0", "v1", "onepass"]
    v0, v1, one = launches
    assert (v0["block"], v0["grid"]) == (256, 65536)
    assert v0["metrics"][DIVERGENT] == 2621440
    assert v1["metrics"][LD_CONFLICTS] == 4587520
    assert v1["metrics"]["gpu__time_duration.sum"] is None
    assert one["metrics"]["gpu__time_duration.sum"] == 12.5
    assert C.parse_ncu_csv("==PROF== nothing profiled\n") == []


def test_summarize_ncu_predicts_tree_versions() -> None:
    by_version = C.summarize_ncu(C.parse_ncu_csv(NCU_CSV))
    assert set(by_version) == {"v0", "v1", "onepass"}
    assert by_version["v1"]["predicted"]["ld_extra_wavefronts"] == 70 * 65536
    assert by_version["v0"]["predicted"]["ld_extra_wavefronts"] == 0
    assert "predicted" not in by_version["onepass"]
    table = C.format_ncu(by_version)
    assert "4,587,520" in table and "n/a" in table


def test_kernel_names_map_to_versions() -> None:
    row = {"ID": "0", "Kernel Name": "seed_reduce_v4", "Block Size": "(128, 1, 1)", "Grid Size": "(4, 1, 1)"}
    assert C._launch(row)["version"] == "seed"
    row["Kernel Name"] = "void reduce_v4_legacy<64>(const float *, float *, long long)"
    assert C._launch(row)["version"] == "v4_legacy"


NCU_SIMT_CSV = ncu_csv((0, V0, "smsp__inst_executed.sum", "inst", "12,058,624"),
                       (0, V0, "smsp__thread_inst_executed_per_inst_executed.ratio", "", "31.68"),
                       (0, V0, "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "", "22.41"),
                       (0, V0, DIVERGENT, "", "0"),
                       (1, V2, "smsp__thread_inst_executed_per_inst_executed.ratio", "", "31.67"))


def test_simt_metrics_are_collected_first_and_fall_back() -> None:
    assert C.NCU_METRIC_SETS[0] == C.NCU_METRICS and C.NCU_METRIC_SETS[-1] == C.NCU_CORE_METRICS
    for metric in ("smsp__inst_executed.sum", "smsp__thread_inst_executed_per_inst_executed.ratio",
                   "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
                   "smsp__sass_inst_executed_op_shared_st.sum"):
        assert metric in C.NCU_METRICS
    assert "smsp__inst_executed.sum" not in C.NCU_METRICS_2026_11
    assert all(set(s) <= set(C.NCU_METRICS) for s in C.NCU_METRIC_SETS)
    lines = C.metric_sets_text().splitlines()
    assert [line.split(",") for line in lines] == [list(s) for s in C.NCU_METRIC_SETS]
    assert len(set(C.NCU_METRICS)) == len(C.NCU_METRICS)


def test_parse_and_show_simt_metrics() -> None:
    launches = C.parse_ncu_csv(NCU_SIMT_CSV)
    by_version = C.summarize_ncu(launches)
    assert C.metric_value(by_version, "v0", "smsp__inst_executed.sum") == 12058624
    assert C.metric_value(by_version, "v0", "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio") == 22.41
    assert C.metric_value(by_version, "v9", "smsp__inst_executed.sum") is None
    assert C.collected_metrics(launches)[:3] == ["smsp__sass_branch_targets_threads_divergent.sum",
                                                 "smsp__inst_executed.sum",
                                                 "smsp__thread_inst_executed_per_inst_executed.ratio"]
    table = C.format_ncu_simt(by_version)
    v0_line = next(line for line in table.splitlines() if line.startswith("v0"))
    assert "12,058,624" in v0_line and "31.68" in v0_line and "22.41" in v0_line
    v2_line = next(line for line in table.splitlines() if line.startswith("v2"))
    assert v2_line.count(C.NOT_RECORDED) == 3  # everything but the active ratio
    assert table.splitlines()[-1].startswith(f"{C.NOT_RECORDED}: smsp__inst_executed.sum")


def test_simt_table_of_a_complete_recording_has_no_footnote() -> None:
    full = {m: 1.0 for m in C.NCU_METRICS}
    table = C.format_ncu_simt({"v0": {"measured": full}})
    assert C.NOT_RECORDED not in table


def test_racecheck_reports_side_by_side_and_thread_ranges(tmp_path) -> None:
    """Printed reports (capped by the script's --print-limit) against the summary's counts, for the
    default report and --racecheck-report all; the threads a memcheck run named, as ranges."""
    race = ("========= Warning: (Warp Level Programming) Potential RAW hazard detected at __shared__ 0x10 in block (1,0,0) :\n"
            * 3 + "========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 500 warnings)\n")
    (tmp_path / "racecheck__v4_legacy.log").write_text(race)
    (tmp_path / "racecheck__v4_legacy.limit").write_text("20\n")
    (tmp_path / "racecheck__v4_legacy__default.log").write_text(
        race.replace("3 hazards displayed (0 errors, 500 warnings)", "1 hazard displayed (0 errors, 1 warning)"))
    mem = "".join(f"========= Invalid __global__ read of size 4 bytes\n=========     at seed_reduce_v4+0x10\n"
                  f"=========     by thread ({t},0,0) in block (3,0,0)\n" for t in range(104, 128))
    (tmp_path / "memcheck__seed.log").write_text(mem + "========= ERROR SUMMARY: 26 errors\n")
    (tmp_path / "memcheck__seed.limit").write_text("1000\n")
    runs = C.summarize_sanitizer_logs(tmp_path)
    text = C.format_racecheck_reports(runs, "v4_legacy")
    lines = text.splitlines()
    assert "--print-limit 20" in lines[0]
    assert lines[3].split() == ["all", "3", "3", "0", "500"] and lines[4].split() == ["default", "3", "1", "0", "1"]
    seed = next(r for r in runs if r["kernel"] == "seed")
    assert seed["errors"] == 26 and seed["printed_by_headline"] == {"Invalid __global__ read of size 4 bytes": 24}
    assert seed["print_limit"] == 1000
    assert C.format_thread_ranges(seed) == "block 3: threads 104..127 (24 threads)"
    assert "default" not in C.format_sanitizer(runs)  # the table shows each kernel and tool once
    assert "no racecheck run of v9" in C.format_racecheck_reports(runs, "v9")


def test_beyond_counters_keep_the_warm_launch() -> None:
    def row(i: int, kernel: str, grid: int, t: float) -> str:
        return "\n".join(f'"{i}","1","python3","127.0.0.1","{kernel}","0","(1024, 1, 1)","({grid}, 1, 1)","0","9.0",'
                          f'"SM Frequency","{m}","unit","{v}"'
                          for m, v in (("gpu__time_duration.sum", t), ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 2),
                                       ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 32)))
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Block Size","Grid Size","Device",'
            '"CC","Section Name","Metric Name","Metric Unit","Metric Value"')
    text = "\n".join([head, row(0, "void reduce_v9<1024>(...)", 64, 9000), row(1, "void reduce_v9<1024>(...)", 64, 3000),
                      row(2, "void cub::DeviceReduceKernel<...>(...)", 256, 2900)])
    beyond = C.summarize_beyond(C.parse_ncu_csv(text))
    assert [(e["kernel"], e["metrics"]["gpu__time_duration.sum"]) for e in beyond] == [("v9", 3000.0),
                                                                                          ("cub first pass", 2900.0)]
    assert beyond[0]["sectors_per_request"] == 16.0
    assert "v9" in C.format_beyond(beyond).splitlines()[2]
    assert "L2 hit" in C.format_beyond(beyond) and "L2 hit" not in C.format_beyond(beyond, l2_hit=False)
    assert len(C.format_beyond(beyond, l2_hit=False).splitlines()[2].split()) == 8
