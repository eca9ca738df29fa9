"""What checking one answer is made of: the program (the learner's cell with the harness), the compiler's
messages in the cell's lines, the machine's findings in words, the step and time caps of a launch, and
the :class:`Result`. :mod:`helpers.exercises.attempt` runs the check with these.

The learner's code comes first in the program, under ``#line FIRST "cell"``, and the harness is
included after it, so NVRTC's messages and the PTX line table (hence every machine finding) name
the learner's own line numbers. ``first_line`` is the cell line the code starts on: 2 under a
``%%exercise`` line, 1 for a bare source.

Order of judgement: the code must compile; then no hazard (race, out-of-bounds or misaligned
access, undefined shuffle, divergent barrier, deadlock, an address computed from an undefined
value) may show in any launch; then every checked result must be defined and right; then what only
the machine can count (``Exercise.machine_check``). Undefined values that the code discards (a
guarded tail) are only a note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from helpers.engine import kernels
from helpers.exercises.spec import Case, Exercise, Mismatch, lane_ranges

CELL = "cell"   # the file name of the learner's code in NVRTC's log and in the PTX line table

HAZARDS = ("race", "out_of_bounds", "misaligned", "undefined_shuffle", "divergent_barrier", "deadlock")
KIND_TITLES = {
    "race": "Race", "out_of_bounds": "Out-of-bounds access", "misaligned": "Misaligned access",
    "uninitialized": "Read of an undefined value", "undefined_shuffle": "Undefined warp-synchronous call",
    "divergent_barrier": "Barrier reached by only part of a warp", "deadlock": "Deadlock",
}
# Findings whose access can fault on a GPU. A fault there is sticky: for cudaErrorMisalignedAddress
# and cudaErrorIllegalAddress the CUDA Runtime API (enum cudaError) says "any further CUDA work will
# return the same error" until the process is relaunched. So such code is not run on the GPU.
FAULTS = ("out_of_bounds", "misaligned")
NOT_ON_GPU = ("Not run on the GPU: the SIMT machine found an access that can fault there (out of bounds or "
              "misaligned), and a fault would leave CUDA unusable in this notebook until its kernel restarts.")
# A deadlock: no thread could move (threads at a barrier that others never reach). On a GPU that
# launch never ends, and the notebook's kernel would hang with it, so it is not run there either.
HANGS = ("deadlock",)
NOT_ON_GPU_HANG = ("Not run on the GPU: the SIMT machine found a deadlock, and on a GPU that launch would never "
                   "end (this notebook would hang until its kernel restarts).")
STATUSES = ("passed", "not_started", "compile_error", "hazard", "undefined_result", "wrong_result",
            "incomplete", "never_finished", "unsupported", "no_nvrtc", "machine_error")


@dataclass
class DebugLaunch:
    """One launch of a check, ready for the lane debugger (:func:`helpers.widgets.debug.debug`): the
    whole ``program`` (the learner's code, then the harness), the harness ``kernel``, the launch's
    ``grid``, ``block``, ``args`` (as built, before the launch) and ``shared_mem``, the learner's
    ``source`` and the cell line it starts on (``first_line``), ``label`` (the launch in words) and
    ``warp`` (the block-major warp of the first wrong result, when the judge knows it)."""

    program: str
    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: tuple
    shared_mem: int
    source: str
    first_line: int
    label: str
    warp: Optional[int] = None
    ptx: Optional[str] = None

    def open(self) -> Any:
        """The lane debugger on this launch, showing the learner's cell, opened at the first finding's
        step (at the access in the cell, where one of a pair is there), else at the last global store
        of the wrong result's warp (else of warp 0)."""
        from helpers.widgets import debug

        show = (CELL, self.source, self.first_line)
        opts = OPTIONS + tuple(kernels.include_options()) + (f"--filename={CELL}",)
        sess = debug.prepare(self.program, self.kernel, self.grid, self.block, self.args, self.shared_mem,
                             options=opts, show=show, ptx=self.ptx)
        if isinstance(sess, str):
            return debug.error_box(sess)
        st = sess.steps
        places = [p for f in st.findings for p in (f.at, f.other) if p is not None]
        start = next((p for p in places if st.warp(*p[:2])[p[2]].line > 0), places[0] if places else None)
        if start is None:
            wpb = sess.steps.warps_per_block
            b, w = divmod(self.warp, wpb) if self.warp is not None else sess.steps.warps()[0]
            if (b, w) not in sess.steps.warps():
                b, w = sess.steps.warps()[0]
            ws = sess.steps.warp(b, w)
            stores = [i for i in range(len(ws)) if ws[i].kind == "global store"]
            start = (b, w, stores[-1] if stores else 0)
        return debug.widget(sess, start=start)


@dataclass
class Result:
    """The verdict on one answer.

    passed:   True only when every launch was right and free of hazards.
    status:   one of :data:`STATUSES`.
    feedback: what a teacher would say, as plain text (the HTML view says the same, with a figure).
    tried:    the launches, in words.
    mismatch: the first wrong result (with the rows of its lane figure), if any.
    problems: hazards, one sentence each, in the learner's line numbers.
    notes:    things worth knowing that are not mistakes (discarded undefined reads, warnings).
    engine:   what ran it ("SIMT machine", or the GPU's name and the machine).
    seconds:  wall time of the check.
    seed:     the seed of the randomised launches (pass it back to reproduce them).
    timings:  on a GPU, median times of the learner's kernel, the reference and CuPy, in words.
    debug:    the launch to open in the lane debugger (:class:`DebugLaunch`: the first with a hazard,
              else the first wrong one), or None when the answer passed or never ran.
    """

    name: str
    passed: bool
    status: str
    feedback: str
    tried: tuple[str, ...] = ()
    mismatch: Optional[Mismatch] = None
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    engine: str = ""
    seconds: float = 0.0
    seed: Optional[int] = None
    timings: tuple[str, ...] = ()
    debug: Optional[DebugLaunch] = None

    def html(self) -> str:
        """The feedback as HTML, with the lane figure of the first wrong result."""
        from helpers.exercises.view import result_html

        return result_html(self)

    def figure(self) -> Any:
        """The expected-against-got lane figure, or None."""
        from helpers.exercises.view import mismatch_figure

        return mismatch_figure(self.mismatch) if self.mismatch and self.mismatch.rows else None

    def __str__(self) -> str:
        return self.feedback


def normalise(source: str) -> str:
    """The code without comments' trailing spaces and blank lines: for "is this still the starter?"."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines() if line.strip())


HARNESS_DIR = "exercises/harness/"


def harness_file(ex: Exercise) -> str:
    """The file name the harness has in NVRTC's messages and the PTX line table."""
    return f"{HARNESS_DIR}{ex.name}.cuh"


def header_name(file: str) -> str:
    """A header as the learner included it: ``cooperative_groups/details/helpers.h``, not its full path."""
    return file.split("/include/", 1)[1] if "/include/" in file else file.rsplit("/", 1)[-1]


def program(ex: Exercise, source: str, first_line: int = 1) -> str:
    """The learner's code under ``#line first_line "cell"``, then the exercise's harness."""
    return (f'#line {int(first_line)} "{CELL}"\n{source.rstrip()}\n'
            f'#line 1 "{harness_file(ex)}"\n{ex.harness_path.read_text()}')


# The machine's semantics are sm_70+; compute_90 is what helpers.machine compiles for by default.
OPTIONS: tuple[str, ...] = ("-std=c++17", "-arch=compute_90", "-lineinfo")


# ---------------------------------------------------------------- compiler messages

_DIAG = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<sev>error|warning|catastrophic error)(?P<rest>.*)$")


