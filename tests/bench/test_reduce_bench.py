"""The benchmark harness without a GPU: recorded results shown (labelled) or a clear message, the
acceptance checks, the tables. The results here are synthetic, built only to exercise the code."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import data
from helpers.engine import backend
from helpers import bench
from helpers.bench import cli, runs
from helpers.topics import reduce as R


# An H100 SXM as CUDA names it, with the memory clock and bus width such a device reports.
FAKE_GPU = "NVIDIA H100 80GB HBM3"
FAKE_CEILING = {"gpu": FAKE_GPU, "memory_clock_khz": 2_619_000, "bus_width_bits": 5120}


def _row(name: str, n: int, total_us: float, block: int | None = 256, **extra: Any) -> dict[str, Any]:
    return {"name": name, "n": n, "block": block, "launches": 2, "first_pass_us": total_us * 0.9,
            "second_pass_us": total_us * 0.1, "total_us": total_us, "total_us_reps": [total_us * f for f in (0.99, 1, 1.01)],
            "host_us": total_us + 10.0, "host_us_reps": [total_us + 10.0] * 3, "correct": True,
            "partials_written": True, "abs_err": 0.0, "err_bound": 1.0, "deterministic": True, "determinism_runs": 5,
            **extra}


def fake_ladder(sizes=(2**20, 2**25, 2**28), slow_v2: bool = False, wrong: str = "") -> dict[str, Any]:
    """A ladder run in the recorded format: every version, v4 also at 128, v9 at its own block
    (1024), the seed at 128 and 256, copy, cupy.sum and the empty kernel; times fall with the
    version index, so v9 is the fastest."""
    rows: list[dict[str, Any]] = []
    for n in sizes:
        scale = n / 2**20
        copy_row = {"name": bench.COPY, "n": n, "total_us": 3.0 * scale, "gbps": 8 * n / (3.0 * scale) / 1e3,
                    "host_us": 3.0 * scale + 10}
        sum_row = {"name": bench.CUPY_SUM, "n": n, "total_us": 2.0 * scale, "gbps": 4 * n / (2.0 * scale) / 1e3,
                   "total_us_reps": [2.0 * scale] * 3, "host_us": 2.0 * scale + 15}
        empty_row = {"name": bench.EMPTY, "n": n, "total_us": 0.7, "host_us": 10.0, "host_us_reps": [10.0] * 3}
        rows += [copy_row, sum_row, empty_row]
        for i, v in enumerate(R.VERSIONS):
            t = (12.0 - i) * scale * 0.9 * (2.0 if slow_v2 and v == "v2" else 1.0)
            r = _row(v, n, t, block=1024 if v == "v9" else 256)
            if v == "v9":
                r["default_block"] = True
            if v == wrong:
                r.update(correct=False, abs_err=5.0)
            rows.append(runs._finish_row(r, copy_row, sum_row))
        rows.append(runs._finish_row(_row("v4", n, 7.0 * scale, block=128), copy_row, sum_row))
        for b, seed_t in ((128, 7.0 * scale), (256, 7.5 * scale)):
            rows.append({"name": bench.SEED, "n": n, "block": b, "first_pass_us": seed_t,
                         "first_pass_gbps": 4 * n / seed_t / 1e3, "first_pass_only": True, "correct": True,
                         "pct_copy": 50.0, "vs_cupy_sum": 0.5})
    out = {"kind": "ladder", "gpu": FAKE_GPU, "ceiling": FAKE_CEILING, "block": 256, "sizes": list(sizes), "versions": list(R.VERSIONS),
           "rows": rows, "timing": bench.TIMING_VERSION, "reps": 3, "replays": 5, "host_repeats": 20, "l2_bytes": 2**23}
    out["failures"] = bench.failures(out)
    out["acceptance"] = bench.acceptance(out)
    return out


@pytest.fixture
def no_gpu(monkeypatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(backend, "detect", lambda: backend.Detection(False, "no CUDA device (test)"))
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    return tmp_path


def test_no_gpu_and_nothing_recorded(no_gpu: Path, capsys) -> None:
    assert cli.main([]) == 1
    out = capsys.readouterr().out
    assert "No usable CUDA GPU here (no CUDA device (test))" in out
    assert "data/bench_ladder.json" in out and "scripts/gpu/reduce.sh" in out
    assert bench.load_recorded("ladder") is None


def test_no_gpu_shows_the_recorded_run(no_gpu: Path, capsys) -> None:
    data.write("bench_ladder", fake_ladder(), {"gpu": "NVIDIA H200", "driver": "1.2", "cupy_version": "14.2.0"})
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "showing the recorded results instead" in out
    assert "recorded on NVIDIA H200 (driver 1.2, CuPy 14.2.0)" in out
    assert "versions v0, v1, v2, v3, v4, v5, v6, v7, v8, onepass, v9" in out
    assert "PASS  ladder v0->v4 monotone at 2^25" in out
    loaded = bench.load_recorded("ladder")
    assert loaded["source"].startswith("recorded on NVIDIA H200") and loaded["stamp"]["date"]


def test_no_gpu_refuses_to_record(no_gpu: Path, capsys) -> None:
    assert cli.main(["--record"]) == 2
    assert "--record needs a CUDA GPU" in capsys.readouterr().err


def test_no_gpu_sweep_message(no_gpu: Path, capsys) -> None:
    assert cli.main(["--sweep"]) == 1
    assert "no recorded sweep run in data/bench_sweep.json" in capsys.readouterr().out


def test_runs_need_a_gpu(no_gpu: Path) -> None:
    with pytest.raises(RuntimeError, match="benchmarks need a CUDA GPU"):
        bench.run_ladder(sizes=(2**16,))


def test_acceptance_passes_and_fails() -> None:
    acc = bench.acceptance(fake_ladder())
    ladder = {k: a for k, a in acc.items() if not k.startswith("best ")}
    assert all(a["pass"] for a in ladder.values()), ladder
    assert "v4<128> >= seed kernel<128> at 2^28" in acc and "v4<256> >= seed kernel<256> at 2^28" in acc
    bad = bench.acceptance(fake_ladder(slow_v2=True, wrong="v6"))
    assert not bad["ladder v0->v4 monotone at 2^25"]["pass"]
    assert "v1->v2 x0." in bad["ladder v0->v4 monotone at 2^25"]["detail"]
    assert not bad["every version correct"]["pass"]
    assert "v6<256> n=1048576: sum off" in bad["every version correct"]["detail"]


def test_goals_use_the_median_and_show_the_spread() -> None:
    res = fake_ladder(sizes=(2**20, 2**24, 2**28, 2**30))
    res["kind"] = "sweep"
    g = bench.goals(res)
    assert set(g) == {"best deterministic at 2^20",
                      "best host-inclusive at 2^20 within 1.2x of the empty kernel's",
                      "best >= 1.50x cupy.sum at 2^20", "best >= 1.04x cupy.sum at 2^24",
                      "best >= 1.00x cupy.sum at 2^28", "best >= 1.00x cupy.sum at 2^30",
                      "best >= 93.8 % of the memory ceiling at 2^28", "best >= 94.8 % of the memory ceiling at 2^30",
                      "best within 3 % of cupy.sum or faster at every size"}
    two = g["best >= 1.50x cupy.sum at 2^20"]  # v9 1.8 µs against cupy.sum 2.0 µs: x1.11
    assert not two["pass"] and "v9<1024> 1.80 µs (1.78–1.82 over 3 repetitions)" in two["detail"]
    assert two["detail"].endswith("x1.111")
    host = g["best host-inclusive at 2^20 within 1.2x of the empty kernel's"]  # 11.8 µs against 10.0
    assert host["pass"] and host["detail"].endswith("x1.18")
    assert g["best deterministic at 2^20"]["pass"]
    # the fake run's GPU is an H100 SXM (fake_ladder): its datasheet is the ceiling, named
    assert "% of the 3.35 TB/s of the NVIDIA H100 SXM datasheet" in g["best >= 93.8 % of the memory ceiling at 2^28"]["detail"]


def test_best_kernel_and_rows() -> None:
    res = fake_ladder()
    assert bench.best_kernel(res, 2**28)["name"] == "v9"
    assert len(bench.rows_for(res, 2**25, "v4")) == 2
    assert bench.rows_for(res, 2**25, "v4", 128)[0]["block"] == 128
    assert bench.version_row(res, 2**25, "v9")["block"] == 1024
    assert bench.version_row(res, 2**25, "v4")["block"] == 256
    assert bench.spread(bench.version_row(res, 2**25, "v4")) is not None


def test_tables_and_labels() -> None:
    res = fake_ladder()
    table = bench.format_table(res, sizes=[2**25])
    assert "2^25" in table and "2^28" not in table.split("\n", 2)[2]
    assert "seed_reduce_v4 (1st)" in table
    assert bench.describe(res).startswith("ladder: live on NVIDIA H100 80GB HBM3")
    assert bench.size_label(2**30) == "2^30" and bench.size_label(1000) == "1000"
    assert cli._parse_sizes("20,25,1000") == [2**20, 2**25, 1000]
    with pytest.raises(ValueError, match="kind must be one of ladder, sweep, tune"):
        bench.record_name("nope")
    json.dumps(res)  # JSON-ready


def test_notebook_views_of_a_run() -> None:
    res = fake_ladder(slow_v2=True)
    steps = bench.format_steps(res)
    assert "v1->v2 x0.55 SLOWER" in steps and "v2->v3 x2.22 faster" in steps
    assert [round(k, 2) for _, _, k in bench.step_ratios(res, 2**25)] == [1.09, 0.55, 2.22, 1.12]
    assert bench.step_verdict(1.02) == bench.step_verdict(0.98) == "same within drift"
    vs = bench.format_versus_seed(res, 2**25)
    assert "block  128: v4" in vs and "block  256: v4" in vs and "a block-size gain, not a fix" in vs
    assert "first launch in a fresh process): not in this recording" in vs
    res["seed_fresh_first_launch_us"] = {str(2**25): [4.9 * 7.0 * 32] * 3}
    assert "= x4.9 the warm median" in bench.format_versus_seed(res, 2**25)
    assert "were not both run" in bench.format_versus_seed(res, 2**21)
    goals = bench.format_goals(res).splitlines()
    assert len(goals) == 2 + 5 and all(g.startswith(("PASS", "FAIL")) for g in goals[2:])
    assert goals[1].startswith("memory ceiling of NVIDIA H100 80GB HBM3: the 3.35 TB/s of the NVIDIA H100 SXM datasheet")
    assert len(bench.format_accuracy(res, 2**25).splitlines()) == 4  # the rows carry no sums
    for r in res["rows"]:
        r["value"] = 1000.0
    acc = bench.format_accuracy(res, 2**25)
    assert acc.count("yes") == len(R.VERSIONS) and "1.00e+00" not in acc
    sweep = bench.format_sweep(res)
    assert len(sweep.splitlines()) == 5 + 3


def test_timing_helpers_label_device_and_host_time() -> None:
    """Every table and line that shows a time says which clock it is (issue: device time beside
    host-inclusive time, each labelled); recordings made the old way say that they include host
    launch overhead."""
    res = fake_ladder()
    table = bench.format_table(res, sizes=[2**20])
    assert "device us" in table and "host us" in table
    assert bench.DEVICE_METHOD in table and bench.HOST_METHOD in table
    assert "device time (CUDA graph replay), median of 3 interleaved repetitions" in bench.describe(res)
    sweep = bench.format_sweep(res)
    assert "device us" in sweep and "host us" in sweep and sweep.count("device:") == 1 and "host:" in sweep
    timing = bench.format_timing(res)
    assert timing.startswith("ladder: device time: median of 3 interleaved") and "host-inclusive time: median" in timing
    assert "device µs" in bench.format_steps(res) and "device time" in bench.format_versus_seed(res, 2**25)
    old = {k: v for k, v in res.items() if k != "timing"}
    assert "includes host launch overhead" in bench.describe(old) and "includes host launch overhead" in \
        bench.format_timing(old)


def test_run_or_recorded_without_a_gpu(no_gpu: Path) -> None:
    res, note = bench.run_or_recorded("ladder")
    assert res is None and "no ladder run is recorded" in note
    bench.record.__globals__  # noqa: B018 (the module is importable without cupy)
    (no_gpu / "bench_ladder.json").write_text(json.dumps({"stamp": {"gpu": "Fake GPU", "date": "2026-01-01"},
                                                          **fake_ladder()}))
    res, note = bench.run_or_recorded("ladder")
    assert res is not None and "recorded on Fake GPU" in note and "no GPU in use here" in note


def test_format_tune_grid() -> None:
    res = fake_ladder(sizes=(2**20,))
    for r in res["rows"]:
        if r["name"] in ("v8", "onepass"):
            r["unroll"] = 4
    extra = dict(bench.rows_for(res, 2**20, "v8")[0], unroll=8, total_us=0.5)
    res["rows"].append(runs._finish_row(extra, bench.rows_for(res, 2**20, bench.COPY)[0],
                                         bench.rows_for(res, 2**20, bench.CUPY_SUM)[0]))
    lines = bench.format_tune(res, 2**20).splitlines()
    assert "unroll 4" in lines[1] and "unroll 8" in lines[1]
    v8 = next(line for line in lines if line.startswith("v8<256>"))
    assert v8.rstrip().endswith("*") and lines[-1].startswith("onepass<256>") and lines[-1].split()[-1] == "-"
    assert "not in this tune run" in bench.format_tune(res, 2**25)


def test_measured_numbers_for_prose() -> None:
    res = fake_ladder()
    assert bench.speedup(res, "v4", "v5", 2**25) == pytest.approx(8 / 7)
    assert bench.time_us(res, bench.SEED, 2**25) == pytest.approx(7.0 * 32)  # first pass only, block 128
    assert bench.time_us(res, "v9", 2**25) == pytest.approx(1.8 * 32)       # v9 at its own block
    assert bench.format_effect(res, "v4", "v5") == \
        "v4 → v5: ×1.14 at 2^25, ×1.14 at 2^28 (device time, end to end; live on NVIDIA H100 80GB HBM3)"
    res["source"] = "recorded on Fake GPU"
    assert bench.format_effect(res, "v0", "v1", (2**20,)).endswith(
        "×1.09 at 2^20 (device time, end to end; recorded on Fake GPU)")
    assert bench.format_versus(res, "onepass", sizes=(2**28,)) == \
        "onepass against cupy.sum: ×0.74 at 2^28 (> 1: onepass faster; device time; recorded on Fake GPU)"
    assert bench.format_bandwidth(res, 2**20, ("onepass", bench.COPY)) == \
        (f"2^20: onepass {4 * 2**20 / 2.7 / 1e6:.2f} TB/s, copy {8 * 2**20 / 3.0 / 1e6:.2f} TB/s (read + write) "
         "(bytes / device time; recorded on Fake GPU)")
    with pytest.raises(ValueError, match=r"name must be one of the rows at n=2\^25 .*got 'v10'"):
        bench.speedup(res, "v4", "v10", 2**25)
    with pytest.raises(ValueError, match=r"n=2\^21 \(none\)"):
        bench.format_effect(res, "v4", "v5", (2**21,))
    with pytest.raises(ValueError, match="sizes must name at least one size"):
        bench.format_effect(res, "v4", "v5", ())


def test_span_crossover_and_timing() -> None:
    res = fake_ladder(sizes=(2**20, 2**21, 2**22))
    span = bench.format_span(res, [2**21, 2**20]).splitlines()
    assert span[0].startswith("2^20 .. 2^21, device time: best (v9) 1.8–3.6 µs")
    assert "time ×2.00 per doubling of n" in span[0]
    assert span[1].strip().startswith("cupy.sum 2.0–4.0 µs") and span[1].endswith("best ×1.11 cupy.sum")
    with pytest.raises(ValueError, match=r"sizes must all be sizes of the run \(2\^20, 2\^21, 2\^22\); got 2\^25"):
        bench.format_span(res, [2**25])
    assert bench.crossover(res, bench.CUPY_SUM, bench.COPY) == 2**20      # faster everywhere
    bench.rows_for(res, 2**21, bench.COPY)[0]["total_us"] = 1.0            # the copy wins at 2^21
    assert bench.crossover(res, bench.CUPY_SUM, bench.COPY) == 2**22
    line = bench.format_crossover(res, bench.CUPY_SUM, bench.COPY)
    assert line.startswith("cupy.sum takes less time than copy from 2^22 on (device time; 2^22: 8.0 µs against "
                           "12.0 µs; 2^21: 4.0 µs against 1.0 µs; live on NVIDIA H100 80GB HBM3")
    assert bench.crossover(res, "v0", bench.CUPY_SUM) is None
    assert "never takes less time" in bench.format_crossover(res, "v0", bench.CUPY_SUM)


def test_a_graph_time_longer_than_the_call_is_left_out() -> None:
    assert not bench.graph_time_usable({"total_us": 791.2, "host_us": 524.1})
    assert bench.graph_time_usable({"total_us": 127.4, "host_us": 140.3})
    assert bench.graph_time_usable({"total_us": 3.0}) and bench.graph_time_usable({})
    run = {"sizes": [2**26, 2**27], "source": "test", "timing": "device", "rows": [
        {"name": bench.COPY, "n": 2**26, "total_us": 127.4, "host_us": 140.3, "gbps": 4213.0},
        {"name": bench.COPY, "n": 2**27, "total_us": 397.2, "host_us": 269.2, "gbps": 2703.0},
        {"name": bench.CUPY_SUM, "n": 2**26, "total_us": 62.3, "host_us": 80.0, "gbps": 4310.0},
        {"name": bench.CUPY_SUM, "n": 2**27, "total_us": 120.0, "host_us": 140.0, "gbps": 4470.0},
        {"name": "v9", "n": 2**26, "total_us": 61.2, "host_us": 75.0, "gbps": 4390.0, "vs_cupy_sum": 1.02,
         "default_block": True, "block": 1024},
        {"name": "v9", "n": 2**27, "total_us": 119.6, "host_us": 132.0, "gbps": 4490.0, "vs_cupy_sum": 1.00,
         "default_block": True, "block": 1024}]}
    text = bench.format_span(run, [2**26, 2**27])
    assert "copy 4,213 GB/s (1 size left out: graph time above host-inclusive)" in text


def test_format_table_shows_only_the_named_rows_and_versions():
    """format_table(names=..., block=...) prints only those rows, names only those versions in its
    first line, and drops the unr column when no shown row has an unroll factor."""
    ladder = bench.load_recorded("ladder")
    text = bench.format_table(ladder, sizes=(2**20,), names=("v0", "v4", bench.CUPY_SUM), block=256)
    rows = [line.split()[1] for line in text.splitlines() if line.startswith("  2^20")]
    assert rows == ["cupy.sum", "v0", "v4"]
    assert "versions v0, v4;" in text.splitlines()[0]
    assert " unr " not in text
    assert " unr " in bench.format_table(ladder, sizes=(2**20,))
