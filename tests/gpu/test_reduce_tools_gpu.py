"""The harness and the sanitizer/ncu drivers run on the GPU (small sizes, few repetitions), so the
recording script's steps cannot fail for a reason a quick test would have caught."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import bench

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
FAST = {"reps": 2, "replays": 2, "host_repeats": 3, "progress": False}


def test_ladder_runs_checks_and_compares() -> None:
    res = bench.run_ladder(sizes=(2**16,), versions=("v0", "v4", "onepass", "v9"), cold_sizes=(2**16,), **FAST)
    names = {(r["name"], r.get("block")) for r in res["rows"]}
    assert {("copy", None), ("cupy.sum", None), (bench.EMPTY, None), ("seed_reduce_v4", 128),
            ("seed_reduce_v4", 256), ("v0", 256), ("v4", 256), ("v4", 128), ("onepass", 256)} <= names
    assert bench.version_row(res, 2**16, "v9")["default_block"]
    assert len(res["seed_fresh_first_launch_us"][str(2**16)]) == 3
    assert res["failures"] == []
    assert res["acceptance"]["every version correct"]["pass"]
    for r in res["rows"]:
        if r["name"] in ("v0", "v4", "onepass", "v9"):
            assert r["total_us"] > 0 and r["first_pass_us"] > 0 and r["gbps"] > 0 and r["vs_cupy_sum"] > 0
            assert r["second_pass_us"] == 0.0 if r["launches"] == 1 else r["second_pass_us"] > 0
            assert len(r["total_us_reps"]) == 2 and r["host_us"] > r["total_us"] > 0
            assert r["deterministic"]
    json.dumps(res)


def test_sweep_and_tune_run() -> None:
    sweep = bench.run_sweep(sizes=(2**12, 2**20), versions=("v8", "v9"), **FAST)
    assert sweep["failures"] == [] and bench.best_kernel(sweep, 2**20) is not None
    # the relative goals on any GPU; the H200's absolute ones only on an H200
    assert "best >= 1.50x cupy.sum at 2^20" in sweep["acceptance"]
    assert any(k.startswith("best <= 2.6 us") for k in sweep["acceptance"]) == bench.ceiling_of(sweep).gpu.startswith("NVIDIA H200")
    tune = bench.run_tune(sizes=(2**16,), blocks=(256,), unrolls=(2,), **FAST)
    assert tune["failures"] == [] and {r.get("unroll") for r in tune["rows"]} >= {2}


def test_the_ceiling_is_read_from_this_gpu(capsys) -> None:
    """This GPU's memory clock and bus width give a theoretical peak (named, beside the datasheet's
    where the project knows the GPU); the figures go to the output for the closing note."""
    res = bench.run_ladder(sizes=(2**16,), versions=("v9",), cold_sizes=(), **FAST)
    top = bench.ceiling_of(res)
    assert top.gpu == res["gpu"] and top.memory_clock_khz > 0 and top.bus_width_bits > 0
    assert top.tbps is not None and 0.05 < top.theoretical_tbps < 20
    if top.datasheet_tbps is not None:   # the device's figure and the datasheet's agree within 10 %
        assert abs(top.theoretical_tbps / top.datasheet_tbps - 1) < 0.1
    with capsys.disabled():
        print(f"\nCEILING {top.describe()}")
    text = bench.format_goals(res)
    assert top.describe() in text


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180)


def test_sanitize_target() -> None:
    for args in (("v8", "--n", "1001", "--offsets", "0,1,2,3"), ("v9", "--n", "100003", "--offsets", "0,3"),
                 ("v0", "--n", "1001"),
                 ("seed", "--n", "1024")):
        done = _run("helpers.recording.reduce_target", "sanitize", *args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert " ok" in done.stdout


def test_profile_target() -> None:
    done = _run("helpers.recording.reduce_target", "profile", "v0,v1,v2,v3,v4", "--n", "65536")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("profiled reduce_v") == 5
    done = _run("helpers.recording.reduce_target", "profile-v9", "--sizes", "16")
    assert done.returncode == 0 and "profiled reduce_v9" in done.stdout, done.stdout + done.stderr


def test_device_timer_measures_gpu_work_only() -> None:
    """An empty kernel in a replayed graph costs about a microsecond of device time, far below its
    host-inclusive time (the Python launch path), and a longer kernel costs more."""
    empty = bench.empty_launcher()
    dev = bench.DeviceTimer(empty, calls=50).per_call_us(3)
    host = bench.host_us(empty, repeats=10)
    assert 0 < min(dev) and max(dev) < 5 and min(host) > max(dev)
    x = cupy.ones(2**26, cupy.float32)
    assert min(bench.DeviceTimer(lambda: cupy.sum(x), calls=5).per_call_us(3)) > 10 * max(dev)


def test_time_interleaved_keeps_every_repetition() -> None:
    empty = bench.empty_launcher()
    res = bench.time_interleaved({"a": empty, "b": empty}, calls=10, reps=3, replays=2, host_repeats=3,
                                 host_keys={"a"})
    assert len(res["a"]["device_us_reps"]) == 3 and "host_us" in res["a"] and "host_us" not in res["b"]


def test_bench_command_line() -> None:
    done = _run("helpers.bench", "--sizes", "16", "--versions", "v2,onepass", "--reps", "2", "--replays", "2",
                "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "onepass" in done.stdout and "every version correct" in done.stdout
