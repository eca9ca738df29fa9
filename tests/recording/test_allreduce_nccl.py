"""The NCCL recording's pipeline, without a GPU: the launcher keeps NVLink SHARP off in every process,
the workers' results combine into a valid recording, the loader and the import step, and the text the
notebook prints from a recording (which never presents a 1-GPU run as multi-GPU bandwidth)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.topics import allreduce as A
from helpers.recording import allreduce_nccl as N
from helpers import data
from helpers.viz import allreduce as F

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "scripts" / "gpu" / "allreduce.sh"
SCRIPT = ROOT / "scripts" / "gpu" / "nccl_allreduce.py"


# ---------------------------------------------------------------- NVLS stays off


def test_launcher_exports_nvls_off_before_running_anything() -> None:
    lines = [l.strip() for l in LAUNCHER.read_text().splitlines() if l.strip() and not l.strip().startswith("#")]
    first_export = next(i for i, l in enumerate(lines) if "NCCL_NVLS_ENABLE" in l)
    assert lines[first_export] == "export NCCL_NVLS_ENABLE=0"
    runs = [i for i, l in enumerate(lines) if re.search(r"\$PYTHON|python3|nvidia-smi", l) and "PYTHON=" not in l]
    assert runs and min(runs) > first_export, "NVLS is off before the first command the launcher starts"


def _print_env(cmd: list[str], **env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**base, "PYTHON": sys.executable, **env})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


@pytest.mark.parametrize("caller", ["1", None])
def test_every_process_the_launcher_starts_has_nvls_off(caller: str) -> None:
    """Whatever the caller set: the launcher, the script as started, a spawned worker and a subprocess
    given its own environment all see NCCL_NVLS_ENABLE=0."""
    lines = _print_env(["bash", str(LAUNCHER), "--print-env"], **({"NCCL_NVLS_ENABLE": caller} if caller else {}))
    assert len(lines) == 5
    assert all(l.endswith("NCCL_NVLS_ENABLE=0") for l in lines), lines
    assert lines[0].startswith("launcher") and lines[1].startswith("script, as started")


def test_the_script_turns_nvls_off_for_its_workers_even_without_the_launcher() -> None:
    lines = _print_env([sys.executable, str(SCRIPT), "--print-env"], NCCL_NVLS_ENABLE="1")
    assert lines[0] == "script, as started: NCCL_NVLS_ENABLE=1"
    assert all(l.endswith("=0") for l in lines[1:]) and len(lines) == 4


def test_launcher_needs_out() -> None:
    base = {k: v for k, v in os.environ.items() if k != "OUT"}
    out = subprocess.run(["bash", str(LAUNCHER)], cwd=ROOT, capture_output=True, text=True, timeout=60, env=base)
    assert out.returncode != 0 and "OUT" in out.stderr


# ---------------------------------------------------------------- inputs and checks


def test_expected_table_is_numpys_exact_sum() -> None:
    for world in (1, 2, 3, 8):
        i = np.arange(5 * N.PERIOD + 3)
        brute = np.sum([N.pattern(r, i) for r in range(world)], axis=0, dtype=np.float64)
        assert np.array_equal(N.expected_table(world)[i % N.PERIOD], brute.astype(np.float32))
    assert N.pattern(0, np.arange(17)).min() == -8 and N.pattern(3, np.arange(17)).max() == 8


def test_float_check_recognises_each_order() -> None:
    count, world = 4096, 4
    x = np.stack([N.float_inputs(r, count) for r in range(world)])
    ring = A.run(x, "ring").result[0]
    f = N.float_check(ring, world)
    assert f["equal_to_emulated_ring"] == count and f["within_bound"] and f["count"] == count
    assert f["equal_to_emulated_tree"] < count
    one = N.float_check(N.float_inputs(0, count), 1)
    assert one["equal_to_numpy_float32"] == count and one["max_ulps_vs_ref"] == 0


def test_timing_summary_takes_the_slowest_rank_per_repetition() -> None:
    med, ranks = N.timing_summary([[1, 5, 3], [2, 1, 4]])
    assert med == 4.0 and ranks == [3.0, 2.0]


# ---------------------------------------------------------------- results -> recording


def _rank_result(rank: int, world: int, sizes: list[int], slow: float = 1.0, bad: int = 0) -> dict:
    rows = [{"bytes": s, "count": s // 4, "iters": A.iterations_for(s), "mismatches": bad, "spot_ok": True,
             "device_us": [slow * (10 + s / 1e5)] * 3, "host_us": [slow * (15 + s / 1e5)] * 3} for s in sizes]
    f = {"digest": "same"}
    if rank == 0:
        x = np.stack([N.float_inputs(r, 256) for r in range(world)])
        f["check"] = N.float_check(A.run(x, "tree").result[0], world)
    hier = [{"count_per_gpu": n, "bytes_per_gpu": 4 * n, "first_grid": 1056,
             "times": {"hier": [20.0], "whole": [900.0], "local_reduce": [15.0], "cupy_sum": [30.0]},
             "hier_value": 0.5 * n * world, "whole_value": 0.5 * n * world, "ref": 0.5 * n, "abs_sum": 0.5 * n}
            for n in (1 << 20, 1 << 24)]
    return {"rank": rank, "pci_bus_id": f"0000:0{rank}:00.0", "NCCL_NVLS_ENABLE": "0", "sweep": rows, "float": f,
            "hierarchical": hier}


def _recording(world: int, **kw) -> dict:
    sizes = A.sweep_sizes(8, 1 << 30)
    payload = N.combine([_rank_result(r, world, sizes, slow=1 + r, **kw) for r in range(world)], world)
    payload["timing"] = {"n_warmup": 5, "n_repeat": 3}
    stamp = {"gpu": "NVIDIA H200", "driver": "580", "cupy_version": "14.2.0", "date": "2026-12-01",
             "gpu_count": world, "world_size": world, "nccl_version": "2.28.9", "topology": "GPU0 X",
             "nvlink_status": "GPU 0: NVIDIA H200\n\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s\nGPU 1: x\n\t Link 0: 1 GB/s"}
    return {"stamp": stamp, **payload}


def test_combine_and_validate() -> None:
    rec = A.validate_recording(_recording(2))
    row = next(r for r in rec["sweep"] if r["bytes"] == 1 << 30)
    assert row["device_us"] == 2 * (10 + (1 << 30) / 1e5), "the slowest rank"
    assert row["algbw_GBps"] == pytest.approx((1 << 30) / (row["device_us"] * 1e-6) / 1e9)
    assert row["busbw_GBps"] == pytest.approx(row["algbw_GBps"])   # 2 (n - 1) / n = 1 for two ranks
    assert all(r["correct"] for r in rec["sweep"])
    assert rec["float_check"]["identical_on_every_rank"] and rec["float_check"]["equal_to_emulated_tree"] == 256
    assert all(h["hier_ok"] and h["whole_ok"] for h in rec["hierarchical"])
    assert [e["NCCL_NVLS_ENABLE"] for e in rec["rank_env"]] == ["0", "0"]
    wrong = N.combine([_rank_result(r, 2, [8, 16], bad=r) for r in range(2)], 2)
    assert [r["correct"] for r in wrong["sweep"]] == [False, False] and wrong["sweep"][0]["mismatches"] == 1


def test_validate_names_what_is_missing() -> None:
    rec = _recording(2)
    for broken, needle in ((dict(rec, sweep=None), "sweep"), ({**rec, "stamp": {"gpu": "x"}}, "stamp lacks"),
                           (dict(rec, sweep=[{"bytes": 8}]), "every sweep row"), ([], "JSON object"),
                           (dict(rec, world_size=4), "world_size")):
        with pytest.raises(ValueError, match=needle):
            A.validate_recording(broken)


def test_multi_gpu_text() -> None:
    rec = _recording(4)
    assert A.is_multi_gpu(rec)
    assert A.recording_status(rec).startswith("Multi-GPU recording: 4 ranks")
    sweep = A.format_sweep(rec, [8, 1 << 30])
    assert "busbw" in sweep and "copy" not in sweep and sweep.count("ok") == 2
    assert "4 GiB" not in A.format_correctness(rec) and "every element equal" in A.format_correctness(rec)
    nv = A.format_busbw_vs_nvlink(rec)
    assert "2 links" in nv and "53.1 GB/s in all" in nv
    assert "4 ranks" in A.format_float_check(rec)
    assert "hierarchical" in A.format_hierarchical(rec) and "45.0x" in A.format_hierarchical(rec)
    lat, bw = F.regimes(rec)
    assert lat[0] == 16 and bw[-1] == 1 << 30
    assert len(F.sweep_chart(rec).axes) == 2


def test_one_gpu_is_labelled_a_copy_never_bandwidth() -> None:
    rec = _recording(1)
    assert not A.is_multi_gpu(rec) and rec["label"].startswith("smoke test")
    status = A.recording_status(rec)
    assert status.startswith("No multi-GPU recording exists yet") and "copy" in status
    sweep = A.format_sweep(rec)
    assert "busbw" not in sweep and "algbw" not in sweep and "a copy" in sweep
    assert "nothing to compare" in A.format_busbw_vs_nvlink(rec)
    assert "world size 1" in A.format_float_check(rec) and "copies" in A.format_hierarchical(rec)
    with pytest.raises(ValueError, match="multi-GPU"):
        F.sweep_chart(rec)


def test_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    assert A.load_recording() is None
    assert "No NCCL recording exists yet, neither a multi-GPU one" in A.recording_status(None)
    (tmp_path / "allreduce_nccl.json").write_text(json.dumps(_recording(2)))
    assert A.load_recording()["world_size"] == 2
    (tmp_path / "allreduce_nccl.json").write_text(json.dumps({"stamp": {}}))
    with pytest.raises(ValueError, match="lacks"):
        A.load_recording()


def test_import_copies_byte_for_byte_and_rejects_bad_files(tmp_path: Path) -> None:
    src, dest = tmp_path / "back.json", tmp_path / "data.json"
    src.write_text(json.dumps(_recording(1), indent=1) + "\n")
    out = subprocess.run([sys.executable, str(SCRIPT), "--import", str(src), "--to", str(dest)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert dest.read_bytes() == src.read_bytes()
    src.write_text("{}")
    with pytest.raises(ValueError, match="lacks"):
        N.import_recording(str(src), str(dest))


# ---------------------------------------------------------------- workers


def fake_worker(rank: int, world: int, uid_queue, results, barrier, cfg: dict) -> None:
    """Stands in for helpers.recording.allreduce_nccl.worker: the same queue and barrier protocol, no GPU."""
    if rank == cfg.get("fail"):
        results.put(("error", rank, "Traceback: boom"))
        return
    barrier.wait(timeout=30)
    results.put(("ok", rank, {"rank": rank, "nvls": os.environ.get(A.NVLS_VAR)}))


def test_run_workers_orders_results_and_reports_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(A.NVLS_VAR, "0")
    got = N.run_workers(2, {}, 60, target=fake_worker)
    assert [g["rank"] for g in got] == [0, 1] and {g["nvls"] for g in got} == {"0"}
    with pytest.raises(RuntimeError, match="rank 1 failed"):
        N.run_workers(2, {"fail": 1}, 30, target=fake_worker)


def test_bad_sizes_exit_with_a_message(capsys: pytest.CaptureFixture) -> None:
    assert N.main(["--max-bytes", "3000"]) == 2
    assert "power of two" in capsys.readouterr().err