def compiler_messages(log: str, ex: Exercise) -> tuple[list[str], list[str], bool]:
    """NVRTC's log as (errors, warnings, any error in the harness), each message in cell lines.

    The echo of the source line and its caret, which NVRTC prints under each message, stay with it.
    """
    errors: list[str] = []
    warnings: list[str] = []
    in_harness = False
    current: Optional[list[str]] = None
    for raw in log.splitlines():
        m = _DIAG.match(raw)
        if m:
            sev, rest = m.group("sev"), m.group("rest").lstrip(":").strip()
            rest = re.sub(r"#\d+-D: ", "", rest)
            name = m.group("file").rsplit("/", 1)[-1]
            if m.group("file") == CELL:
                head = f"line {m.group('line')}: {sev}: {rest}"
            elif m.group("file") == harness_file(ex):
                in_harness |= sev != "warning"
                head = (f"in the exercise's harness ({name}, line {m.group('line')}), which calls your "
                        f"function: {sev}: {rest}")
            else:   # a header the cell includes (cuda.h wants stdlib.h, which NVRTC does not have)
                head = (f"in the header {header_name(m.group('file'))} (line {m.group('line')}), which your code "
                        f"includes: {sev}: {rest}")
            current = [head]
            (warnings if sev == "warning" else errors).append(current)  # type: ignore[arg-type]
        elif raw.startswith("Remark:") or re.match(r"^\d+ errors? detected", raw.strip()):
            current = None
        elif current is not None and raw.strip():
            current.append(raw)
    join = lambda parts: "\n".join(parts)  # noqa: E731
    return [join(e) for e in errors], [join(w) for w in warnings], in_harness


