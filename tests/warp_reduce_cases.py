"""The warp-reduce tree configurations that the emulator tests and the GPU tests both run."""
from __future__ import annotations

from typing import Callable, Iterator

import pytest

from helpers.topics import warp_reduce as wr

WIDTHS = (1, 2, 4, 8, 16, 32)


def tree_configs(op: str, dtype: str, n_valids: Callable[[int], set[int]]) -> Iterator[tuple[str, int, int]]:
    """``(tree, width, n_valid)`` for every tree and width, with the ``n_valids(width)`` counts of
    values per segment in order; skips the calling test for a bitwise ``op`` on floats."""
    if op in wr.BITWISE_OPS and dtype == "float32":
        pytest.skip("bitwise operators are for integers")
    for tree in wr.TREES:
        for width in WIDTHS:
            for n_valid in sorted(n_valids(width)):
                yield tree, width, n_valid
