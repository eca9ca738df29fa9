"""How many float4 loads each thread keeps in flight, per the SASS ptxas makes (CPU only, no GPU):
NVRTC's PTX, then ``ptxas -arch=sm_90`` and ``cuobjdump -sass`` (helpers.engine.sass). The H200 host's
compiler is CUDA 13.0 (V13.0.88); the line printed first says which ptxas this is.

    python3 scripts/sass_loads.py v9 [--blocks 128,256,512,1024] [--unrolls 2,4,8,16]

``v9``: kernels/reduce_v9.cu at every block size and REDUCE_UNROLL, with evict-first loads (REDUCE_STREAM=1:
the HBM regime) and without. Each row: loads in flight in the grid-stride loop, against the float4 loads
its source issues a round, registers per thread and bytes spilled.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.engine import kernels, nvrtc, sass  # noqa: E402


def _rows(src: str, names: list[str], defines: tuple[str, ...] = ()) -> list[tuple[str, int, sass.Resources]]:
    return [(n, k, r) for n, (k, r) in sass.compiled_loads_in_flight(src, names, defines).items()]


def _print(label: str, issued: int, in_flight: int, r: sass.Resources) -> None:
    spill = f", {r.spill_store_bytes} B spilled" if r.spill_store_bytes else ""
    print(f"{label:<46} {in_flight:>2} of {issued:<2} in flight  {r.registers} registers{spill}")


def v9(blocks: list[int], unrolls: list[int]) -> None:
    src = kernels.source("reduce_v9")
    for stream in (0, 1):
        for u in unrolls:
            names = [f"reduce_v9<{b}>" for b in blocks]
            for name, n, r in _rows(src, names, (f"REDUCE_UNROLL={u}", f"REDUCE_STREAM={stream}")):
                _print(f"{name} UNROLL={u} STREAM={stream}", u, n, r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("v9")
    a.add_argument("--blocks", default="128,256,512,1024")
    a.add_argument("--unrolls", default="2,4,8,16")
    args = ap.parse_args()
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    print(f"ptxas {sass.ptxas_release()} (the H200 host's: {sass.H200_PTXAS}), NVRTC {nvrtc.release()}, sm_90")
    v9(ints(args.blocks), ints(args.unrolls))


if __name__ == "__main__":
    main()
