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
from helpers.exercises import attempt, feedback, run
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
    assert {exercises.get(n).notebook for n in names} == {"01", "02", "03", "04", "05", "06", "07"}
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
def test_code_that_would_fault_is_not_run_on_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """An access the machine shows can fault (here a misaligned float4 load) is never launched on a GPU:
    the fault would leave CUDA unusable in the process. (So this runs without a GPU too, once the up-front
    check that one is usable is waived: nothing here reaches the GPU.)"""
    monkeypatch.setattr(attempt, "_gpu_usable", lambda: None)
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


# ---------------------------------------------------------------- what learners wrote (review of the exercises)

ENDLESS = """__device__ float warp_reduce_max(float v) {
    int offset = 16;
    while (offset > 0) {
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
        offset /= 1;
    }
    return v;
}
"""


@needs_nvrtc
def test_an_endless_loop_is_stopped_within_seconds() -> None:
    """The machine's default cap (2,000,000 steps) let this run 20 to 100 s and told the learner to
    "raise max_steps", which they cannot; the check caps each launch at run.max_steps."""
    exercises.check("warp_reduce_max", exercises.get("warp_reduce_max").solution, seed=0)   # warm-up
    c = time.process_time()
    r = exercises.check("warp_reduce_max", ENDLESS, seed=0, first_line=2)
    assert time.process_time() - c <= 10.0   # 20 to 100 s before the cap; loose, so a slow CI machine passes
    assert r.status == "never_finished" and not r.passed
    assert "did not finish" in r.feedback and "blockDim.x = 32" in r.feedback and "never becomes false" in r.feedback
    assert re.search(r"stopped it at line [4-7] ", r.feedback), r.feedback   # inside the loop, in the cell's lines
    assert "max_steps" not in r.feedback and "scheduling" not in r.feedback


# Right answers that take many more steps than the reference (one thread adds everything): the step
# cap must leave them room (thread_sum_vec4's is not vectorised, so "incomplete", not "did not finish").
SLOW_RIGHT = {
    "block_y_reduce_sum": """__device__ float block_y_reduce_sum(float v, float* shared) {
    shared[threadIdx.y * blockDim.x + threadIdx.x] = v;
    __syncthreads();
    float s = 0.0f;
    for (int y = 0; y < blockDim.y; ++y) s += shared[y * blockDim.x + threadIdx.x];
    return s;
}
""",
    "thread_sum_vec4": """__device__ float thread_sum_vec4(const float* in, long long n) {
    float s = 0.0f;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (long long i = 0; i < n; ++i) s += in[i];
    return s;
}
""",
}


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(SLOW_RIGHT))
def test_a_slow_right_answer_is_not_cut_off(name: str) -> None:
    r = exercises.check(name, SLOW_RIGHT[name], seed=0)
    assert r.status == ("passed" if name == "block_y_reduce_sum" else "incomplete"), r.feedback


@needs_nvrtc
@pytest.mark.parametrize("call", ['printf("max %f\\n", v);', "assert(v < 1e30f);"])
def test_printf_and_assert_are_named_not_their_ptx(call: str) -> None:
    src = ("__device__ float warp_reduce_max(float v) {\n"
           "    for (int offset = 16; offset > 0; offset /= 2)\n"
           "        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));\n"
           f"    if (threadIdx.x == 0) {call}\n"
           "    return v;\n}\n")
    r = exercises.check("warp_reduce_max", src, seed=0, first_line=2)
    assert r.status == "unsupported", r.feedback
    assert f"at line 5 it calls {call.split('(')[0]}" in r.feedback and "st.param" not in r.feedback, r.feedback


@needs_nvrtc
def test_a_system_header_is_explained() -> None:
    sol = exercises.get("warp_reduce_max").solution
    r = exercises.check("warp_reduce_max", "#include <cstdio>\n" + sol, seed=0)
    assert r.status == "compile_error" and 'cannot open source file "cstdio"' in r.feedback
    assert feedback.NO_SYSTEM_HEADERS in r.feedback
    # cuda.h exists but includes stdlib.h: the error is in that header, not in the exercise's harness
    r = exercises.check("warp_reduce_max", "#include <cuda.h>\n" + sol, seed=0)
    assert r.status == "compile_error" and "in the header cuda.h" in r.feedback, r.feedback
    assert "harness" not in r.feedback and feedback.NO_SYSTEM_HEADERS in r.feedback
    # CUDA's own headers are there, and NVRTC's built-in max() needs none
    r = exercises.check("warp_reduce_max", "#include <cuda_runtime.h>\n#include <cuda/std/cstdint>\n" + sol, seed=0)
    assert r.passed, r.feedback


CG_REDUCE_MAX = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__device__ float warp_reduce_max(float v) {
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    return cg::reduce(tile, v, cg::greater<float>());
}
"""

CG_BLOCK_SUM = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__device__ float block_reduce_sum(float v, float* shared) {
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    float s = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) shared[tile.meta_group_rank()] = s;
    block.sync();
    float t = 0.0f;
    if (block.thread_rank() == 0)
        for (unsigned w = 0; w < tile.meta_group_size(); ++w) t += shared[w];
    return t;
}
"""


