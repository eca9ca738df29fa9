"""SASS read on the CPU (helpers.engine.sass): the parser and the loads-in-flight count on three real
loops (tests/engine/sass_fixtures/, from ptxas 13.0.88 for sm_90), then, where ptxas, cuobjdump and nvdisasm
are found, the kernels themselves, with the H200 host's ptxas release:

* every launch v9's dispatcher makes on an H200 keeps all of its round's float4 loads in flight, so the
  "four loads in flight per thread" of notebooks 06 and 07 holds in the code the GPU runs, not only in the source;
  v8, onepass and v9 keep 2 and 4 a round in flight, and 3 to 6 of 8 (notebook 06, section 4); v9's warp
  collector keeps its 8 slot loads in flight (notebook 07, section 2); v6 and v7 keep eight 4-byte loads in flight
  (section 4); v3 and v4 issue both of their loads before the add (notebook 05, section 5);
* ptxas here makes, from the recorded PTX, the SASS the H200 host made (data/machine_sass.json.gz);
* the warp that draws v9's ticket waits for the atomic's reply before its loads (notebook 07).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.engine import kernels, sass
from helpers.topics import reduce as R

FIXTURES = Path(__file__).resolve().parent / "sass_fixtures"
LOG = """ptxas info    : Compiling entry function 'burst' for 'sm_90'
ptxas info    : Function properties for burst
    0 bytes stack frame, 176 bytes spill stores, 176 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 128 bytes smem
"""


def _fixture(name: str) -> list[sass.Instruction]:
    return sass.functions((FIXTURES / f"{name}.sass").read_text())[name]


def test_parser_reads_addresses_predicates_opcodes_operands_and_control_bits() -> None:
    body = _fixture("burst")
    first = body[0]
    assert (first.address, first.opcode, first.predicate) == (0x580, "LDG.E.EF.128", "")
    assert first.operands == ("R4", "desc[UR8][R40.64]") and first.write_scoreboard == 2
    assert any(i.predicate.startswith("@") for i in body)   # the loop's branch back: @!P0 BRA
    loads = [i for i in body if i.opcode == "LDG.E.EF.128"]
    assert len(loads) == 4 and all(len(i.operands) == 2 and i.operands[1].startswith("desc[") for i in loads)
    assert all(i.write_scoreboard != sass.NO_SCOREBOARD for i in loads)
    assert sass.loops(body) == [(body[0].address, body[-1].address)]


def test_loads_in_flight_by_the_scoreboards() -> None:
    assert sass.main_loop_loads_in_flight(_fixture("burst")) == 4    # four loads, then the adds
    assert sass.main_loop_loads_in_flight(_fixture("serial")) == 1   # each load waited for before the next
    # eight loads, but ptxas puts two pairs on shared scoreboards and waits for each pair at once
    shared = _fixture("shared")
    assert sum(sass.is_global_load(i) for i in shared) == 8
    assert sass.main_loop_loads_in_flight(shared) == 4
    assert sass.main_loop_loads_in_flight(_fixture("burst"), bits=64) == 0


def test_bad_arguments_name_the_parameter() -> None:
    body = _fixture("burst")
    with pytest.raises(ValueError, match="bits"):
        sass.loads_in_flight(body, 0, 1, bits=256)
    with pytest.raises(ValueError, match="start"):
        sass.loads_in_flight(body, 2, 1)
    with pytest.raises(ValueError, match="arch"):
        sass.assemble("", arch="compute_90")
    no_bits = [sass.Instruction(0, "", "LDG.E.128", ("R4", "desc[UR4][R2.64]"))]
    with pytest.raises(ValueError, match="control bits"):
        sass.loads_in_flight(no_bits, 0, 0)


def test_resources_read_registers_and_spills() -> None:
    assert sass.resources(LOG) == {"burst": sass.Resources(64, 176, 176)}


def test_a_named_tool_that_is_missing_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPLAB_CUOBJDUMP", "/nonexistent/cuobjdump")
    sass._found.cache_clear()
    try:
        assert not sass.available()
        with pytest.raises(sass.SassUnavailable, match="WARPLAB_CUOBJDUMP"):
            sass.cuobjdump("--version")
    finally:
        sass._found.cache_clear()


# ---------------------------------------------------------------------------------------------
# The kernels, through ptxas, cuobjdump and nvdisasm


@pytest.fixture(scope="module")
def h200_ptxas() -> None:
    """The claims hold for the H200 host's ptxas release; another may schedule differently (skipped then,
    except under WARPLAB_REQUIRE_SASS, CI's, where it fails)."""
    if sass.ptxas_release() != sass.H200_PTXAS:
        why = f"ptxas here is {sass.ptxas_release()}, the H200 host's is {sass.H200_PTXAS}"
        if os.environ.get("WARPLAB_REQUIRE_SASS"):
            pytest.fail(why)
        pytest.skip(why)


BLOCKS = (128, 256, 512, 1024)


