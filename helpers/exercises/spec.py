"""What an exercise is: a contract, a harness, launches to try, a NumPy reference, hints, a solution.

The device code of an exercise lives in ``kernels/exercises/``: ``harness/NAME.cuh`` (compiled after
the learner's cell; it calls their function), ``solutions/NAME.cu`` (the reference solution, the one
source of truth the solution button shows and the tests grade) and ``starters/NAME.cu`` (what the
exercise cell holds before the learner writes anything).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

EXERCISES_DIR = Path(__file__).resolve().parent.parent.parent / "kernels" / "exercises"
LANES = 32


@dataclass
class Case:
    """One launch of the harness.

    label:    what the learner reads, e.g. ``"blockDim.x = 33 (one full warp and a 1-lane warp)"``.
    grid, block: the launch shape (1 to 3 ints each).
    args:     the harness's arguments, in order: NumPy arrays (device buffers, updated in place) and
              NumPy scalars (by value). :meth:`reset` restores them as built, before every launch.
    data:     what the exercise's judge needs besides the arguments (inputs, expected results).
    edge:     one of the edge cases every check includes (the others are randomised).
    probe:    the launch whose trace is searched for undefined reads that the code discards
              (a partial warp, say), to tell the learner about them in a note.
    """

    label: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: tuple
    data: dict[str, Any] = field(default_factory=dict)
    shared_mem: int = 0
    edge: bool = False
    probe: bool = False

    def __post_init__(self) -> None:
        self.initial = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.args)

    def reset(self) -> tuple:
        """Fresh copies of the arguments as built, set as ``args`` (a launch updates arrays in place)."""
        self.args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.initial)
        return self.args


@dataclass
class Row:
    """One row of 32 boxes in the expected-against-got figure (lanes, or slots of shared memory)."""

    label: str
    values: np.ndarray
    defined: Optional[np.ndarray] = None   # False: hatched "undef"
    checked: Optional[np.ndarray] = None   # False: a value nobody checks (faded)
    wrong: Optional[np.ndarray] = None     # True: outlined as wrong
    present: Optional[np.ndarray] = None   # False: grey (no such lane or slot)
    result: bool = False                   # checked boxes drawn as results (green)


@dataclass
class Mismatch:
    """The first thing wrong with one launch's results.

    summary:   one or two sentences: where, expected, got, and what the difference suggests.
    rows:      the lane figure (input, expected, got), or empty when a figure would not help.
    undefined: the checked result is undefined (the sanitizer findings and the trace say why).
    warp:      the (block-major) warp whose trace explains an undefined result, if known.
    title:     the figure's title.
    """

    summary: str
    rows: list[Row] = field(default_factory=list)
    undefined: bool = False
    warp: Optional[int] = None
    title: str = ""


Judge = Callable[[Case], Optional[Mismatch]]


@dataclass(frozen=True)
class Exercise:
    """One exercise; see the module docstring for its files.

    name:       the exact name graded from outside (``helpers.exercises.check(name, source)``);
                the harness kernel is ``NAME_harness`` (:attr:`kernel`).
    notebook:   the notebook it belongs to, ``"01"`` .. ``"07"``.
    title:      a short title.
    signature:  the function the learner writes, exactly.
    contract:   who calls it, with what, and what must hold afterwards (plain sentences).
    compare:    how results are compared (for floats: the stated float32 bound).
    cases:      ``cases(rng)`` -> launches: the edge cases first, then randomised ones.
    judge:      ``judge(case)`` after the launch (the arrays in ``case.args`` updated): None when
                right, else the first :class:`Mismatch`. ``case.data["undefined"]`` holds the
                machine's undefined masks (one per argument), or None on a GPU.
    hints:      one at a time, the last one closest to the answer.
    machine_check: ``f(reports, cases, module)`` -> a failure sentence or None: what only the
                machine can see (atomics counted, 16-byte loads executed). Skipped on a GPU.
    bench:      ``bench(cupy)`` -> a :class:`Bench` for timing on a GPU, or None.
    """

    name: str
    notebook: str
    title: str
    signature: str
    contract: str
    compare: str
    cases: Callable[[np.random.Generator], list[Case]]
    judge: Judge
    hints: tuple[str, ...]
    machine_check: Optional[Callable[[Sequence[Any], Sequence[Case], Any], Optional[str]]] = None
    bench: Optional[Callable[[Any], "Bench"]] = None

    @property
    def kernel(self) -> str:
        """The harness kernel's name (``extern "C"`` in ``harness/NAME.cuh``)."""
        return f"{self.name}_harness"

    @property
    def harness_path(self) -> Path:
        return EXERCISES_DIR / "harness" / f"{self.name}.cuh"

    @property
    def solution_path(self) -> Path:
        return EXERCISES_DIR / "solutions" / f"{self.name}.cu"

    @property
    def starter_path(self) -> Path:
        return EXERCISES_DIR / "starters" / f"{self.name}.cu"

    @property
    def solution(self) -> str:
        """The reference solution's source (``kernels/exercises/solutions/NAME.cu``)."""
        return self.solution_path.read_text()

    @property
    def starter(self) -> str:
        """What the exercise cell holds before the learner writes anything."""
        return self.starter_path.read_text()


def undefined_mask(case: Case, pos: int, shape: Optional[tuple[int, ...]] = None) -> Optional[np.ndarray]:
    """The machine's mask of undefined elements of argument ``pos`` after the launch (True:
    undefined), or None where nothing tracks it (on a GPU). With ``shape``: always an array of that
    shape, all False where nothing tracks it."""
    masks = case.data.get("undefined")
    mask = None if masks is None else masks[pos]
    if shape is None:
        return mask
    return np.zeros(shape, bool) if mask is None else mask.reshape(shape)


@dataclass
class Bench:
    """A GPU timing setup: the harness launch on a large input, and CuPy's own function as yardstick.

    grid, block, args, shared_mem: the launch (CuPy arrays); yardstick: a no-argument callable
    (e.g. ``lambda: cupy.sum(x)``) and its label; what: the size in words ("2^26 floats").
    """

    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: tuple
    yardstick: Optional[Callable[[], Any]]
    yardstick_label: str
    what: str
    shared_mem: int = 0


def lane_ranges(lanes: Sequence[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"0..2, 5, 7..8"``."""
    lanes = sorted(int(x) for x in lanes)
    parts: list[str] = []
    i = 0
    while i < len(lanes):
        j = i
        while j + 1 < len(lanes) and lanes[j + 1] == lanes[j] + 1:
            j += 1
        parts.append(str(lanes[i]) if i == j else f"{lanes[i]}..{lanes[j]}")
        i = j + 1
    return ", ".join(parts)


def fmt(v: Any) -> str:
    """A value as the learner would write it: whole floats without a fraction, others to 7 digits."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if np.isnan(f):
        return "nan"
    if np.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f == int(f) and abs(f) < 1e7:
        return f"{int(f)}.0"
    return f"{f:.7g}"


def clause(why: Optional[str]) -> str:
    """``"; why."`` (no doubled stop after a question), or ``"."`` when there is no why."""
    if not why:
        return "."
    return f"; {why}" + ("" if why.endswith(("?", ".", "!")) else ".")