@needs_nvrtc
def test_cooperative_groups_answers_and_where_their_shuffles_are() -> None:
    """cg::reduce over full warps is right; over a partial warp its shuffles read lanes that do not
    exist, and those shuffles are in a header, not at the header's line number of the learner's cell."""
    assert exercises.check("warp_reduce_max", CG_REDUCE_MAX, seed=0).passed
    r = exercises.check("block_reduce_sum", CG_BLOCK_SUM, seed=0, first_line=2)
    assert r.status == "undefined_result", r.feedback
    assert "cooperative_groups/details/helpers.h, line" in r.feedback and "a header your code includes" in r.feedback
    assert not re.search(r"^  - line \d{3}", r.feedback, re.M), r.feedback    # no line 333 of a 14-line cell


DEADLOCK = """__device__ float block_reduce_sum(float v, float* shared) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int here = min(32, (int)blockDim.x - warp * 32);
    const unsigned mask = here == 32 ? 0xffffffffu : (1u << here) - 1u;
    for (int o = 16; o > 0; o /= 2) { float x = __shfl_down_sync(mask, v, o); if (lane + o < here) v += x; }
    if (lane == 0) shared[warp] = v;
    if (threadIdx.x == 0) { __syncthreads(); }
    else { __syncwarp(); }
    if (threadIdx.x == 0) { v = 0; for (int w = 0; w < (blockDim.x + 31) / 32; ++w) v += shared[w]; }
    return v;
}
"""


@needs_nvrtc
def test_a_deadlock_is_the_cause_and_is_not_run_on_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every output of a deadlocked launch is undefined: the guarded shuffle's discarded reads are not
    the cause. And a launch that would hang a GPU is not launched there (so this runs without one, the
    up-front check that one is usable waived)."""
    monkeypatch.setattr(attempt, "_gpu_usable", lambda: None)
    r = exercises.check("block_reduce_sum", DEADLOCK, seed=0)
    assert r.status == "hazard" and "Deadlock at line 7" in r.feedback, r.feedback
    assert "the launch deadlocked" in r.feedback and "outside the member mask" not in r.feedback, r.feedback
    r = exercises.check("block_reduce_sum", DEADLOCK, seed=0, engine="gpu")
    assert r.status == "hazard" and run.NOT_ON_GPU_HANG in r.feedback and not r.timings, r.feedback


def test_bad_arguments_are_clear_errors() -> None:
    sol = exercises.get("warp_reduce_max").solution
    for seed in (-1, "x", 1.5, True):
        with pytest.raises(ValueError, match="seed must be None or an int >= 0"):
            exercises.check("warp_reduce_max", sol, seed=seed)  # type: ignore[arg-type]
    for first in (0, -5, "a"):
        with pytest.raises(ValueError, match="first_line must be an int >= 1"):
            exercises.check("warp_reduce_max", sol, first_line=first)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="engine must be"):
        exercises.check("warp_reduce_max", sol, engine="bogus")


@needs_nvrtc
def test_gpu_engine_without_a_gpu_says_so() -> None:
    """Was ModuleNotFoundError ('cupy'), which the notebook showed as a fault of the checker."""
    from helpers.engine import backend
    from helpers.exercises import magic

    if backend.detect().usable:
        pytest.skip("a GPU is usable here")
    with pytest.raises(run.EngineUnavailable, match="engine='gpu' needs CuPy"):
        exercises.check("warp_reduce_max", exercises.get("warp_reduce_max").solution, seed=0, engine="gpu")
    text = magic.outputs("warp_reduce_max", exercises.get("warp_reduce_max").solution, engine="gpu")[0].plain
    assert "not checked" in text and "Drop --engine gpu" in text and "report it" not in text
    misaligned = (EXERCISES_DIR / "wrong" / "thread_sum_vec4_any.misaligned.cu").read_text()
    with pytest.raises(run.EngineUnavailable):   # up front, whatever the code would do on the machine
        exercises.check("thread_sum_vec4_any", misaligned, seed=0, engine="gpu")


def test_grade_with_the_gpu_engine_and_no_gpu_stops_at_once(capsys: pytest.CaptureFixture) -> None:
    from helpers.engine import backend
    from helpers.exercises import grade

    if backend.detect().usable:
        pytest.skip("a GPU is usable here")
    with pytest.raises(SystemExit):
        grade.main(["grade", "nothing.ipynb", "--engine", "gpu"])
    assert "--engine gpu needs CuPy and a usable CUDA GPU" in capsys.readouterr().err


def test_grade_refuses_a_negative_seed_naming_the_option(capsys: pytest.CaptureFixture) -> None:
    from helpers.exercises import grade

    with pytest.raises(SystemExit):
        grade.main(["grade", "nothing.ipynb", "--seed", "-1"])
    assert "argument --seed: must be an int >= 0; got '-1'" in capsys.readouterr().err


def test_a_nul_character_is_named_with_its_line() -> None:
    sol = exercises.get("warp_reduce_max").solution
    r = exercises.check("warp_reduce_max", sol + "\n\x00", seed=0, first_line=2)
    assert r.status == "compile_error" and "NUL character" in r.feedback
    assert f"line {2 + sol.count(chr(10)) + 1}:" in r.feedback, r.feedback
