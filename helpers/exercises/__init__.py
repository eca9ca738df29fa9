"""Exercises a learner writes in CUDA C, checked automatically: always on the SIMT machine
(:mod:`helpers.machine`), lane by lane, with its sanitizer, and on the GPU as well when there is one.

Each exercise is a contract (the exact signature and what must hold), a harness kernel that calls
the learner's device function (``kernels/exercises/harness/``), launches that always include the
edge cases plus randomised ones, a NumPy reference, hints one at a time, and a reference solution
(``kernels/exercises/solutions/*.cu``, the single source of truth for it).

    from helpers import exercises
    exercises.names()                                   # ['warp_aggregated_append', ...]
    r = exercises.check("warp_reduce_max", source)      # source: the CUDA C of the answer
    r.passed, r.status, r.feedback                      # bool, 'passed' | 'wrong_result' | ..., text

In a notebook, ``%load_ext helpers.exercises`` registers the ``%%exercise NAME`` cell magic
(:mod:`helpers.exercises.magic`) and the lane debugger's ``%%simt NAME`` (:mod:`helpers.widgets.simt`).
An instructor grades a class's notebooks headlessly with ``python -m helpers.exercises grade notebooks/*.ipynb --csv grades.csv`` (:mod:`helpers.exercises.grade`).
docs/exercises.md describes the judging rules.
"""
from __future__ import annotations

from typing import Optional

from helpers.exercises.catalog import EXERCISES, by_notebook, get
from helpers.exercises.run import STATUSES, Result


def names() -> list[str]:
    """Every exercise's name, in the order of the notebooks."""
    return list(EXERCISES)


def check(name: str, source: str, *, seed: Optional[int] = None, engine: Optional[str] = None,
          first_line: int = 1) -> Result:
    """Grade ``source`` (CUDA C holding the exercise's function) for exercise ``name``.

    ``seed`` fixes the randomised launches (None: new ones); ``engine`` is ``"machine"``, ``"gpu"``
    or None (the GPU when CuPy can use one). ``first_line`` is the line of the cell the code starts
    on (2 under a ``%%exercise`` line), so messages use the cell's line numbers. Bad code never
    raises: the :class:`Result` says what is wrong (code that never finishes is stopped after
    ``run.max_steps`` of the machine's steps). Raises ValueError for an unknown ``name``, a
    ``source`` that is not a str, a ``seed`` that is not None or an int >= 0, an unknown ``engine``
    or a ``first_line`` below 1; ``run.EngineUnavailable`` (a ValueError) for ``engine="gpu"`` where
    no GPU can be used (before anything is compiled or run).
    """
    from helpers.exercises.attempt import check as _check_one

    return _check_one(get(name), source, seed=seed, engine=engine, first_line=first_line)


def load_ipython_extension(ipython) -> None:  # noqa: ANN001 - IPython's InteractiveShell
    """``%load_ext helpers.exercises``: register the ``%%exercise NAME`` cell magic, and ``%%simt NAME``
    (the lane debugger, :mod:`helpers.widgets.simt`)."""
    from helpers.exercises.magic import register
    from helpers.widgets import simt

    register(ipython)
    simt.register(ipython)


__all__ = ["names", "check", "get", "by_notebook", "Result", "STATUSES", "load_ipython_extension"]
