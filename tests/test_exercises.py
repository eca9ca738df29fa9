"""helpers.exercises: every reference solution passes on the SIMT machine, known-wrong answers get
the feedback they should, compiler messages use the cell's line numbers, checks stay fast."""
from __future__ import annotations

import os
import re
import statistics
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import exercises
from helpers.engine import kernels
from helpers.engine import nvrtc
from helpers.exercises import run
from helpers.exercises.spec import EXERCISES_DIR

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC cannot be loaded here (needed to compile CUDA C)")

WRONG = sorted((EXERCISES_DIR / "wrong").glob("*.cu"))

# What each known-wrong answer must be told is written at its end: "// expected status: STATUS" and
# one "// expected feedback: PHRASE" line per phrase its feedback must contain.
EXPECTED_LINE = re.compile(r"^// expected (status|feedback): (.+)$", re.M)


def expected(path: Path) -> tuple[str, list[str]]:
    """The status and the phrases that the known-wrong answer ``path`` must get."""
    found = EXPECTED_LINE.findall(path.read_text())
    status = [v for k, v in found if k == "status"]
    assert len(status) == 1, f"{path.name}: one '// expected status:' line, got {status}"
    return status[0], [v for k, v in found if k == "feedback"]


def test_names_and_required_contracts() -> None:
    names = exercises.names()
    assert {"warp_reduce_max", "block_reduce_sum"} <= set(names)
    assert exercises.get("warp_reduce_max").signature == "__device__ float warp_reduce_max(float v)"
    assert exercises.get("block_reduce_sum").signature == "__device__ float block_reduce_sum(float v, float* shared)"
    assert {exercises.get(n).notebook for n in names} == {"01", "02", "03", "04", "05", "06"}
    with pytest.raises(ValueError, match="name must be one of the exercises"):
        exercises.get("warp_reduce_min")


def test_every_exercise_has_its_files_and_wrong_answers() -> None:
    for name in exercises.names():
        ex = exercises.get(name)
        assert ex.solution_path.is_file() and ex.harness_path.is_file() and ex.starter_path.is_file()
        assert len(ex.hints) >= 2
        kinds = {p.name.split(".")[1] for p in WRONG if p.name.startswith(name + ".")}
        assert len(kinds) >= 3, f"{name}: known-wrong answers {kinds}"
    for path in WRONG:
        status, phrases = expected(path)
        assert status in run.STATUSES and status != "passed" and phrases, path.name


@pytest.mark.parametrize("name", exercises.names())
def test_starter_is_not_solved_yet(name: str) -> None:
    """The stored output of every exercise cell: deterministic, no compiler needed."""
    r = exercises.check(name, exercises.get(name).starter + "\n\n")
    assert r.status == "not_started" and not r.passed
    assert "not solved yet" in r.feedback


