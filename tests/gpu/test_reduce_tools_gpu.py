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
FAST = {"n_repeat": 3, "n_warmup": 1, "progress": False}


def test_ladder_runs_checks_and_compares() -> None:
    res = bench.run_ladder(sizes=(2**16,), versions=("v0", "v4", "onepass"), **FAST)
    names = {(r["name"], r.get("block")) for r in res["rows"]}
    assert {("copy", None), ("cupy.sum", None), ("seed_reduce_v4", 128), ("v0", 256), ("v4", 256),
            ("v4", 128), ("onepass", 256)} <= names
    assert res["failures"] == []
    assert res["acceptance"]["every version correct"]["pass"]
    for r in res["rows"]:
        if r["name"] in ("v0", "v4", "onepass"):
            assert r["total_us"] > 0 and r["first_pass_us"] > 0 and r["gbps"] > 0 and r["vs_cupy_sum"] > 0
            assert r["second_pass_us"] == 0.0 if r["launches"] == 1 else r["second_pass_us"] > 0
    json.dumps(res)


def test_sweep_and_tune_run() -> None:
    sweep = bench.run_sweep(sizes=(2**12, 2**16), versions=("v8", "onepass"), **FAST)
    assert sweep["failures"] == [] and bench.best_kernel(sweep, 2**16) is not None
    tune = bench.run_tune(sizes=(2**16,), blocks=(256,), unrolls=(2,), **FAST)
    assert tune["failures"] == [] and {r.get("unroll") for r in tune["rows"]} >= {2}


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180)


def test_sanitize_target() -> None:
    for args in (("v8", "--n", "1001", "--offsets", "0,1,2,3"), ("v0", "--n", "1001"),
                 ("seed", "--n", "1024")):
        done = _run("helpers.reduce_target", "sanitize", *args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert " ok" in done.stdout


def test_profile_target() -> None:
    done = _run("helpers.reduce_target", "profile", "v0,v1,v2,v3,v4", "--n", "65536")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("profiled reduce_v") == 5


def test_bench_command_line() -> None:
    done = _run("helpers.bench", "--sizes", "16", "--versions", "v2,onepass", "--repeat", "3", "--warmup", "1",
                "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "onepass" in done.stdout and "every version correct" in done.stdout
