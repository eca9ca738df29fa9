"""Every exercise, by name, in the order of the notebooks."""
from __future__ import annotations

from helpers.exercises.across_blocks import LAST_BLOCK_SUM
from helpers.exercises.ladder import BLOCK_TREE_SUM, LAST_WARP_SUM
from helpers.exercises.spec import Exercise
from helpers.exercises.vec4 import THREAD_SUM_VEC4, THREAD_SUM_VEC4_ANY
from helpers.exercises.warp_block import BLOCK_REDUCE_SUM, BLOCK_Y_REDUCE_SUM, WARP_REDUCE_MAX
from helpers.exercises.warp_lanes import BALLOT_RANK, BUTTERFLY_SUM16, SEGMENT_SUM16, WARP_AGGREGATED_APPEND, WARP_SUM_ALL

EXERCISES: dict[str, Exercise] = {ex.name: ex for ex in sorted(
    (BALLOT_RANK, WARP_AGGREGATED_APPEND, WARP_SUM_ALL, SEGMENT_SUM16, WARP_REDUCE_MAX, BUTTERFLY_SUM16,
     BLOCK_REDUCE_SUM, BLOCK_Y_REDUCE_SUM, BLOCK_TREE_SUM, LAST_WARP_SUM, THREAD_SUM_VEC4,
     THREAD_SUM_VEC4_ANY, LAST_BLOCK_SUM), key=lambda e: e.notebook)}


def get(name: str) -> Exercise:
    """The exercise ``name``; ValueError naming the exercises that exist otherwise."""
    try:
        return EXERCISES[name]
    except (KeyError, TypeError):
        raise ValueError(f"name must be one of the exercises {list(EXERCISES)}; got {name!r}") from None


def by_notebook(notebook: str) -> list[Exercise]:
    """The exercises of notebook ``"01"`` .. ``"07"``, in order."""
    return [ex for ex in EXERCISES.values() if ex.notebook == notebook]
