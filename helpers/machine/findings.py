"""Findings: how the machine names threads, places and source lines in what it reports.

A finding is keyed by (kind, pc, other pc, extra key) and counted, so a race that a million thread
pairs hit is one finding with its count (:class:`helpers.machine.report.Finding`).
"""
from __future__ import annotations

import re
from typing import Optional

from helpers.machine import memory as mem
from helpers.machine.report import Finding


def _short_name(name: str) -> str:
    """A mangled static variable's own name (``_ZZ9reduce_v4ILi64EEvPKfPfxE4smem`` -> ``smem``)."""
    m = re.search(r"E(\d+)([A-Za-z_]\w*)$", name)
    if m and len(m.group(2)) == int(m.group(1)):
        return m.group(2)
    return name


class Findings:
    """The part of :class:`helpers.machine.executor.Launch` that records findings and words them:
    threads as (block, thread) coordinates, memory as a variable's name and byte, instructions as
    source lines. It owns ``findings`` and their ``order``."""

    def thread_desc(self, t: int) -> tuple:
        cta, loc = int(t) // self.TPC, int(t) % self.TPC
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        return ((cta % gx, (cta // gx) % gy, cta // (gx * gy)), (loc % bx, (loc // bx) % by, loc // (bx * by)))

    def add_finding(self, kind: str, pc: int, message: str, threads=(), count: int = 1, other_pc: Optional[int] = None,
                    key_extra=(), **detail) -> None:
        key = (kind, pc, other_pc, key_extra)
        f = self.findings.get(key)
        if f is not None:
            f.count += count
            return
        ins = self.fn.instrs[pc]
        loc = ins.loc
        f = Finding(kind=kind, message=message, threads=tuple(self.thread_desc(t) for t in threads),
                    instruction=ins.text, line=loc.line if loc and loc.line else None, file=loc.file if loc else None,
                    loc=loc,
                    count=count, detail=detail)
        if other_pc is not None:
            o = self.fn.instrs[other_pc]
            f.other_instruction, f.other_loc = o.text, o.loc
            f.other_line, f.other_file = (o.loc.line or None, o.loc.file) if o.loc else (None, None)
        self.findings[key] = f
        self.order.append(key)

    def where(self, pc: int) -> str:
        loc = self.fn.instrs[pc].loc
        if loc is None:
            return f"PTX instruction {pc}"
        if not loc.line:
            return f"PTX instruction {pc} (the compiler merged it from several lines: no single source line)"
        return f"line {loc.line}"

    def oob_message(self, what: str, sp: str, a: int, nbytes: int) -> str:
        if sp == "global":
            al = self.glayout.find(int(a))
            if al is None:
                return f"{what} of {nbytes} bytes at an address that belongs to no allocation"
            off = int(a) - al.base
            return (f"{what} of {nbytes} bytes at byte offset {off} of {al.name} ({al.nbytes} bytes): "
                    f"out of bounds")
        if sp == "shared":
            return (f"{what} of {nbytes} bytes at shared offset {int(a)}, past the block's {self.S_total} bytes of "
                    f"shared memory")
        return f"{what} of {nbytes} bytes at {sp} offset {int(a)}: out of bounds"

    def describe(self, sp: str, a: int) -> str:
        if sp == "shared":
            for off, size, name, t in self.shared_vars:
                if off <= a < off + max(size, 1):
                    return f"{_short_name(name)} byte {a - off}"
            return f"shared offset {a}"
        al = self.glayout.find(int(a))
        return f"{al.name} byte {int(a) - al.base}" if al else f"address {a:#x}"

    def describe_flat(self, sp: mem.Space, flat: int) -> str:
        if sp is self.sspace:
            return self.describe("shared", flat % self.S_stride)
        for al in self.glayout.allocs:
            if al.start <= flat < al.start + max(al.nbytes, 1):
                return f"{_short_name(al.name)} byte {flat - al.start}"
        return "global memory"

    def tdesc(self, t: int) -> str:
        b, th = self.thread_desc(t)
        bs = f"({b[0]},{b[1]},{b[2]})" if self.ncta > 1 else ""
        ts = f"({th[0]},{th[1]},{th[2]})" if self.block[1] * self.block[2] > 1 else f"{th[0]}"
        return f"{ts} of block {bs}" if bs else ts
