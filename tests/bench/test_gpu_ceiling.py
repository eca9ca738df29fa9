"""Every learner's GPU, without one: the memory ceiling read from a fake device, the relative goals,
``python -m helpers.bench`` on a fake H100 (what it prints), a learner's own recording kept out of
data/ and drawn beside the H200's, and the clear message for a feature an older GPU lacks."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import bench, data
from helpers.bench import ceiling as C
from helpers.bench import cli
from helpers.engine import backend, warp
from helpers.topics import reduce as R
from helpers.topics import warp_reduce as wr
from helpers.viz import ladder as F
from tests.bench.test_reduce_bench import FAKE_GPU, fake_ladder

H100 = backend.Detection(True, "CUDA device found (test)", gpu_name=FAKE_GPU, compute_capability="9.0",
                         cupy_version="14.2.0", driver_version="13.0", cuda_runtime="13.0")
T4 = backend.Detection(True, "CUDA device found (test)", gpu_name="Tesla T4", compute_capability="7.5")


class FakeRuntime:
    """``cupy.cuda.runtime`` of one device, as far as :func:`helpers.bench.ceiling.read_device` asks."""

    def __init__(self, clock_khz: int, bus_bits: int) -> None:
        self.attrs = {C.ATTR_MEMORY_CLOCK_RATE: clock_khz, C.ATTR_GLOBAL_MEMORY_BUS_WIDTH: bus_bits}

    def deviceGetAttribute(self, attrib: int, device: int) -> int:  # noqa: N802 (CuPy's name)
        assert device == 0
        return self.attrs[attrib]


def test_the_ceiling_comes_from_the_device_beside_the_datasheet() -> None:
    top = C.read_device(FakeRuntime(2_619_000, 5120), 0, FAKE_GPU)
    assert top.theoretical_tbps == pytest.approx(3.352, abs=1e-3)   # 2.619 GHz x 5120 bits x 2 / 8
    assert top.tbps == 3.35 and top.datasheet_product == "NVIDIA H100 SXM"
    line = top.describe()
    assert line.startswith("memory ceiling of NVIDIA H100 80GB HBM3: the 3.35 TB/s of the NVIDIA H100 SXM datasheet "
                           "(https://www.nvidia.com/en-us/data-center/h100/)")
    assert "theoretical peak 3.352 TB/s = memory clock 2619 MHz × 5120-bit bus × 2 / 8 (from the device)" in line
    assert top.percent(3105.0) == "92.7 % of the 3.35 TB/s of the NVIDIA H100 SXM datasheet"


def test_a_gpu_the_project_does_not_know_uses_its_theoretical_peak() -> None:
    top = C.read_device(FakeRuntime(10_501_000, 384), 0, "NVIDIA GeForce RTX 4090")
    assert top.datasheet_tbps is None and top.tbps == pytest.approx(1.008, abs=1e-3)
    assert top.label == "this GPU's theoretical peak 1.008 TB/s"
    assert "no datasheet figure" in top.describe() and "10501 MHz × 384-bit bus × 2 / 8" in top.describe()
    assert top.percent(907.2) == "90.0 % of this GPU's theoretical peak 1.008 TB/s"
    unknown = C.make("Some GPU")
    assert unknown.tbps is None and "unknown" in unknown.describe() and unknown.percent(1.0) == "no known ceiling for this GPU"


def test_datasheets_match_whole_names_only() -> None:
    assert C.datasheet("NVIDIA H200")[0] == 4.8 and C.datasheet("NVIDIA H200 NVL")[1] == "NVIDIA H200 NVL"
    assert C.datasheet("NVIDIA H100 NVL")[0] == 3.9
    assert C.datasheet("NVIDIA H100 PCIe") is None and C.datasheet("NVIDIA H2000") is None


def test_goals_are_relative_on_another_gpu_and_absolute_only_on_the_h200() -> None:
    res = fake_ladder(sizes=(2**20, 2**28))
    goals = bench.goals(res)
    assert not any("H200" in k for k in goals)
    frac = goals["best >= 93.8 % of the memory ceiling at 2^28"]
    # the fake v9 at 2^28: 2.33 TB/s, below 93.8 % of 3.35 TB/s
    assert not frac["pass"] and "2.330 TB/s" in frac["detail"]
    assert "69.6 % of the 3.35 TB/s of the NVIDIA H100 SXM datasheet" in frac["detail"]
    assert "best >= 1.00x cupy.sum at 2^28" in goals
    h200 = dict(res, gpu="NVIDIA H200", ceiling=None)
    g = bench.goals(h200)
    assert "best <= 2.6 us at 2^20 (the H200's goal)" in g and "best >= 4.50 TB/s at 2^28 (the H200's goal)" in g
    assert "% of the 4.8 TB/s of the NVIDIA H200 SXM datasheet" in g["best >= 93.8 % of the memory ceiling at 2^28"]["detail"]
    assert bench.GOAL_CEILING_FRACTION[2**28] == pytest.approx(4.50 / 4.8)


def test_bench_on_a_fake_h100_names_its_ceiling_and_the_relative_verdicts(monkeypatch, capsys) -> None:
    monkeypatch.setattr(backend, "detect", lambda: H100)
    monkeypatch.setattr(cli, "run_ladder", lambda **kw: fake_ladder(sizes=(2**20, 2**25, 2**28)))
    assert cli.main(["--quiet"]) == 0
    out = capsys.readouterr().out
    print(out)   # what bench prints on this GPU (pytest -s shows it)
    assert ("memory ceiling of NVIDIA H100 80GB HBM3: the 3.35 TB/s of the NVIDIA H100 SXM datasheet "
            "(https://www.nvidia.com/en-us/data-center/h100/); theoretical peak 3.352 TB/s") in out
    assert "FAIL  best >= 93.8 % of the memory ceiling at 2^28: v9<1024>" in out
    assert "PASS  best >= 1.00x cupy.sum at 2^28" in out
    assert "H200" not in out and "4.50 TB/s" not in out and "2.6 us" not in out


def test_a_learners_recording_stays_out_of_data_and_is_drawn_beside(monkeypatch, tmp_path: Path, capsys) -> None:
    shipped, local = tmp_path / "data", tmp_path / "local"
    shipped.mkdir()
    monkeypatch.setattr(data, "DATA_DIR", shipped)
    monkeypatch.setenv(data.LOCAL_RECORDINGS, str(local))
    monkeypatch.setenv(data.RECORD_INTO, "")   # unset, as on a learner's machine; restored after the test
    monkeypatch.setattr(backend, "detect", lambda: H100)
    monkeypatch.setattr(backend, "stamp", lambda: {"gpu": FAKE_GPU, "driver": "580.1", "cupy_version": "14.2.0"})
    monkeypatch.setattr(cli, "run_sweep", lambda **kw: dict(fake_ladder(sizes=(2**20, 2**25, 2**28)), kind="sweep"))
    assert bench.load_local("sweep") is None
    assert cli.main(["--sweep", "--record", "--quiet"]) == 0
    assert f"recorded: {local / 'bench_sweep.json'}" in capsys.readouterr().err
    assert list(shipped.iterdir()) == []
    mine = bench.load_local("sweep")
    assert mine["stamp"]["gpu"] == FAKE_GPU and mine["source"].endswith("(your GPU)")
    assert json.loads((local / "bench_sweep.json").read_text())["ceiling"]["bus_width_bits"] == 5120

    h200 = dict(fake_ladder(sizes=(2**20, 2**25, 2**28)), kind="sweep", gpu="NVIDIA H200", ceiling=None)
    alone, beside = F.sweep_chart(h200), F.sweep_chart(h200, yours=mine)
    bw_alone, bw_beside = alone.axes[2], beside.axes[2]
    assert any("NVIDIA H200 SXM datasheet" in t.get_text() for t in bw_alone.texts)
    assert not any("your GPU" in l.get_label() for l in bw_alone.lines)
    labels = [l.get_label() for l in bw_beside.lines]
    assert f"your GPU ({FAKE_GPU}): best kernel" in labels and f"your GPU ({FAKE_GPU}): cupy.sum" in labels
    assert "your GPU's ceiling: the 3.35 TB/s of the NVIDIA H100 SXM datasheet" in labels
    assert len(bw_beside.lines) == len(bw_alone.lines) + 3
    bars_alone = F.ladder_chart(h200, n=2**25).axes[0].patches
    bars_beside = F.ladder_chart(h200, n=2**25, yours=mine).axes[0].patches
    assert len(bars_beside) == len(bars_alone) + len(R.VERSIONS)   # a narrow bar beside each version's


def test_record_refuses_without_a_gpu_and_sizes_the_sweep_to_memory(monkeypatch, capsys) -> None:
    from helpers.recording import record

    monkeypatch.setattr(backend, "detect", lambda: backend.Detection(False, "no CUDA device (test)"))
    assert record.main([]) == 2 and "needs a CUDA GPU" in capsys.readouterr().err
    assert max(record.sweep_sizes(4 * 2**30)) == 2**28 and max(record.sweep_sizes(80 * 2**30)) == 2**30


def test_a_feature_newer_than_the_gpu_says_so_before_launching(monkeypatch) -> None:
    monkeypatch.setattr(backend, "detect", lambda: T4)
    assert backend.compute_capability() == (7, 5)
    assert backend.compute_capability(backend.Detection(True, "", compute_capability="10.0")) == (10, 0)
    with pytest.raises(RuntimeError, match=r"reduce_add \(__reduce_add_sync\) needs compute capability 8\.0 or "
                                           r"newer; this GPU \(Tesla T4\) has 7\.5\. The emulator runs it"):
        warp.reduce_add(np.arange(32, dtype=np.int32), backend="cupy")
    with pytest.raises(RuntimeError, match=r"method='intrinsic' \(__reduce_\*_sync\) needs compute capability 8\.0"):
        wr.library_reduce(np.arange(32, dtype=np.int32), method="intrinsic", backend="cupy")
    assert warp.reduce_add(np.arange(32, dtype=np.int32), backend="emulator").values[0] == 496


def test_recording_on_an_older_gpu_leaves_out_what_it_cannot_run() -> None:
    from helpers.recording import record

    every, none_left = record.runnable_cases((9, 0))
    older, left = record.runnable_cases((7, 5))
    assert none_left == [] and left and all(op.startswith("reduce_") for op in left)
    assert len(older) < len(every) and not any(c["op"].startswith("reduce_") for c in older)


def _fake_cupy(runtime: object) -> object:
    """A ``cupy`` module of one device, as far as :func:`helpers.bench.runs._header` asks."""
    import types

    class Device:
        id = 0
        attributes = {"MultiProcessorCount": 114}

    runtime.getDeviceProperties = lambda device: {"l2CacheSize": 50 * 2**20}
    runtime.CUDARuntimeError = type("CUDARuntimeError", (RuntimeError,), {})
    return types.SimpleNamespace(cuda=types.SimpleNamespace(Device=Device, runtime=runtime))


def test_a_live_run_records_the_devices_ceiling(monkeypatch) -> None:
    import sys

    from helpers.bench import runs

    monkeypatch.setattr(backend, "detect", lambda: backend.Detection(True, "test", gpu_name="NVIDIA H100 PCIe"))
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(FakeRuntime(1_593_000, 5120)))
    head = runs._header("ladder")
    assert head["sm_count"] == 114 and head["l2_bytes"] == 50 * 2**20
    assert head["ceiling"] == {"gpu": "NVIDIA H100 PCIe", "memory_clock_khz": 1_593_000, "bus_width_bits": 5120}
    top = bench.ceiling_of(head)   # a GPU without a datasheet figure here: its theoretical peak
    assert top.datasheet_tbps is None and top.tbps == pytest.approx(2.039, abs=1e-3)

    silent = FakeRuntime(0, 0)
    cupy = _fake_cupy(silent)

    def refuse(attrib: int, device: int) -> int:
        raise cupy.cuda.runtime.CUDARuntimeError("cudaErrorInvalidValue")

    silent.deviceGetAttribute = refuse
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert bench.ceiling_of(runs._header("ladder")).describe().endswith("unknown (no datasheet figure for it, "
                                                                          "no device attributes in this run)")
