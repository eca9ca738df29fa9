"""What the learner is told: one :class:`~helpers.exercises.run.Result` per way an answer can end."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from helpers.exercises.run import KIND_TITLES, Result, finding_sentence, is_hazard, trace_launch, undefined_reads, where
from helpers.exercises.spec import Case, Exercise, Mismatch

MACHINE = "the SIMT machine"

ADVICE = {
    "race": ("Two threads touch the same address, at least one writing, with nothing ordering them. Between a "
             "write and another thread's read put __syncthreads() (threads of different warps) or __syncwarp() "
             "(lanes of one warp). Neither a shuffle nor volatile is a barrier: the Programming Guide gives "
             "memory-ordering guarantees for __syncwarp() and __syncthreads(), not for them. Threads of different "
             "blocks share no barrier: there the writer's __threadfence() before an atomic, and the reader's "
             "__threadfence() after the atomic that observes it, order the write before the read (a plain "
             "atomicAdd is relaxed, no fence; an .acq_rel atomic is both release and acquire, PTX ISA, Release and Acquire Patterns)."),
    "undefined_shuffle": ("Every lane named in the mask of a *_sync call that has not exited must execute the same "
                          "intrinsic with the same mask, and a lane that calls must be named in the mask. A shuffle "
                          "that reads a lane which is not taking part in the call gets an undefined value."),
    "out_of_bounds": "An index went past the end of an array: check it against the size before the access.",
    "misaligned": "A 16-byte load (float4) needs an address that is a multiple of 16 bytes.",
    "divergent_barrier": ("__syncthreads() must be reached by every thread of the block: not inside a branch that "
                          "only some threads take."),
    "deadlock": "Some threads wait at a barrier or a *_sync call that the others never reach.",
    "uninitialized": "An address was computed from an undefined value.",
}

NO_NVRTC = ("Checking an exercise compiles your CUDA C with NVRTC (the CUDA runtime compiler), and NVRTC "
            "cannot be loaded on this computer (there is none for macOS). To check your answers, open this "
            "notebook on a Linux machine or under WSL on Windows (pip install nvidia-cuda-nvrtc-cu12), on a "
            "machine with an NVIDIA GPU, or in a hosted notebook that runs Linux. "
            "The hints and the solution work here.")


def _tail(ex: Exercise, seed: Optional[int]) -> str:
    s = f"\n\nHow results are compared: {ex.compare}"
    if seed is not None:
        s += (f"\nThe random launches came from seed {seed}: helpers.exercises.check({ex.name!r}, source, "
              f"seed={seed}) repeats them.")
    return s


def not_started(ex: Exercise, seconds: float) -> Result:
    text = (f"Exercise {ex.name}: not solved yet. Write {ex.signature} in this cell, replacing the TODO, and run "
            f"it (Shift+Enter). It is compiled by NVRTC and checked on the SIMT machine, lane by lane, and "
            f"on the GPU as well if there is one, over every edge case and random launches.")
    return Result(ex.name, False, "not_started", text, seconds=seconds)


def no_nvrtc(ex: Exercise, seconds: float) -> Result:
    return Result(ex.name, False, "no_nvrtc", f"Exercise {ex.name}: cannot be checked here. {NO_NVRTC}",
                  seconds=seconds)


# The checker gives NVRTC CUDA's own headers (cooperative_groups.h, cuda/atomic, cuda/std/...,
# cuda_fp16.h: helpers.engine.kernels.include_options) but none of the C and C++ standard library's: `#include <cstdio>`, which every CUDA C
# file has, stops the compile with "cannot open source file".
NO_SYSTEM_HEADERS = ("NVRTC compiles device code without the C and C++ standard library headers (stdio.h, cstdio, "
                     "math.h, cmath, cassert, cstdint, stdlib.h, ...). Device code needs none of them: the math "
                     "functions (fmaxf, sqrtf, ...) and the intrinsics are built in, and the fixed-width integers "
                     "are in <cuda/std/cstdint>. Delete that #include line. (printf and assert compile without an "
                     "#include, but the SIMT machine cannot run them.)")


def compile_error(ex: Exercise, errors: Sequence[str], warnings: Sequence[str], in_harness: bool,
                  seconds: float) -> Result:
    parts = [f"Exercise {ex.name}: your code does not compile. NVRTC says (line numbers are your cell's):"]
    parts += [f"\n{e}" for e in errors]
    if any("cannot open source file" in e for e in errors):
        parts.append(f"\n{NO_SYSTEM_HEADERS}")
    if in_harness:
        parts.append(f"\nThe harness calls your function exactly as the contract says, so your cell must define "
                     f"{ex.signature} (same name, same parameter types, same return type).")
    if warnings:
        parts.append("\nWarnings:")
        parts += [f"\n{w}" for w in warnings]
    return Result(ex.name, False, "compile_error", "\n".join(parts), seconds=seconds)


def unsupported(ex: Exercise, exc: Any, at: str, calls: Sequence[str] = ()) -> Result:
    """The machine met an instruction it does not execute. ``calls``: the external functions the code
    calls (``run.external_calls``): a call's parameter passing is what the machine stops at, and
    `st.param.b64` would tell the learner nothing, so the call is named instead."""
    if calls and exc.instruction.startswith(("st.param", "ld.param", "call")):
        named = " and ".join(calls)
        text = (f"Exercise {ex.name}: your code compiles, but at {at} it calls {named}, which the SIMT machine cannot "
                f"run. Delete the call and run the cell again: the feedback shows what each lane got. (On a GPU, "
                f"printf and assert work.)")
        return Result(ex.name, False, "unsupported", text, engine=MACHINE)
    text = (f"Exercise {ex.name}: your code compiles, but the SIMT machine cannot run {at} yet: "
            f"`{exc.instruction}` is an instruction it does not execute (it never guesses). Write that line with "
            f"the intrinsics of the series (shuffles, votes, atomics, __syncthreads, __syncwarp), or check it on a "
            f"GPU.")
    return Result(ex.name, False, "unsupported", text, engine=MACHINE)


def never_finished(ex: Exercise, label: str, steps: int, at: str) -> Result:
    """A launch ran past its step cap (``run.max_steps``): an endless loop or a wait nobody ends.
    ``at``: where the threads were when stopped (``run.where`` of the machine's location)."""
    text = (f"Exercise {ex.name}: in {label} your code did not finish: the SIMT machine stopped it at {at} after {steps:,} "
            f"steps (one step: one instruction run by the threads that are at it together), several times what even "
            f"a slow right answer needs for this launch. Is there a loop whose condition never becomes false for some thread "
            f"(a counter that is never advanced, a stride that reaches 0 or never does), or a thread spinning until "
            f"another thread writes something it never writes? On a GPU this launch would hang.")
    return Result(ex.name, False, "never_finished", text, engine=MACHINE)


def machine_error(ex: Exercise, message: str, label: str) -> Result:
    text = (f"Exercise {ex.name}: the SIMT machine could not run your code in {label}: {message}. If your code "
            f"looks right, this may be a limit of the machine: check it on a GPU, and tell the maintainers.")
    return Result(ex.name, False, "machine_error", text, engine=MACHINE)


def _engine_words(engine: str) -> str:
    return MACHINE if engine == "machine" else f"{MACHINE} and the GPU"


def judged(ex: Exercise, cases: Sequence[Case], reports: Sequence[Any], mismatches: Sequence[Optional[Mismatch]],
           warnings: Sequence[str], *, seed: int, engine: str, gpu_lines: Sequence[str], timings: Sequence[str],
           kernel: Any, module: Any, seconds_so_far: float, skipped: int = 0,
           debug: Optional[Callable[[Case, Optional[int]], Any]] = None) -> Result:
    """The verdict once every launch has run: hazards first, then results, then what only the machine
    counts; notes for what is worth knowing but not wrong. ``debug(case, warp)`` makes the
    :class:`helpers.exercises.run.DebugLaunch` of a failing launch (the first with a hazard, else the
    first wrong one)."""
    import time

    t0 = time.perf_counter()
    tried = tuple(c.label for c in cases)
    seen: dict[tuple, tuple[str, bool, str]] = {}
    for case, rep in zip(cases, reports):
        for f in rep.issues:
            key = (f.kind, where(f.loc), where(f.other_loc) if f.other_loc is not None else None)
            if key not in seen:
                seen[key] = (finding_sentence(f, case.label), is_hazard(f), f.kind)
    problems = _capped([(k, s) for s, hazard, k in seen.values() if hazard])
    kinds = list(dict.fromkeys(k for _, hazard, k in seen.values() if hazard))
    soft = [s for s, hazard, _ in seen.values() if not hazard]
    bad = [i for i, m in enumerate(mismatches) if m is not None]
    first = mismatches[bad[0]] if bad else None
    notes = [f"Compiler warning: {w}" for w in warnings]
    head = f"Exercise {ex.name}:"
    runs = f"{len(cases)} launches on {_engine_words(engine)}"

    causes: list[str] = []
    hung = first is not None and any(f.kind == "deadlock" for f in reports[bad[0]].issues)
    if hung:
        # Every output of a launch that deadlocked is undefined: that is the cause. The shuffles' reads
        # of lanes outside the mask would be a false lead (a guarded tail discards them).
        causes = ["the launch deadlocked (above): no thread could move, so every output is undefined"]
    elif first is not None and first.undefined and first.warp is not None and engine in ("machine", "gpu"):
        causes = undefined_reads(trace_launch(kernel, cases[bad[0]]), [first.warp], _threads(cases[bad[0]]),
                                 kernel)

    def wrong_part() -> list[str]:
        assert first is not None
        out = [first.summary]
        if first.undefined:
            why = causes + ([] if hung else [s for s in soft])
            if why:
                out.append("Where undefined values came from:")
                out += [f"  - {c}" for c in why]
        others = [cases[i].label for i in bad[1:]]
        right = [c.label for i, c in enumerate(cases) if i not in bad]
        ran = f"{len(cases)} launches run" + (f" ({skipped} more skipped after the first failure)" if skipped else "")
        if others and not right:
            out.append(f"All {ran} went wrong.")
        elif others:
            shown = "; ".join(others[:8]) + ("; ..." if len(others) > 8 else "")
            out.append(f"Of the {ran}, {len(bad)} went wrong; besides this one: {shown}.")
        else:
            out.append(f"Of the {ran}, this is the only one that went wrong.")
        if right and others:
            out.append("Right: " + "; ".join(right[:8]) + ("; ..." if len(right) > 8 else "") + ".")
        return out

    seen_h = [k for _, hazard, k in seen.values() if hazard]
    if problems:
        status = "hazard"
        lines = [f"{head} not yet. The SIMT machine found {'a hazard' if len(seen_h) == 1 else f'{len(seen_h)} hazards'} "
                 f"in your code" + (", although every result came out right this time: on a GPU it can go "
                                    "wrong on any run." if first is None else ".")]
        lines += [f"  - {p}" for p in problems]
        lines += [ADVICE[k] for k in kinds if k in ADVICE]
        if first is not None:
            lines.append("")
            lines += wrong_part()
    elif first is not None:
        status = "undefined_result" if first.undefined else "wrong_result"
        lines = [f"{head} not yet."] + wrong_part()
    else:
        extra = ex.machine_check(reports, cases, module) if ex.machine_check else None
        if extra:
            status = "incomplete"
            lines = [f"{head} almost. Every result of the {runs} was right and free of hazards, but {extra}"]
        else:
            status = "passed"
            lines = [f"{head} passed. All {runs} gave the right result, with no race, out-of-bounds access, "
                     f"undefined shuffle or divergent barrier."]
            probe = next((c for c in cases if c.probe), None)
            if probe is not None:
                warps = _blocks(probe) * ((_threads(probe) + 31) // 32)
                for r in undefined_reads(trace_launch(kernel, probe), range(warps), _threads(probe), kernel):
                    notes.append(f"In {probe.label}, {r}. Your code never uses {('them' if 'values' in r else 'it')}: "
                                 f"the result is defined and right, which is all the contract asks "
                                 f"(a guarded tail).")
            notes += [f"{s} Its value was not used in any result." for s in soft]
    lines.append("")
    lines.append("Tried: " + "; ".join(tried) + ".")
    lines += list(gpu_lines)
    lines += list(timings)
    if notes:
        lines.append("")
        lines.append("Notes:")
        lines += [f"  - {n}" for n in notes]
    text = "\n".join(lines) + _tail(ex, seed)
    launch = None
    if debug is not None and status != "passed":
        hazardous = [i for i, rep in enumerate(reports) if any(is_hazard(f) for f in rep.issues)]
        at = hazardous[0] if hazardous else bad[0] if bad else None
        if at is not None:
            m = mismatches[at]
            launch = debug(cases[at], m.warp if m is not None else None)
    return Result(ex.name, status == "passed", status, text, tried=tried, mismatch=first, problems=tuple(problems),
                  notes=tuple(notes), engine=_engine_words(engine),
                  seconds=seconds_so_far + time.perf_counter() - t0, seed=seed, timings=tuple(timings), debug=launch)


PER_KIND = 3   # findings of one kind listed in full; the rest are counted


def _capped(findings: Sequence[tuple[str, str]]) -> list[str]:
    """The sentences, at most PER_KIND of each kind, then one line counting the rest."""
    out: list[str] = []
    for kind in dict.fromkeys(k for k, _ in findings):
        same = [s for k, s in findings if k == kind]
        out += same[:PER_KIND]
        if len(same) > PER_KIND:
            out.append(f"... and {len(same) - PER_KIND} more of this kind ({KIND_TITLES.get(kind, kind).lower()}) at "
                       f"other lines: fix the first, and run again.")
    return out


def _threads(case: Case) -> int:
    return int(np.prod(case.block))


def _blocks(case: Case) -> int:
    return int(np.prod(case.grid))


__all__ = ["NO_NVRTC", "NO_SYSTEM_HEADERS", "judged", "not_started", "no_nvrtc", "compile_error", "unsupported",
           "never_finished", "machine_error"]
