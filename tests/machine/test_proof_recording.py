"""The recording side of the machine's proof, checked without a GPU (helpers/proof)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from helpers.topics.registry import registry
from helpers.recording.proof import batches, launches, programs, rand, record, sanitize

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_random_streams_are_fixed() -> None:
    """The inputs are rebuilt from seeds in CI: the generator's values must never change."""
    assert rand.bits(1, 3).tolist() == [5046631899840037604, 16717222514326610955, 11091719282212608533]
    a, b = rand.Stream(9), rand.Stream(9)
    assert [a.integer(0, 10**6) for _ in range(5)] == [b.integer(0, 10**6) for _ in range(5)]
    assert rand.Stream(9).integers(0, 100, 4).tolist() == rand.Stream(9).integers(0, 100, 4).tolist()


def test_every_registered_instantiation_has_one_family() -> None:
    for file, exprs in registry().items():
        for expr in exprs:
            fam, _ = launches.family_of(file, expr)
            assert fam.name


def test_launches_cover_every_instantiation_with_ragged_sizes() -> None:
    plan = list(launches.launches())
    assert {(l.file, l.expr) for l in plan} == {(f, e) for f, es in registry().items() for e in es}
    ladder = [l for l in plan if l.family in ("ladder", "onepass")]
    assert sum(1 for l in ladder if l.sizes["n"] % l.block[0]) >= 0.9 * len(ladder)
    blocks = {l.block for l in plan if l.family == "block_tile"}
    assert any(b[0] * b[1] % 32 for b in blocks), "some block must end in a partial warp"


def test_launch_arguments_are_deterministic_and_sized() -> None:
    plan = list(launches.launches())[::37]
    for l in plan:
        a1, a2 = launches.arguments(l), launches.arguments(launches.Launch.from_dict(l.to_dict()))
        assert launches.input_checksum(l, a1) == launches.input_checksum(l, a2)
        fam, _ = launches.family_of(l.file, l.expr)
        for arg, value in zip(fam.args, a1):
            if arg.role != "scalar":
                assert value.size == l.sizes[arg.size], (l.id, arg.name)


def test_warp_configurations_never_name_a_caller_outside_its_mask() -> None:
    """warp_intrinsics.cu's callers are active lanes in the mask; the others return (exited)."""
    l = next(x for x in launches.launches() if x.family == "shuffle")
    args = launches.arguments(l)
    assert args[2].dtype == np.uint32 and args[3].dtype == np.uint8
    assert args[2].size * 32 == args[3].size


def test_programs_are_deterministic_and_varied() -> None:
    p1, p2 = programs.program(7), programs.program(7)
    assert p1 == p2
    mods = programs.modules(200)
    feats = set().union(*(p.features for m in mods for p in m.programs))
    for f in ("shfl_idx", "shfl_up", "shfl_down", "shfl_xor", "vote", "match", "redux", "per_lane_loop",
              "data_branch", "divergent_branch", "shared_barrier", "shared_syncwarp", "global_atomic"):
        assert f in feats, f
    assert len({p.source for m in mods for p in m.programs}) == 200


def test_a_program_module_compiles_with_no_contractable_float_op() -> None:
    from helpers.engine import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not available here")
    mod = programs.modules(programs.PER_MODULE)[0]
    ptx, _ = programs.compile_module(mod)
    assert len(re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)) == len(mod.programs)
    assert not re.findall(r"^\s*(?:mul|add|sub)\.f(?:32|64)\b", ptx, re.M), "-fmad=false must give .rn everywhere"


def test_program_layout_regions_cover_the_outputs() -> None:
    p = programs.program(3)
    iin, fin, iout, fout = programs.arguments(p)
    reg = programs.regions(p)
    for name, arr in (("iout", iout), ("fout", fout)):
        spans = sorted((lo, hi) for _, lo, hi in reg[name])
        assert spans[0][0] == 0 and spans[-1][1] == arr.size
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_float_sum_bound_holds_for_every_order() -> None:
    rng = np.random.default_rng(0)
    t = (rng.standard_normal(200) * 100).astype(np.float32)
    exact, bound = programs.float_sum_bound(t)
    for _ in range(20):
        s = np.float32(0)
        for v in rng.permutation(t):
            s = np.float32(s + v)
        assert abs(float(s) - exact) <= bound


SANITIZER_LOG = """========= COMPUTE-SANITIZER
@@start prog_00001
========= Error: Race reported between Write access at prog_00001+0x90 in progmod_000.cu:2
=========     and Read access at prog_00001+0xa0 in progmod_000.cu:2 [256 hazards]
=========
@@done prog_00001
@@start prog_00002
@@done prog_00002
@@start prog_00003
========= Barrier error detected. Divergent thread(s) in warp.
=========     at prog_00003+0x70 in progmod_000.cu:4
=========     by thread (11,0,0) in block (0,0,0)
=========
@@error prog_00003 CUDARuntimeError: cudaErrorLaunchFailure: unspecified launch failure
========= Target application returned an error
========= ERROR SUMMARY: 16 errors
"""


def test_sanitizer_reports_are_attributed_to_programs() -> None:
    got = sanitize.parse_log(SANITIZER_LOG)
    assert sanitize.verdict(got["prog_00001"]) == "reported"
    assert sanitize.verdict(got["prog_00002"]) == "clean"
    assert got["prog_00003"]["killed"] and got["prog_00003"]["errors"] == 1
    assert sanitize.verdict(None) == "not run"


def test_an_experiment_that_memcheck_aborts_is_reported_not_failed() -> None:
    # memcheck stops the kernel at its first invalid access, so the target exits with an error after
    # the report (the H200's "exact" run: 31 errors, exit code 1): that is a report, not a failure.
    aborted = {"ran": False, "exit_code": 1, "errors": 31, "hazards": 0}
    assert sanitize.experiment_verdict(aborted) == "reported"
    assert sanitize.experiment_verdict({"ran": True, "exit_code": 0, "errors": 0, "hazards": 0}) == "clean"
    assert sanitize.experiment_verdict({"ran": True, "exit_code": 0, "errors": 0, "hazards": 2}) == "reported"
    assert sanitize.experiment_verdict({"ran": False, "exit_code": 127, "errors": -1, "hazards": 0}) == "failed"


def test_a_worker_that_dies_is_restarted_past_the_item(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = []

    def fake(batch, items, work, tag, prefix, timeout):
        calls.append([it["key"] for it in items])
        keys = [it["key"] for it in items]
        lines = []
        for k in keys:
            lines.append(f"@@start {k}")
            if k == "p2":
                return "\n".join(lines), 139, work / tag      # killed while running p2
            lines.append(f"@@done {k}")
        return "\n".join(lines), 0, work / tag

    monkeypatch.setattr(batches, "_run_worker", fake)
    b = batches.Batch("m", "", [{"key": k} for k in ("p1", "p2", "p3")])
    batches.run_batch(b, tmp_path)
    assert b.results == {"p1": "ok", "p2": "failed: worker exit 139", "p3": "ok"}
    assert calls == [["p1", "p2", "p3"], ["p3"]]
