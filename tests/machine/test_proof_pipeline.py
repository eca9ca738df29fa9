"""The replay pipeline on recordings fabricated in a temporary folder (never under data/).

The "hardware" outputs here are the machine's own, so every comparison must match; then single
values are changed, and the pipeline must notice. This checks the plumbing (files, seeds,
checksums, regions, comparison modes) before and independently of the H200 recordings.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers.engine import nvrtc
from helpers.recording.proof import launches, programs, rand, replay, store

pytestmark = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC is needed to compile the fabricated modules")


def _fabricate_kernels(root: Path) -> None:
    from helpers.engine import kernels
    from helpers.topics.registry import registry

    reg = registry()
    files = ("reduce_v0", "warp_aggregated")
    mods, rows, arrays = {}, [], {}
    for file in files:
        c = kernels.compiled(file, "compute_90", reg[file], options=("-lineinfo",))
        mods[file] = {"ptx": c.ptx, "lowered": c.lowered}
    picks = [launches.plan("reduce_v0", "reduce_v0<64>", 0), launches.plan("warp_aggregated", "compact_kernel", 1)]
    for i, l in enumerate(picks):
        key = f"L{i:04d}"
        args = launches.arguments(l)
        rows.append({"key": key, "launch": l.to_dict(), "status": "ok", "checksum": launches.input_checksum(l, args)})
        from helpers import machine

        fn = machine.RawModule(ptx=mods[l.file]["ptx"]).get_function(mods[l.file]["lowered"][l.expr])
        fn(l.grid, l.block, tuple(args))
        for pos, arg in launches.output_names(l):
            arrays[f"{key}.{arg.name}"] = args[pos]
    store.write_json_gz(store.KERNELS, {"stamp": {"gpu": "fabricated"}, "modules": mods, "launches": rows}, root)
    store.write_arrays(store.KERNELS, arrays, root)


def _fabricate_programs(root: Path) -> list[programs.Program]:
    from helpers import machine

    progs = [programs.program(i) for i in (1, 2, 5)]
    mod = programs.Module("progmod_000", tuple(progs))
    ptx, _ = programs.compile_module(mod)
    arrays, rows = {}, []
    for p in progs:
        args = programs.arguments(p)
        rows.append({**p.to_dict(), "status": "ok", "checksum": rand.checksum(*args)})
        machine.RawModule(ptx=ptx).get_function(p.name)(p.grid, p.block, tuple(args), shared_mem=p.shared_mem)
        arrays[f"{p.name}.iout"], arrays[f"{p.name}.fout"] = args[2], args[3]
    store.write_json_gz(store.PROGRAMS, {"stamp": {"gpu": "fabricated"}, "modules": [
        {"name": mod.name, "ptx": ptx, "programs": rows}]}, root)
    store.write_arrays(store.PROGRAMS, arrays, root)
    return progs


@pytest.fixture(scope="module")
def kernels_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kernels")
    _fabricate_kernels(root)
    return root


@pytest.fixture(scope="module")
def programs_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[programs.Program]]:
    root = tmp_path_factory.mktemp("programs")
    return root, _fabricate_programs(root)


def test_absent_recordings_give_a_reason(tmp_path: Path) -> None:
    reason = store.missing_reason("kernels", tmp_path)
    assert reason and "scripts/gpu/machine.sh" in reason
    assert store.present(tmp_path) == []


def test_kernel_replay_matches_and_catches_a_changed_value(kernels_root: Path) -> None:
    rec = replay.KernelRecording(kernels_root)
    out = replay.replay_kernels(rec, rec.rows)
    assert [o.status for o in out] == ["match", "match"], [o.error for o in out]
    assert all(o.compared > 0 for o in out)
    key = "L0000.out"
    und = np.zeros(rec.arrays[key].shape, bool)
    rec.arrays[key] = rec.arrays[key].copy()
    rec.arrays[key].view(np.uint32)[0] ^= 1          # one bit of the first partial sum
    bad = replay.replay_launch(rec, rec.rows[0])
    assert bad.status == "mismatch" and bad.mismatches[0]["index"] == 0 and und.size
    rec.rows[1] = {**rec.rows[1], "checksum": 12345}
    assert replay.replay_launch(rec, rec.rows[1]).status == "inputs_differ"


def test_compaction_is_compared_as_a_multiset(kernels_root: Path) -> None:
    rec = replay.KernelRecording(kernels_root)
    n = int(rec.arrays["L0001.counter"][0])
    assert n > 1
    rec.arrays["L0001.out"] = rec.arrays["L0001.out"].copy()
    rec.arrays["L0001.out"][:n] = rec.arrays["L0001.out"][:n][::-1]   # another order of the warps' runs
    assert replay.replay_launch(rec, rec.rows[1]).status == "match"
    rec.arrays["L0001.out"][0] += 1
    assert replay.replay_launch(rec, rec.rows[1]).status == "mismatch"


def test_program_replay_regions(programs_root: tuple[Path, list[programs.Program]]) -> None:
    root, progs = programs_root
    rec = replay.ProgramRecording(root)
    out = replay.replay_programs(rec)
    assert {o.status for o in out} == {"match"}, [(o.name, o.error, o.mismatches[:2]) for o in out]
    p = progs[0]
    lay = programs.layout(p.threads)
    name = f"{p.name}.fout"
    rec.arrays[name] = rec.arrays[name].copy()
    free = lay["float_free"]
    rec.arrays[name][free] = np.float32(1e30)            # far outside any order's rounding
    m, prow = next(rec.items())
    assert replay.replay_program(rec, m, prow).status == "mismatch"
    rec.arrays[name][free] = 0.0                          # with no terms, 0 is the only sum
    iname = f"{p.name}.iout"
    rec.arrays[iname] = rec.arrays[iname].copy()
    tick = rec.arrays[iname][lay["tickets"]:lay["iout"]]
    rec.arrays[iname][lay["tickets"]:lay["iout"]] = tick[::-1]   # tickets are a multiset
    assert replay.replay_program(rec, m, prow).status == "match"
    _, _, report = replay.run_program(m, prow)
    defined = np.flatnonzero(~report.undefined[2][:lay["tickets"]])
    rec.arrays[iname][defined[0]] ^= 4                  # a defined register of the first thread
    bad = replay.replay_program(rec, m, prow)
    assert bad.status == "mismatch" and bad.mismatches[0]["index"] == defined[0]


def test_summary_counts_statuses() -> None:
    out = [replay.Outcome("a", "a", "match", compared=3), replay.Outcome("b", "b", "machine_error", error="E: x")]
    s = replay.summary(out)
    assert s["by_status"] == {"match": 1, "machine_error": 1} and s["machine_errors"] == {"E: x": 1}
    assert "machine error x1" in replay.format_summary("t", s)
    assert replay.failures(s) == {"machine_errors": {"E: x": 1}}
    assert replay.failures(replay.summary(out[:1])) == {}
    bad = replay.Outcome("c", "c", "match")
    bad.add(4, 1, [{"arg": "out", "index": 2}])
    assert (bad.status, bad.compared, bad.undefined) == ("mismatch", 4, 1)
    assert set(replay.failures(replay.summary([bad]))) == {"mismatches"}


def test_parallel_replay_of_every_launch(kernels_root: Path) -> None:
    """The GPU host's replay step: every recorded launch, split over processes."""
    out = replay.run_parallel("kernels", 2, root=kernels_root)
    assert sorted(o.key for o in out) == ["L0000", "L0001"] and {o.status for o in out} == {"match"}