@pytest.mark.needs_sass
def test_ptxas_here_makes_the_sass_the_h200_host_made(h200_ptxas: None) -> None:
    """The recording's SASS (data/machine_sass.json.gz: ptxas on the H200 host, from the recorded PTX) is what
    ptxas makes here from the same PTX, instruction for instruction, control bits included: the CPU-side counts
    above stand for the H200 host's compiler."""
    from helpers.recording.proof import store

    try:
        recorded, kernels_rec = store.read_json_gz(store.SASS), store.read_json_gz(store.KERNELS)
    except FileNotFoundError:
        pytest.skip("data/machine_sass.json.gz or data/machine_kernels.json.gz is not here")
    files = {f: e for f, e in recorded["files"].items() if "sass" in e}
    assert {"reduce_v0", "reduce_v4"} <= set(files)
    for file, entry in files.items():
        here = sass.functions(sass.assemble(kernels_rec["modules"][file]["ptx"]).sass)
        there = sass.functions(entry["sass"])
        assert set(here) == set(there), file
        for name, body in there.items():
            assert here[name] == body, (file, name)


def _in_flight(source: str, names: list[str], defines: tuple[str, ...] = ()) -> dict[str, int]:
    return {n: k for n, (k, _) in sass.compiled_loads_in_flight(source, names, defines).items()}


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_every_v9_launch_on_the_h200_keeps_its_round_of_loads_in_flight(h200_ptxas: None) -> None:
    sizes = sorted({2**k for k in range(10, 31)} | {1000, 10_007, 100_003, 3 * 2**20 + 1, 2**28 + 3})
    groups: dict[tuple[int, bool], set[str]] = {}
    for n in sizes:
        launch = R.v9_launch(n, R.MACHINE_L2_BYTES)
        grids = R.pass_grids("v9", n, launch.block, R.machine_resident_blocks(launch.block), launch.unroll,
                             R.MACHINE_L2_BYTES)
        groups.setdefault((launch.unroll, launch.stream), set()).add(R.kernel_name("v9", launch.block, grids[0]))
    assert sum(len(names) for names in groups.values()) >= 5
    for (unroll, stream), names in groups.items():
        found = _in_flight(kernels.source("reduce_v9"), sorted(names),
                           (f"REDUCE_UNROLL={unroll}", f"REDUCE_STREAM={int(stream)}"))
        assert found == {n: unroll for n in names}, (unroll, stream)


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
@pytest.mark.parametrize("file", ["reduce_v8", "reduce_onepass", "reduce_v9"])
def test_loads_in_flight_against_loads_a_round(file: str, h200_ptxas: None) -> None:
    """Notebook 06, section 4: at 2 and 4 float4 loads a round ptxas keeps them all in flight; at 8 it keeps
    3 to 6 of them, at every block size."""
    names = [f"{file}<{b}>" for b in BLOCKS]
    for unroll in (2, 4, 8):
        found = _in_flight(kernels.source(file), names, (f"REDUCE_UNROLL={unroll}",))
        if unroll < 8:
            assert found == {n: unroll for n in names}, unroll
        else:
            assert all(3 <= k <= 6 for k in found.values()), found


def _bodies(source: str, names: list[str]) -> dict[str, list[sass.Instruction]]:
    return {n: body for n, (body, _) in sass.compiled(source, names).items()}


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_v9_warp_collector_keeps_eight_slot_loads_in_flight(h200_ptxas: None) -> None:
    """Notebook 07, section 2: warp 0 of the last block polls the slots with eight loads per lane in flight."""
    for name, body in _bodies(kernels.source("reduce_v9"), [f"reduce_v9<{b}>" for b in (256, 512, 1024)]).items():
        assert max(sass.loads_in_flight(body, s, e, bits=64) for s, e in sass.loops(body)) == 8, name


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_v3_issues_both_of_its_loads_before_the_add(h200_ptxas: None) -> None:
    """Notebook 05, section 5: each thread of v3 (and v4) has two loads in flight instead of one (v2)."""
    for file, expected in (("reduce_v2", 1), ("reduce_v3", 2), ("reduce_v4", 2)):
        body = _bodies(kernels.source(file), [f"{file}<256>"])[f"{file}<256>"]
        assert sass.loads_in_flight(body, 0, body[-1].address, bits=32) == expected, file


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_the_warp_that_draws_v9s_ticket_waits_for_it_before_its_loads(h200_ptxas: None) -> None:
    """Notebook 07: in v9 the warp that draws the ticket waits for the atomic's reply before its first
    float4 load (in the shuffle of ptxas's warp aggregation)."""
    body = _bodies(kernels.source("reduce_v9"), ["reduce_v9<256>"])["reduce_v9<256>"]
    atom = next(i for i in body if i.opcode.startswith("ATOMG"))
    loads = [i.address for i in body if sass.is_global_load(i)]
    assert sass.first_wait(body, atom).address < min(loads)


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_v6_and_v7_keep_eight_loads_in_flight(h200_ptxas: None) -> None:
    """Notebook 06, section 4: v7's loop reads two 4-byte elements per iteration, and the compiler unrolls it
    so that each thread has eight loads in flight (v6's, the same loop, too)."""
    for file in ("reduce_v6", "reduce_v7"):
        body = _bodies(kernels.source(file), [f"{file}<256>"])[f"{file}<256>"]
        assert max(sass.loads_in_flight(body, s, e, bits=32) for s, e in sass.loops(body)) == 8, file
