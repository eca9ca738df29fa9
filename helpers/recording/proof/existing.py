"""The H200 recordings that predate the machine, replayed on it: kernel outputs already in ``data/``.

``data/block_reduce.json`` holds block reductions (the corrected kernels and the seed's, every kind,
odd block shapes) and ``data/warp_reduce_traces.json`` ("methods") every warp-reduce method on one
warp, each with what the H200 returned. The same kernels (compiled here) run on the machine with
the same inputs; the values must be bit-identical wherever the recording and the machine both say
the result is defined. The recordings' ``defined`` flags are the emulator's model, so the machine's
verdicts are set beside them too (:attr:`Replayed.flag_differences`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_CT = {"int32": "int", "uint32": "unsigned int", "float32": "float", "float64": "double"}
_OPS = {"sum": "Sum", "max": "Max", "min": "Min", "bit_and": "BitAnd", "bit_or": "BitOr", "bit_xor": "BitXor"}


@dataclass
class Replayed:
    name: str
    compared: int                 # elements defined on both sides, compared bit for bit
    mismatches: int
    machine_undefined_only: int   # the recording's model says defined, the machine says undefined
    recording_undefined_only: int  # the other way round
    kinds: tuple[str, ...]
    error: str = ""               # the machine raised (reported, never hidden)

    @property
    def flag_differences(self) -> int:
        return self.machine_undefined_only + self.recording_undefined_only


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _compare(name: str, got: np.ndarray, und: np.ndarray, rec_values: Any, rec_defined: Any, dtype: str,
             kinds: set[str]) -> Replayed:
    want = np.asarray(rec_values, dtype=dtype).reshape(-1)
    rdef = np.asarray(rec_defined, bool).reshape(-1)
    mdef = ~np.asarray(und, bool).reshape(-1)
    both = rdef & mdef
    bits = {4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    bad = both & (got.reshape(-1).view(bits) != want.view(bits))
    return Replayed(name, int(both.sum()), int(bad.sum()), int((rdef & ~mdef).sum()), int((~rdef & mdef).sum()),
                    tuple(sorted(kinds)))


def block_cases() -> list[Replayed]:
    from helpers import data
    from helpers.recording.proof.agreement import kernel

    out = []
    for c in data.load("block_reduce")["cases"]:
        t, op = _CT[c["dtype"]], f"warplab::ops::{_OPS[c['op']]}<{_CT[c['dtype']]}>"
        if c["version"] == "seed":
            file = "seed_block_reduce"
            expr = {"sum": f"seed_block_reduce_sum_kernel<{t}>", "x": f"seed_block_x_reduce_kernel<{t}, {op}>",
                    "y": f"seed_block_y_reduce_kernel<{t}, {op}>"}[c["kind"]]
        else:
            file = "block_reduce"
            k = {"sum": "block_all_reduce" if c["broadcast"] else "block_reduce", "x": "block_x_reduce",
                 "y": "block_y_reduce"}[c["kind"]]
            expr = f"{k}_kernel<{t}, {op}>"
        values = np.asarray(c["values"], c["dtype"]).reshape(-1)
        res = np.zeros_like(values)
        try:
            r = kernel(file, expr)((1,), tuple(c["block"]), (values, res))
        except Exception as exc:
            out.append(Replayed(c["name"], 0, 0, 0, 0, (), _error(exc)))
            continue
        out.append(_compare(c["name"], res, r.undefined[1], c["result"], c["defined"], c["dtype"], r.kinds()))
    return out


def warp_methods() -> list[Replayed]:
    from helpers import data
    from helpers.recording.proof.agreement import kernel

    out = []
    for name, m in data.load("warp_reduce_traces")["methods"].items():
        dt = m["config"]["dtype"]
        t, op = _CT[dt], f"warplab::ops::{_OPS[m['config']['op']]}<{_CT[dt]}>"
        values = np.asarray(m["config"]["values"], dt)
        for method, res in m["results"].items():
            got = np.zeros_like(values)
            if method in ("down", "xor"):
                expr = f"warp_reduce_kernel<{t}, {op}, {'true' if method == 'xor' else 'false'}>"
                args = (values, np.int32(32), np.int32(32), got)
            else:
                expr = f"warp_reduce_{method}_kernel<{t}, {op}>"
                args = (values, got)
            try:
                r = kernel("warp_reduce_ops", expr)((1,), (32,), args)
            except Exception as exc:
                out.append(Replayed(f"{name}/{method}", 0, 0, 0, 0, (), _error(exc)))
                continue
            out.append(_compare(f"{name}/{method}", got, r.undefined[len(args) - 1], res["values"], res["defined"],
                                dt, r.kinds()))
    return out


def format_replayed(rows: list[Replayed]) -> str:
    lines = [f"{'recording':<28} {'compared':>8} {'mismatch':>8} {'undef: machine only':>20} {'recording only':>15}  findings"]
    for r in rows:
        lines.append(f"{r.name:<28} {r.compared:>8} {r.mismatches:>8} {r.machine_undefined_only:>20} "
                     f"{r.recording_undefined_only:>15}  {r.error or ', '.join(r.kinds) or '-'}")
    return "\n".join(lines)