def test_new_families_replay_with_their_rules(tmp_path: Path) -> None:
    """v9 (no finding expected at any grid), warp_diverged (undefined launches never compared), the cg
    compaction (atomics a lower bound) and the timing kernels, on a fabricated recording."""
    from helpers import machine
    from helpers.engine import kernels
    from helpers.topics.registry import registry

    reg = registry()
    picks = [launches.plan("reduce_v9", "reduce_v9<64>", k) for k in range(4)]
    picks += [launches.plan("warp_diverged", "diverged_kernel<0, false>", k) for k in range(4)]
    picks += [launches.plan("warp_aggregated", "compact_cg_kernel", 0), launches.plan("reduce_timing", "reduce_empty", 0),
              launches.plan("reduce_timing", "reduce_spin", 0)]
    mods, rows, arrays = {}, [], {}
    for i, l in enumerate(picks):
        if l.file not in mods:
            c = kernels.compiled(l.file, "compute_90", reg[l.file], options=("-lineinfo",))
            mods[l.file] = {"ptx": c.ptx, "lowered": c.lowered}
        args = launches.arguments(l)
        rows.append({"key": f"L{i:04d}", "launch": l.to_dict(), "status": "ok", "checksum": launches.input_checksum(l, args)})
        machine.RawModule(ptx=mods[l.file]["ptx"]).get_function(mods[l.file]["lowered"][l.expr])(l.grid, l.block, tuple(args))
        for pos, arg in launches.output_names(l):
            arrays[f"L{i:04d}.{arg.name}"] = args[pos]
    store.write_json_gz(store.KERNELS, {"stamp": {"gpu": "fabricated"}, "modules": mods, "launches": rows}, tmp_path)
    store.write_arrays(store.KERNELS, arrays, tmp_path)
    rec = replay.KernelRecording(tmp_path)
    out = replay.replay_kernels(rec, rec.rows)
    assert [o.status for o in out] == ["match"] * len(out), [(o.name, o.error, o.mismatches[:2]) for o in out]
    assert any(l.grid[0] > 1 for l in picks[:4]) and any(l.grid[0] == 1 for l in picks[:4])
    for l, o in zip(picks, out):
        if l.family == "v9":
            assert o.issues == (), (l.id, o.issues)
        if launches.undefined_by_contract(l):
            assert o.compared == 0 and o.undefined > 0, l.id
    assert {launches.undefined_by_contract(l) for l in picks[4:8]} == {True, False}
    cg = next(i for i, l in enumerate(picks) if l.family == "compact_cg")
    key = f"L{cg:04d}.atomics"
    rec.arrays[key] = rec.arrays[key] + 1          # the GPU split a warp's passing lanes: allowed
    assert replay.replay_launch(rec, rec.rows[cg]).status == "match"
    rec.arrays[key] = rec.arrays[key] - 2          # fewer atomics than warps with a passing lane: not
    assert replay.replay_launch(rec, rec.rows[cg]).status == "mismatch"