def test_edge_cases_are_always_tried() -> None:
    rng = np.random.default_rng(0)
    blocks = {c.block[0] for c in exercises.get("block_reduce_sum").cases(rng)}
    assert {1, 31, 32, 33, 1023, 1024} <= blocks and any(b % 32 for b in blocks if b > 32)
    for name in ("warp_reduce_max", "segment_sum16", "butterfly_sum16", "warp_aggregated_append"):
        cases = exercises.get(name).cases(rng)
        assert {c.block[0] for c in cases} == set(range(32, 1025, 32))            # every block size allowed
        warps = {c.block[0] * c.grid[0] // 32 for c in cases if c.edge}
        assert {1, 31, 33} <= warps
    sizes = {c.data["n"] for c in exercises.get("warp_aggregated_append").cases(rng)}
    assert {1, 31, 33, 1000} <= sizes
    vec = exercises.get("thread_sum_vec4").cases(rng)
    assert {1, 31, 33} <= {c.data["n"] for c in vec} and {1, 31, 32, 33, 1024} <= {c.block[0] for c in vec}
    assert {c.block[0] for c in exercises.get("last_warp_sum").cases(rng)} == {64, 128, 256, 512, 1024}
    anywhere = [c for c in exercises.get("thread_sum_vec4_any").cases(rng) if c.edge]
    assert {c.data["offset"] for c in anywhere} == {0, 1, 2, 3}
    assert any(c.data["head"] < (4 - c.data["offset"]) % 4 for c in anywhere)     # a head cut short by n
    last = exercises.get("last_block_sum").cases(rng)
    assert {1, 2, 31, 32, 33, 132} <= {c.grid[0] for c in last if c.edge} and {1, 32} <= {c.block[0] for c in last}


@needs_nvrtc
@pytest.mark.parametrize("name", exercises.names())
def test_reference_solution_passes_on_the_machine(name: str) -> None:
    r = exercises.check(name, exercises.get(name).solution, seed=0, engine="machine")
    assert r.passed, r.feedback
    assert r.status == "passed" and r.feedback.startswith(f"Exercise {name}: passed.") and "Tried:" in r.feedback
    assert not r.problems


# Correct answers to last_block_sum other than the reference, which must pass: the ticket as one
# .acq_rel atomic (PTX ISA 8.4 Table 20, 8.8), inline or through cuda::atomic_ref; atomicInc wrapping
# the counter to 0 (no reset store).
LAST_BLOCK_RIGHT = {
    "atomic_ref_acq_rel": """#include <cuda/atomic>
__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> count(*done);
    if (count.fetch_add(1u, cuda::memory_order_acq_rel) != gridDim.x - 1) return;
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
    count.store(0u, cuda::memory_order_relaxed);
}
""",
    "inline_atom_acq_rel": """__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    unsigned int ticket;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(ticket) : "l"(done) : "memory");
    if (ticket != gridDim.x - 1) return;
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
    *done = 0u;
}
""",
    "atomic_inc_wraps": """__device__ void last_block_sum(float block_sum, float* partials, unsigned int* done, float* out) {
    partials[blockIdx.x] = block_sum;
    __threadfence();
    const unsigned int ticket = atomicInc(done, gridDim.x - 1);
    if (ticket != gridDim.x - 1) return;
    __threadfence();
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partials[b];
    *out = total;
}
""",
}


@needs_nvrtc
@pytest.mark.parametrize("key", sorted(LAST_BLOCK_RIGHT))
def test_last_block_sum_other_right_answers_pass(key: str) -> None:
    r = exercises.check("last_block_sum", LAST_BLOCK_RIGHT[key], seed=0, engine="machine")
    assert r.passed and r.status == "passed", r.feedback


@needs_nvrtc
@pytest.mark.parametrize("arch", kernels.ARCHS)
@pytest.mark.parametrize("name", exercises.names())
def test_solution_compiles_for_every_arch(name: str, arch: str) -> None:
    """CI compiles every solution (with its harness) for sm_70, sm_80 and sm_90, like kernels/*.cu."""
    ex = exercises.get(name)
    opts = ["-std=c++17", f"-arch=compute_{arch[3:]}", *kernels.include_options()]
    ptx = nvrtc.compile(run.program(ex, ex.solution), filename=run.CELL, options=opts).ptx
    assert ex.kernel in ptx and ".entry" in ptx


@needs_nvrtc
@pytest.mark.parametrize("path", WRONG, ids=[p.name[:-3] for p in WRONG])
def test_known_wrong_answer_gets_its_feedback(path: Path) -> None:
    name = path.name.split(".")[0]
    status, phrases = expected(path)
    r = exercises.check(name, path.read_text(), seed=0, engine="machine")
    assert not r.passed
    assert r.status == status, r.feedback
    for phrase in phrases:
        assert phrase in r.feedback, f"{phrase!r} not in:\n{r.feedback}"
    assert "Traceback" not in r.feedback


@needs_nvrtc
def test_compile_error_is_shown_in_cell_lines() -> None:
    body = "__device__ float warp_reduce_max(float v) {\n    float m = v\n    return m;\n}\n"
    r = exercises.check("warp_reduce_max", body, first_line=2)    # under a %%exercise line
    assert r.status == "compile_error" and not r.passed
    assert "line 4: error: expected a \";\"" in r.feedback     # NVRTC flags the line after the missing ;
    assert "return m;" in r.feedback                           # NVRTC's echo of the line stays with it
    r1 = exercises.check("warp_reduce_max", body)              # a bare source starts at line 1
    assert "line 3: error" in r1.feedback


@needs_nvrtc
@pytest.mark.parametrize("name", exercises.names())
def test_compile_error_in_every_exercise_is_in_cell_lines(name: str) -> None:
    """The reference solution with an undeclared name on the first line of the function's body: NVRTC's
    message names that line of the cell (under a %%exercise line), whatever the harness after it."""
    ex = exercises.get(name)
    lines = ex.solution.splitlines()
    body = lines.index(f"{ex.signature} {{") + 1              # 0-based index of the body's first line
    lines.insert(body, "    int broken = not_declared_here;")
    r = exercises.check(name, "\n".join(lines), first_line=2)
    assert r.status == "compile_error" and not r.passed, r.feedback
    assert f'line {body + 2}: error: identifier "not_declared_here" is undefined' in r.feedback, r.feedback
    assert "int broken = not_declared_here;" in r.feedback and "harness" not in r.feedback


@needs_nvrtc
def test_code_that_would_fault_is_not_run_on_the_gpu() -> None:
    """An access the machine shows can fault (here a misaligned float4 load) is never launched on a GPU:
    the fault would leave CUDA unusable in the process. (So this runs without a GPU too.)"""
    src = (EXERCISES_DIR / "wrong" / "thread_sum_vec4_any.misaligned.cu").read_text()
    r = exercises.check("thread_sum_vec4_any", src, seed=0, engine="gpu")
    assert r.status == "hazard" and run.NOT_ON_GPU in r.feedback and not r.timings, r.feedback


@needs_nvrtc
def test_a_wrong_signature_is_explained() -> None:
    r = exercises.check("warp_reduce_max", "__device__ float warp_reduce_max(float v, int lane) { return v; }\n")
    assert r.status == "compile_error"
    assert "harness" in r.feedback and "__device__ float warp_reduce_max(float v)" in r.feedback


@needs_nvrtc
def test_a_discarded_undefined_read_is_only_a_note() -> None:
    r = exercises.check("block_reduce_sum", exercises.get("block_reduce_sum").solution, seed=1)
    assert r.passed
    assert any("guarded tail" in n and "outside the member mask" in n for n in r.notes), r.notes


@needs_nvrtc
def test_wrong_result_has_a_lane_figure_and_html() -> None:
    r = exercises.check("warp_reduce_max", (EXERCISES_DIR / "wrong" / "warp_reduce_max.wrong_result.cu").read_text(),
                        seed=0)
    fig = r.figure()
    assert fig is not None and len(fig.axes[0].patches) >= 3 * 32
    page = r.html()
    assert "<img" in page and "not yet" in page and "<details>" in page


def test_no_nvrtc_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvrtc, "available", lambda: False)
    r = exercises.check("warp_reduce_max", "__device__ float warp_reduce_max(float v) { return 1; }")
    assert r.status == "no_nvrtc" and not r.passed
    for words in ("Linux", "WSL", "GPU", "hosted notebook", "macOS"):
        assert words in r.feedback


def test_bad_source_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="source must be a str"):
        exercises.check("warp_reduce_max", None)  # type: ignore[arg-type]


@needs_nvrtc
def test_each_check_takes_at_most_3_s_on_the_machine() -> None:
    """Warm checks (a fresh kernel's first check also pays imports and the machine's warm-up). CPU
    time (every thread of the process) is judged always; the 2-core machine is shared, so the wall
    clock is judged only when the load leaves a core free."""
    load = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    exercises.check("warp_reduce_max", exercises.get("warp_reduce_max").solution, seed=0)   # warm-up
    wall, cpu = {}, {}
    for name in exercises.names():
        t, c = time.perf_counter(), time.process_time()
        exercises.check(name, exercises.get(name).solution, seed=0)
        wall[name], cpu[name] = time.perf_counter() - t, time.process_time() - c
    print("check times (s), wall / CPU:", {k: f"{wall[k]:.2f} / {cpu[k]:.2f}" for k in wall},
          f"load {load:.1f} on {cores} cores")
    assert max(cpu.values()) <= 3.0 and statistics.median(cpu.values()) <= 2.0, cpu
    if load <= cores:
        assert max(wall.values()) <= 3.0 and statistics.median(wall.values()) <= 2.0, wall
