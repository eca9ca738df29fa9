"""Grading one attempt: compile the learner's cell with the harness (:mod:`helpers.exercises.run`),
run every launch on the machine (and on the GPU, :mod:`helpers.exercises.gpu`), and turn what happened
into a :class:`~helpers.exercises.run.Result` (:mod:`helpers.exercises.feedback`).

It sits above all three, so that they import nothing of each other but ``run`` (which holds the
program, the compiler messages, the findings and the Result they share).
"""
from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from helpers import machine
from helpers.engine import kernels, nvrtc
from helpers.exercises import feedback, gpu, run
from helpers.exercises.spec import Case, Exercise
from helpers.machine import MachineError, StepLimit, UnsupportedInstruction


def _engine(engine: Optional[str]) -> str:
    if engine is None:
        from helpers.engine import backend

        return "gpu" if backend.resolve() == "cupy" else "machine"
    if engine not in ("machine", "gpu"):
        raise ValueError(f"engine must be 'machine', 'gpu' or None (auto); got {engine!r}")
    return engine


def _gpu_usable() -> None:
    """Raise :class:`~helpers.exercises.run.EngineUnavailable` where no GPU can be used: otherwise the first GPU launch fails
    deep inside (no module cupy), and a notebook would call that a fault of the checker."""
    from helpers.engine import backend

    if not backend.detect().usable:
        raise run.EngineUnavailable(f"engine='gpu' needs CuPy and a usable CUDA GPU, but {backend.detect().reason}; "
                                f"use engine='machine' (or None: the GPU when there is one)")


def _seed(seed: Any) -> int:
    """A seed for NumPy's generator: a new one for None, else an int >= 0 (NumPy refuses negatives,
    and a float or a bool would be truncated without a word)."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**32))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be None or an int >= 0; got {seed!r}")
    return int(seed)


def check(ex: Exercise, source: str, *, seed: Optional[int] = None, engine: Optional[str] = None,
          first_line: int = 1) -> run.Result:
    """Grade ``source`` (the learner's CUDA C) against exercise ``ex``; never raises for bad code."""
    t0 = time.perf_counter()
    if not isinstance(source, str):
        raise ValueError(f"source must be a str of CUDA C; got {type(source).__name__}")
    if isinstance(first_line, bool) or not isinstance(first_line, (int, np.integer)) or first_line < 1:
        # `#line 0` is refused by NVRTC, and the learner would read that as their code not compiling.
        raise ValueError(f"first_line must be an int >= 1 (the cell line the code starts on); got {first_line!r}")
    seed = _seed(seed)
    engine = _engine(engine)   # a bad engine is refused here too, where NVRTC is missing (a Mac)
    if "\x00" in source:   # NVRTC reads a program up to its first NUL: the rest would vanish unseen
        line = first_line + source[:source.index("\x00")].count("\n")
        return feedback.compile_error(ex, [f"line {line}: error: a NUL character (\\x00) is in the code here; NVRTC "
                                           f"stops reading at it, so nothing after it would be compiled. Delete it."],
                                      [], False, time.perf_counter() - t0)
    if run.normalise(source) == run.normalise(ex.starter):
        return feedback.not_started(ex, time.perf_counter() - t0)
    if not nvrtc.available():
        return feedback.no_nvrtc(ex, time.perf_counter() - t0)
    if engine == "gpu":
        _gpu_usable()
    code = run.program(ex, source, first_line)
    try:
        compiled = nvrtc.compile(code, filename=run.CELL, options=run.OPTIONS + tuple(kernels.include_options()))
    except nvrtc.CompileError as exc:
        return feedback.compile_error(ex, *run.compiler_messages(exc.log, ex), seconds=time.perf_counter() - t0)
    except nvrtc.NvrtcUnavailable:
        return feedback.no_nvrtc(ex, time.perf_counter() - t0)
    warnings = run.compiler_messages(compiled.log, ex)[1]
    module = machine.RawModule(ptx=compiled.ptx)
    try:
        kernel = module.get_function(ex.kernel)
    except ValueError:
        return feedback.compile_error(ex, [f"the harness kernel {ex.kernel} is missing: does your cell define "
                                           f"a kernel or macro of that name?"], [], True, time.perf_counter() - t0)
    cases = ex.cases(np.random.default_rng(seed))
    outcome = _run_machine(ex, kernel, cases)
    if isinstance(outcome, run.Result):
        return outcome
    ran, reports, mismatches = outcome
    skipped = len(cases) - len(ran)
    cases = ran
    gpu_lines: list[str] = []
    timings: tuple[str, ...] = ()
    if engine == "gpu" and any(f.kind in run.FAULTS for rep in reports for f in rep.issues):
        gpu_lines = [run.NOT_ON_GPU]
    elif engine == "gpu" and any(f.kind in run.HANGS for rep in reports for f in rep.issues):
        gpu_lines = [run.NOT_ON_GPU_HANG]
    elif engine == "gpu":
        gpu_mismatches, gpu_lines, timings = gpu.run(ex, code, cases)
        mismatches = [m or g for m, g in zip(mismatches, gpu_mismatches)]
    return feedback.judged(ex, cases, reports, mismatches, warnings, seed=seed, engine=engine,
                           gpu_lines=gpu_lines, timings=timings, kernel=kernel, module=module, skipped=skipped,
                           seconds_so_far=time.perf_counter() - t0,
                           debug=lambda case, warp: run.DebugLaunch(code, ex.kernel, case.grid, case.block, case.initial,
                                                                case.shared_mem, source, first_line, case.label, warp,
                                                                compiled.ptx))


# After the first launch that goes wrong, only the remaining edge cases run (they say which shapes
# fail), and launches stop once this many seconds have gone: a check stays within about 3 s.
BUDGET_AFTER_FAILURE_S = 0.5

def _run_machine(ex: Exercise, kernel: Any, cases: list[Case]) -> Any:
    """Launch on the machine: (cases run, their reports, the first mismatch of each), or a Result
    when the machine cannot run the code."""
    ran, reports, mismatches = [], [], []
    failed_at: Optional[float] = None
    for case in cases:
        if failed_at is not None and (not case.edge or time.perf_counter() - failed_at > BUDGET_AFTER_FAILURE_S):
            continue
        case.reset()
        steps = run.max_steps(case)
        try:
            rep = kernel(case.grid, case.block, case.args, shared_mem=case.shared_mem, max_steps=steps,
                         max_seconds=run.LAUNCH_SECONDS)
        except UnsupportedInstruction as exc:
            return feedback.unsupported(ex, exc, run.where(exc.loc), run.external_calls(kernel.raw_module.ptx))
        except StepLimit as exc:
            return feedback.never_finished(ex, case.label, steps, run.where(exc.loc))
        except MachineError as exc:
            return feedback.machine_error(ex, str(exc), case.label)
        case.data["undefined"] = rep.undefined
        ran.append(case)
        reports.append(rep)
        mismatches.append(ex.judge(case))
        if failed_at is None and (mismatches[-1] is not None or any(run.is_hazard(f) for f in rep.issues)):
            failed_at = time.perf_counter()
    return ran, reports, mismatches
