"""SASS read on the CPU (helpers.engine.sass): the parser and the loads-in-flight count on two real loops
(below, from ptxas 13.0.88 for sm_90), then, where ptxas, cuobjdump and nvdisasm are found, the kernels themselves:

* every launch v9's dispatcher makes on an H200 keeps all of its round's float4 loads in flight, so the
  "four loads in flight per thread" of notebook 06 holds in the code the GPU runs, not only in the source;
  v8, onepass and v9 keep 2 and 4 a round in flight, and 3 to 6 of 8 (notebook 06, section 4); v9's warp
  collector keeps its 8 slot loads in flight (section 6); v3 and v4 issue both of their loads before
  the add (notebook 05, section 5);
* the floor probe's premises (docs/probes/v9_round5.md, section 3): its kind m keeps every load in flight,
  and the whole-last-round variant at four loads (20.7 to 21.8 us at 2^24 on the H200) keeps one.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from helpers.engine import kernels, nvrtc, sass
from helpers.topics import reduce as R

# floor_v9t<1024, 4, 1, 8, false>'s grid-stride loop: each load's adds before the next load, one register quad
SERIAL = """
        Function : serial
        /*0540*/                   LDG.E.EF.128 R8, desc[UR10][R14.64] ;   /* 0x0000000a0e087981 */
        /*0550*/                   IADD3 R16, P0, R12, R14, RZ ;
        /*0560*/                   IADD3.X R17, R13, R15, RZ, P0, !PT ;
        /*0570*/                   FADD R18, R8, R9 ;
        /*0580*/                   FADD R19, R10, R11 ;
        /*0590*/                   LDG.E.EF.128 R8, desc[UR10][R16.64] ;
        /*05a0*/                   FADD R19, R18, R19 ;
        /*05b0*/                   IADD3 R18, P0, R12, R16, RZ ;
        /*05c0*/                   FADD R4, R19, R4 ;
        /*05d0*/                   IADD3.X R19, R13, R17, RZ, P0, !PT ;
        /*05e0*/                   FADD R20, R8, R9 ;
        /*05f0*/                   FADD R15, R10, R11 ;
        /*0600*/                   LDG.E.EF.128 R8, desc[UR10][R18.64] ;
        /*0610*/                   FADD R15, R20, R15 ;
        /*0620*/                   FADD R16, R8, R9 ;
        /*0630*/                   ISETP.GE.AND.EX P0, PT, R8, UR9, PT, P0 ;
        /*0640*/              @!P0 BRA 0x540 ;
"""
# floor_v9k<1024, 4, 1, 1, 4>'s (v9's code): four loads, then the adds
BURST = """
        Function : burst
        /*0550*/                   LDG.E.EF.128 R4, desc[UR10][R4.64] ;
        /*0560*/                   IADD3 R8, P0, R9, UR16, RZ ;
        /*0570*/                   IADD3.X R9, R22, UR5, RZ, P0, !PT ;
        /*0580*/                   IADD3 R26, P0, R8, UR16, RZ ;
        /*0590*/                   IADD3.X R27, R9, UR5, RZ, P0, !PT ;
        /*05a0*/                   IADD3 R22, P0, R26, UR16, RZ ;
        /*05b0*/                   LDG.E.EF.128 R8, desc[UR10][R8.64] ;
        /*05c0*/                   IADD3.X R23, R27, UR5, RZ, P0, !PT ;
        /*05d0*/                   LDG.E.EF.128 R12, desc[UR10][R26.64] ;
        /*05e0*/              @!P1 LDG.E.EF.128 R16, desc[UR10][R22.64] ;
        /*05f0*/                   MOV R29, UR15 ;
        /*0600*/                   FADD R4, R4, R5 ;
        /*0610*/                   FADD R7, R6, R7 ;
        /*0620*/                   FADD R8, R8, R9 ;
        /*0630*/                   FADD R12, R12, R13 ;
        /*0640*/                   FADD R16, R16, R17 ;
        /*0650*/              @!P0 BRA 0x550 ;
        /*0660*/                   EXIT ;
"""
LOG = """ptxas info    : Compiling entry function 'burst' for 'sm_90'
ptxas info    : Function properties for burst
    0 bytes stack frame, 176 bytes spill stores, 176 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 128 bytes smem
