"""Every kernel file and the template instantiations it must compile with.

CI compiles each entry through NVRTC (no GPU) for :data:`helpers.kernels.ARCHS`; a kernel that does
not compile fails the suite. Each topic module owns its list; this module only gathers them.
"""
from __future__ import annotations

import importlib

# module -> name of its dict {kernel file stem: name expressions}
_SOURCES = {
    "helpers.warp_cupy": "KERNELS",
    "helpers.warp_reduce": "WARP_REDUCE_KERNELS",
    "helpers.block_reduce": "BLOCK_REDUCE_KERNELS",
    "helpers.reduce": "REDUCE_KERNELS",
    "helpers.ballot_uses": "BALLOT_USES_KERNELS",
}


def registry() -> dict[str, tuple[str, ...]]:
    """{kernel file stem: name expressions}, merged from every topic module that defines one."""
    out: dict[str, tuple[str, ...]] = {}
    for mod_name, attr in _SOURCES.items():
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as exc:
            if exc.name != mod_name:
                raise
            continue
        for stem, exprs in getattr(mod, attr, {}).items():
            out[stem] = tuple(dict.fromkeys(out.get(stem, ()) + tuple(exprs)))
    return out
