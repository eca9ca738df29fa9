"""Every kernel file and the template instantiations it must compile with.

CI compiles each entry through NVRTC (no GPU) for :data:`helpers.engine.kernels.ARCHS`; a kernel that does
not compile fails the suite. Each topic module owns its list; this module only gathers them.
"""
from __future__ import annotations

from helpers.topics import ballot_uses
from helpers.topics import block_reduce
from helpers.topics import reduce
from helpers.engine import warp_cupy
from helpers.topics import warp_kernels

_SOURCES: tuple[dict[str, tuple[str, ...]], ...] = (
    warp_cupy.KERNELS,
    warp_kernels.WARP_REDUCE_KERNELS,
    block_reduce.BLOCK_REDUCE_KERNELS,
    reduce.REDUCE_KERNELS,
    ballot_uses.BALLOT_USES_KERNELS,
)


def registry() -> dict[str, tuple[str, ...]]:
    """{kernel file stem: name expressions}, merged from every topic module's list."""
    out: dict[str, tuple[str, ...]] = {}
    for source in _SOURCES:
        for stem, exprs in source.items():
            out[stem] = tuple(dict.fromkeys(out.get(stem, ()) + tuple(exprs)))
    return out
