"""How many float4 loads each thread keeps in flight, per the SASS ptxas makes (CPU only, no GPU):
NVRTC's PTX, then ``ptxas -arch=sm_90`` and ``cuobjdump -sass`` (helpers.engine.sass). The H200 host's
compiler is CUDA 13.0 (V13.0.88); the line printed first says which ptxas this is.

    python3 scripts/sass_loads.py v9 [--blocks 128,256,512,1024] [--unrolls 2,4,8,16] [--min-blocks 0]
    python3 scripts/sass_loads.py floor [--sizes 23,24,25] [--kinds k,t,q,m]

``v9``: kernels/reduce_v9.cu at every block size and REDUCE_UNROLL, with evict-first loads (REDUCE_STREAM=1:
the HBM regime) and without; ``--min-blocks 1`` builds it as ``__launch_bounds__(BLOCK, 1)`` instead of
``__launch_bounds__(BLOCK)`` (0, the default), to compare. ``floor``: the floor probe's instantiations of those kinds at
those sizes (scripts/gpu/floor_probe.py). Each row: loads in flight in the grid-stride loop, against the
float4 loads its source issues a round, registers per thread and bytes spilled.
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.engine import nvrtc, sass  # noqa: E402



def _floor_probe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("floor_probe", ROOT / "scripts" / "gpu" / "floor_probe.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    return probe


def _rows(src: str, names: list[str], defines: tuple[str, ...] = ()) -> list[tuple[str, int, sass.Resources]]:
    return [(n, k, r) for n, (k, r) in sass.compiled_loads_in_flight(src, names, defines).items()]


def _print(label: str, issued: int, in_flight: int, r: sass.Resources) -> None:
    spill = f", {r.spill_store_bytes} B spilled" if r.spill_store_bytes else ""
    print(f"{label:<46} {in_flight:>2} of {issued:<2} in flight  {r.registers} registers{spill}")


def v9(blocks: list[int], unrolls: list[int], min_blocks: int) -> None:
    src = _floor_probe().v9_source(min_blocks)
    for stream in (0, 1):
        for u in unrolls:
            names = [f"reduce_v9<{b}>" for b in blocks]
            for name, n, r in _rows(src, names, (f"REDUCE_UNROLL={u}", f"REDUCE_STREAM={stream}")):
                bounds = f" min_blocks={min_blocks}" if min_blocks else ""
                _print(f"{name} UNROLL={u} STREAM={stream}{bounds}", u, n, r)


def floor(sizes: list[int], kinds: list[str]) -> None:
    probe = _floor_probe()
    names = probe.instantiations([2**k for k in sizes], sm=132, kinds=tuple(kinds))
    for name, n, r in _rows(probe.SRC, names):
        unroll = int(re.match(r"\w+<\d+, (\d+)", name).group(1))
        _print(name, unroll, n, r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("v9")
    a.add_argument("--blocks", default="128,256,512,1024")
    a.add_argument("--unrolls", default="2,4,8,16")
    a.add_argument("--min-blocks", type=int, default=0, choices=(0, 1, 2))
    b = sub.add_parser("floor")
    b.add_argument("--sizes", default="23,24,25")
    b.add_argument("--kinds", default="k,t,q,m")
    args = ap.parse_args()
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    print(f"ptxas {sass.ptxas_release()} (the H200 host's: {sass.H200_PTXAS}), NVRTC {nvrtc.release()}, sm_90")
    if args.what == "v9":
        v9(ints(args.blocks), ints(args.unrolls), args.min_blocks)
    else:
        floor(ints(args.sizes), args.kinds.split(","))


if __name__ == "__main__":
    main()
