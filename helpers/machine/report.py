"""What a launch on the machine returns: findings, undefined masks, counters and the optional trace."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from helpers.machine.ptx import Loc

KINDS = ("race", "out_of_bounds", "misaligned", "uninitialized", "undefined_shuffle", "divergent_barrier",
         "deadlock")


class MachineError(RuntimeError):
    """The machine cannot run this launch (bad PTX, a construct it does not model)."""


class UnsupportedInstruction(MachineError):
    """An instruction the machine does not execute. It is never executed approximately.

    ``.instruction`` is the PTX text, ``.line`` / ``.file`` the CUDA source line (from -lineinfo).
    """

    def __init__(self, instruction: str, loc: Optional[Loc], why: str = "") -> None:
        where = f" at {loc.short()}" if loc is not None else ""
        super().__init__(f"the SIMT machine does not support `{instruction}`{where}"
                         + (f": {why}" if why else ""))
        self.instruction = instruction
        self.line = loc.line if loc is not None else None
        self.file = loc.file if loc is not None else None
        self.loc = loc


class StepLimit(MachineError):
    """The launch ran more scheduling steps than ``max_steps`` allows, or longer than ``max_seconds``
    (``.seconds`` True): an endless loop, a spin on a value no thread writes, or a launch longer than
    the cap. ``.steps``: the steps run when stopped (the cap, for ``max_steps``); ``.loc`` the CUDA
    source location of the instruction the lowest-PC threads were at when stopped (None without line
    info), which in an endless loop lies inside the loop."""

    def __init__(self, steps: int, loc: Optional[Loc], seconds: bool = False) -> None:
        where = f" (stopped at {loc.short()})" if loc is not None else ""
        if seconds:
            text = (f"the launch ran past its max_seconds, after {steps} scheduling steps{where} (an endless "
                    f"loop?); raise max_seconds if it is just long")
        else:
            text = (f"the launch ran more than {steps} scheduling steps{where} (an endless loop?); "
                    f"raise max_steps if it is just long")
        super().__init__(text)
        self.steps = steps
        self.loc = loc
        self.seconds = seconds


Thread = tuple[tuple[int, int, int], tuple[int, int, int]]  # ((block x, y, z), (thread x, y, z))


@dataclass
class Finding:
    """One defect the machine saw, aggregated over every thread that hit it at the same place.

    kind:        one of :data:`KINDS`.
    message:     a sentence a learner understands.
    threads:     example threads involved, ((blockIdx), (threadIdx)) each; for a race, the two
                 threads of the first hazard seen (the second access first... see ``other_*``).
    instruction: the PTX instruction (for a race: the later access of the pair).
    line, file:  its CUDA source line and file (innermost, i.e. inside an inlined function);
                 ``loc`` has the whole inlining chain.
    other_instruction, other_line, other_file, other_loc: the earlier access of a race.
    count:       how many thread-level events were folded into this finding.
    detail:      extra facts (``space``, ``hazard`` "RAW"/"WAR"/"WAW", ``address``, ``mask`` ...).
    """

    kind: str
    message: str
    threads: tuple = ()
    instruction: str = ""
    line: Optional[int] = None
    file: Optional[str] = None
    loc: Optional[Loc] = None
    other_instruction: Optional[str] = None
    other_line: Optional[int] = None
    other_file: Optional[str] = None
    other_loc: Optional[Loc] = None
    count: int = 1
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def lines(self) -> tuple:
        """The source lines involved: (line,) or, for a race, (earlier access, later access)."""
        return (self.line,) if self.other_line is None else (self.other_line, self.line)

    def __str__(self) -> str:
        where = self.loc.short() if self.loc is not None else "?"
        s = f"[{self.kind}] {where}: {self.message}"
        if self.count > 1:
            s += f" ({self.count} times)"
        return s


@dataclass
class Counters:
    """Per warp and per instruction counts of one launch.

    ``per_warp``: dict of (n_warps,) int64 arrays, warps numbered block-major (warp w of block b is
    ``b * warps_per_block + w``):
      ``issued`` warp-instructions, ``active_lanes`` (sum over issues of the lanes executing together),
      ``predicated_on`` (of those, lanes whose guard predicate was true), ``shared_requests``,
      ``shared_wavefronts`` (per request: the most distinct 4-byte words any one of the 32 banks is
      asked for, a word asked by several lanes counted once: broadcast), ``global_requests``,
      ``global_sectors`` (distinct 32-byte sectors per request), ``barriers`` (bar.sync arrivals).
    ``by_pc``: the same counts as (n_instructions,) arrays indexed by PTX instruction.
    ``per_instruction``: a list of dicts, one per PTX instruction that executed (pc, ptx, line, file,
      and the counts).
    """

    per_warp: dict[str, np.ndarray]
    by_pc: dict[str, np.ndarray]
    instrs: list = field(default_factory=list, repr=False)

    @property
    def per_instruction(self) -> list[dict[str, Any]]:
        rows = []
        for i in np.flatnonzero(self.by_pc["issued"]):
            ins = self.instrs[i]
            r = {"pc": int(i), "ptx": ins.text, "line": ins.loc.line if ins.loc else None,
                 "file": ins.loc.file if ins.loc else None}
            r.update({k: int(v[i]) for k, v in self.by_pc.items()})
            rows.append(r)
        return rows

    @property
    def totals(self) -> dict[str, int]:
        return {k: int(v.sum()) for k, v in self.per_warp.items()}

    @property
    def divergence(self) -> float:
        """Mean active lanes per issued warp-instruction divided by 32 (1.0: no divergence)."""
        issued = self.per_warp["issued"].sum()
        return float(self.per_warp["active_lanes"].sum() / (32 * issued)) if issued else 1.0


@dataclass
class Report:
    """What one launch returned.

    issues:     list of :class:`Finding`, in the order first seen.
    undefined:  per argument position: a bool array shaped like that NumPy array, True where the
                element's final value is undefined; None for scalar arguments.
    counters:   :class:`Counters`.
    trace:      a :class:`helpers.machine.trace.MachineTrace` when the launch asked for ``trace=True``.
    fma_contractable: PTX instructions (pc, text, line) where an ``add``/``sub`` without a rounding
                modifier consumes a ``mul`` without one: ptxas may fuse them into an fma on hardware,
                so float results there may differ from the machine's (which does not fuse).
    steps:      how many scheduling steps the launch took.
    undefined_globals: for ``globals=`` given as struct fields: {variable: [undefined mask of each
                array field, in order]}.
    undefined_control: (pc, PTX, line, threads) of every branch or guard predicate that was undefined
                for some threads: what those threads computed until their paths joined again is
                undefined (the machine followed one path; what the other path would have written to
                memory is not tracked).
    """

    issues: list[Finding]
    undefined: list[Optional[np.ndarray]]
    counters: Counters
    trace: Any = None
    fma_contractable: list[tuple] = field(default_factory=list)
    steps: int = 0
    undefined_globals: dict[str, list] = field(default_factory=dict)
    undefined_control: list[tuple] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """No findings at all."""
        return not self.issues

    def kinds(self) -> set[str]:
        return {f.kind for f in self.issues}

    def of_kind(self, kind: str) -> list[Finding]:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
        return [f for f in self.issues if f.kind == kind]

    def summary(self) -> str:
        if not self.issues:
            return "clean: no races, out-of-bounds, misaligned or uninitialised accesses, no undefined shuffles"
        return "\n".join(str(f) for f in self.issues)