# ---------------------------------------------------------------- findings in the learner's lines

def _cell_line(loc: Any) -> Optional[int]:
    while loc is not None:
        if loc.file.rsplit("/", 1)[-1] == CELL and loc.line:
            return int(loc.line)
        loc = loc.inlined_at
    return None


def where(loc: Any) -> str:
    """``"line 7"`` (of the learner's cell), or where in the harness when no line of theirs is involved."""
    line = _cell_line(loc)
    if line is not None:
        return f"line {line}"
    if loc is not None and loc.line and loc.file.startswith(HARNESS_DIR):
        return f"the harness ({loc.file.rsplit('/', 1)[-1]}, line {loc.line})"
    if loc is not None and loc.line:   # code of a header the cell includes (cooperative_groups, cuda/atomic)
        return f"{header_name(loc.file)}, line {loc.line} (a header your code includes)"
    if loc is not None:
        return "an instruction the compiler merged from several lines"
    return "an unknown line"


def is_hazard(f: Any) -> bool:
    """A finding that fails the answer whatever the results (see the comment)."""
    # An "uninitialized" finding with a memory space is a read of memory nobody wrote: what it
    # costs shows in the results (undefined or not). Without one, an address was computed from an
    # undefined value: on hardware that access can land anywhere.
    return f.kind in HAZARDS or (f.kind == "uninitialized" and "space" not in f.detail)


def finding_sentence(f: Any, label: str) -> str:
    lines = where(f.loc)
    if f.other_loc is not None and where(f.other_loc) != lines:
        lines = f"{where(f.other_loc)} and {lines}"
    return f"{KIND_TITLES.get(f.kind, f.kind)} at {lines}: {f.message} (in {label})."


def _shuffle_where(report: Any, label: str, kernel: Any) -> str:
    """Where the shuffle of a trace step (label ``"shfl.sync.down.b32 (line N)"``) is, in the
    learner's words. The label's line is the innermost one, which is a header's when the shuffle
    comes from cooperative_groups: with ``kernel``, the instruction's whole location is looked up."""
    m = re.search(r"\(line (\d+)\)", label)
    if m is None:
        return "a shuffle"
    if kernel is not None:
        tr, op = report.trace, label.split()[0]
        for pc, text in enumerate(tr.ptx):
            if int(tr.lines[pc]) == int(m.group(1)) and text.split()[0] == op:
                return where(kernel.function.instrs[pc].loc)
    return f"line {m.group(1)}"