"""


def test_parser_reads_addresses_predicates_opcodes_and_bracketed_operands() -> None:
    burst = sass.functions(BURST)["burst"]
    assert burst[0] == sass.Instruction(0x550, "", "LDG.E.EF.128", ("R4", "desc[UR10][R4.64]"))
    assert burst[9].predicate == "@!P1" and burst[-1].opcode == "EXIT"
    assert sass.loops(burst) == [(0x550, 0x650)]


def test_loads_in_flight_tells_a_burst_from_a_serial_loop() -> None:
    for text, name, expected in ((BURST, "burst", 4), (SERIAL, "serial", 1)):
        body = sass.functions(text)[name]
        assert sass.main_loop_loads_in_flight(body) == expected, name
    assert sass.main_loop_loads_in_flight(sass.functions(BURST)["burst"], bits=64) == 0


def test_resources_read_registers_and_spills() -> None:
    assert sass.resources(LOG) == {"burst": sass.Resources(64, 176, 176)}


def test_assemble_names_a_bad_arch() -> None:
    with pytest.raises(ValueError, match="arch"):
        sass.assemble("", arch="compute_90")


# ---------------------------------------------------------------------------------------------
# The kernels, through ptxas and cuobjdump


def _in_flight(src: str, names: list[str], defines: tuple[str, ...] = ()) -> dict[str, int]:
    compiled = nvrtc.compile(src, options=("-std=c++17", "-arch=compute_90", *defines, *kernels.include_options()),
                             name_expressions=names)
    funcs = sass.functions(sass.assemble(compiled.ptx).sass)
    return {n: sass.main_loop_loads_in_flight(funcs[compiled.lowered[n]]) for n in names}


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
                           (f"-DREDUCE_UNROLL={unroll}", f"-DREDUCE_STREAM={int(stream)}"))
        assert found == {n: unroll for n in names}, (unroll, stream)


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
@pytest.mark.parametrize("file", ["reduce_v8", "reduce_onepass", "reduce_v9"])
def test_loads_in_flight_against_loads_a_round(file: str, h200_ptxas: None) -> None:
    """Notebook 06, section 4: at 2 and 4 float4 loads a round ptxas keeps them all in flight; at 8 it keeps
    3 to 6 of them (the tuning table's "eight a round" cells), at every block size."""
    names = [f"{file}<{b}>" for b in BLOCKS]
    for unroll in (2, 4, 8):
        found = _in_flight(kernels.source(file), names, (f"-DREDUCE_UNROLL={unroll}",))
        if unroll < 8:
            assert found == {n: unroll for n in names}, unroll
        else:
            assert all(3 <= k <= 6 for k in found.values()), found


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_v9s_warp_collector_keeps_eight_slot_loads_in_flight(h200_ptxas: None) -> None:
    """Notebook 06, section 6: warp 0 of the last block polls the slots with eight loads per lane in flight."""
    names = [f"reduce_v9<{b}>" for b in (256, 512, 1024)]
    compiled = nvrtc.compile(kernels.source("reduce_v9"), options=("-std=c++17", "-arch=compute_90",
                                                                   *kernels.include_options()), name_expressions=names)
    funcs = sass.functions(sass.assemble(compiled.ptx).sass)
    for n in names:
        body = funcs[compiled.lowered[n]]
        assert max(sass.loads_in_flight(body, s, e, bits=64) for s, e in sass.loops(body)) == 8, n


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_v3_issues_both_of_its_loads_before_the_add(h200_ptxas: None) -> None:
    """Notebook 05, section 5: each thread of v3 (and v4) has two loads in flight instead of one (v2)."""
    for file, expected in (("reduce_v2", 1), ("reduce_v3", 2), ("reduce_v4", 2)):
        name = f"{file}<256>"
        compiled = nvrtc.compile(kernels.source(file), options=("-std=c++17", "-arch=compute_90",
                                                                *kernels.include_options()), name_expressions=[name])
        body = sass.functions(sass.assemble(compiled.ptx).sass)[compiled.lowered[name]]
        assert sass.loads_in_flight(body, 0, body[-1].address, bits=32) == expected, file


@pytest.mark.needs_nvrtc
@pytest.mark.needs_sass
def test_floor_probe_premises(h200_ptxas: None) -> None:
    spec = importlib.util.spec_from_file_location("floor_probe", Path(__file__).resolve().parents[1] / "scripts"
                                                  / "gpu" / "floor_probe.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    minb = sorted({probe.expr(("m", *c)) for cs in probe.V9M.values() for c in cs})
    pathology = "floor_v9t<1024, 4, 1, 8, false>"
    found = _in_flight(probe.SRC, [*minb, pathology])
    assert {n: found[n] for n in minb} == {n: int(n.split(", ")[1]) for n in minb}
    assert found[pathology] == 1