def undefined_reads(report: Any, warps: Sequence[int], threads: int, kernel: Any = None) -> list[str]:
    """Shuffles in ``warps`` where a calling lane read a lane that was outside the member mask or
    did not call (inactive, or missing from a partial warp): the roots of undefined values, one
    sentence per source line and reason. ``warps`` are numbered block-major; ``threads`` is the
    number of threads per block (a partial last warp has lanes that do not exist); ``kernel`` (the
    machine kernel traced) places shuffles inside included headers (else the cell is assumed).
    """
    per_block = (threads + 31) // 32
    found: dict[tuple[str, str], list[set]] = {}
    for w in warps:
        try:
            tr = report.trace.shuffles(warps=[int(w)])
        except (ValueError, KeyError):  # this warp executed no shuffle (KeyError: the machine's way, today)
            continue
        for s in range(1, tr.n_steps):
            callers, src = tr.active[s, 0], tr.src_lane[s, 0]
            in_mask, dfn = tr.in_mask[s, 0], tr.defined[s, 0]
            srcc = np.clip(src, 0, 31)
            root = callers & ~dfn & (src >= 0)
            line = _shuffle_where(report, tr.labels[s], kernel)
            exists = np.arange(32) < threads - (int(w) % per_block) * 32
            absent = root & in_mask[srcc] & ~callers[srcc]
            for sel, why in ((root & ~in_mask[srcc], "outside the member mask"),
                             (absent & ~exists[srcc], f"which do not exist (a block of {threads} "
                                                       f"thread{'s' if threads > 1 else ''} has no such lanes in "
                                                       f"this warp)"),
                             (absent & exists[srcc], "which did not call this shuffle (inactive, or exited)")):
                if sel.any():
                    dst = np.flatnonzero(sel)
                    entry = found.setdefault((line, why), [set(), set(), set(), set()])
                    entry[0].update(int(d) for d in dst)
                    entry[1].update(int(x) for x in src[dst])
                    entry[2].add(int(w) % per_block)
                    entry[3].add(int(w) // per_block)
    out = []
    for (line, why), (dst, srcs, ws, blocks) in found.items():
        many = len(dst) > 1
        out.append(f"{line}: lane{'s' if many else ''} {lane_ranges(dst)} (warp{'s' if len(ws) > 1 else ''} "
                   f"{lane_ranges(ws)} of block{'s' if len(blocks) > 1 else ''} {lane_ranges(blocks)}) read lane{'s' if len(srcs) > 1 else ''} {lane_ranges(srcs)}, {why}: "
                   f"the value{'s' if many or len(srcs) > 1 else ''} received {'are' if many or len(srcs) > 1 else 'is'} "
                   f"undefined")
    return out


# ---------------------------------------------------------------- what the check needs

class EngineUnavailable(ValueError):
    """``engine="gpu"`` was asked for where no GPU can be used (a fact about this computer, not a
    fault of the checker or of the learner's code)."""


# The machine's scheduling steps (one instruction run by the threads at one PC together) a launch may
# take. The machine's own default, 2,000,000, lets an endless loop run for minutes (a learner's
# `for (i = tid; i < 32; )` with an atomic took 106 s). The reference solutions need at most about
# 1,300 steps, and the slowest right answer tried, one thread adding a whole array alone, about 3.3 per
# element of the largest array: this cap leaves that 5 times over. A step's cost grows with the launch
# (tens of microseconds in small ones, milliseconds with atomics in the largest: one such endless loop
# ran 597 s under the step cap alone), so each launch is also bounded in time, LAUNCH_SECONDS, far
# above what a right answer takes (well under a second per launch).
STEPS_FLOOR = 10_000
STEPS_PER_ELEMENT = 16
LAUNCH_SECONDS = 20.0


def max_steps(case: Case) -> int:
    """The steps launch ``case`` may take on the machine before it counts as never finishing."""
    elements = max((a.size for a in case.args if isinstance(a, np.ndarray)), default=1)
    return STEPS_FLOOR + STEPS_PER_ELEMENT * int(elements)


def trace_launch(kernel: Any, case: Case) -> Any:
    """The launch again, traced (for where undefined values came from)."""
    case.reset()
    return kernel(case.grid, case.block, case.args, shared_mem=case.shared_mem, trace=True,
                  max_steps=max_steps(case), max_seconds=LAUNCH_SECONDS)


# Functions a learner's code can call that the machine cannot run, by their PTX names (the runtime's
# vprintf behind printf, __assertfail behind a failed assert): what to call them in the feedback.
CALLS = {"vprintf": "printf", "__assertfail": "assert", "malloc": "malloc", "free": "free"}


def external_calls(ptx: str) -> list[str]:
    """The functions the PTX declares ``.extern .func`` (defined outside the module: printf's vprintf,
    assert's __assertfail), in the learner's words (``CALLS``), in order."""
    names = re.findall(r"^\s*\.extern\s+\.func\s*(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", ptx, re.M)
    return list(dict.fromkeys(CALLS.get(n, n) for n in names))
