"""Litmus tests of the PTX memory model: the classic shapes, the outcomes the model allows, and their
runs on the SIMT machine.

The kernels are ``kernels/litmus/litmus.cu`` (one source for the machine and for the GPU recording,
``helpers.recording.record_litmus``): MP, SB, LB, IRIW, 2+2W and CoRR (Lustig et al., "A Formal
Analysis of the NVIDIA PTX Memory Consistency Model", ASPLOS 2019), every access a relaxed ld/st at
``.cta`` scope (the threads are warps of one block) or ``.gpu`` scope (threads in different blocks),
with or without ``fence.sc`` between a thread's two accesses. Relaxed accesses at a scope that
includes both threads are morally strong (PTX ISA 8.7), so no outcome involves a data race and every
register holds a value some write wrote; the model constrains which:

* no fence: every combination of written values (the model is weak: MP, SB, LB, IRIW and 2+2W are
  all allowed without fences, Lustig et al. section 4), except CoRR;
* MP with fences: ``fence.sc; st.relaxed [y]`` is a release pattern and ``ld.relaxed [y]; fence.sc`` an
  acquire pattern (PTX ISA, Release and Acquire Patterns); reading y = 1 makes them synchronize (8.9.4), so the write of x is
  before the read of x in causality order and the read may not return the initial 0 (axiom
  "Causality", 8.10): r0 = 1, r1 = 0 is forbidden;
* SB, IRIW with fences: the fence.sc are ordered in Fence-SC order (8.9.3), which forbids both
  threads missing the other's write (SB 0,0; IRIW 1,0,1,0) (axiom "Fence-SC");
* LB with fences: the same order forbids each read seeing the other thread's later write (1,1);
* 2+2W with fences: whichever fence comes first in Fence-SC order puts its thread's first write
  before the other thread's second write to the same word in causality order, hence in coherence
  order (8.9.6): the final values x = 1 and y = 1 together are forbidden;
* CoRR: two reads of one word by one thread may not see its writes out of coherence order (axiom
  "Coherence"/SC per location): r0 = 1, r1 = 0 is forbidden, fence or not.

These sets are this module's statement of the model, derived as above; they are not enumerated
from the axioms by a program. ``tests/machine/test_m_litmus.py`` checks that the machine never
produces a forbidden outcome and that every outcome a GPU showed (``data/litmus.json``) is allowed.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Optional

import numpy as np

from helpers.engine import kernels

SOURCE = kernels.KERNELS_DIR / "litmus" / "litmus.cu"
SCOPES: tuple[str, ...] = ("cta", "gpu")


@dataclass(frozen=True)
class Shape:
    """One litmus shape: its id in the kernel, its threads ("roles"), the registers it reports, and
    the outcomes the PTX model forbids with fences (``forbidden_fenced``) and without (``forbidden``)."""

    name: str
    kid: int
    roles: int
    registers: tuple[str, ...]
    values: tuple[tuple[int, ...], ...]      # the values each register may hold at all
    forbidden: frozenset
    forbidden_fenced: frozenset

    def allowed(self, fence: bool) -> frozenset:
        """Every outcome (a tuple, one value per register) the PTX model allows."""
        bad = self.forbidden_fenced if fence else self.forbidden
        return frozenset(o for o in product(*self.values) if o not in bad)


SHAPES: dict[str, Shape] = {s.name: s for s in (
    Shape("MP", 0, 2, ("r0=y", "r1=x"), ((0, 1), (0, 1)), frozenset(), frozenset({(1, 0)})),
    Shape("SB", 1, 2, ("r0=y", "r1=x"), ((0, 1), (0, 1)), frozenset(), frozenset({(0, 0)})),
    Shape("LB", 2, 2, ("r0=x", "r1=y"), ((0, 1), (0, 1)), frozenset(), frozenset({(1, 1)})),
    Shape("IRIW", 3, 4, ("r0=x", "r1=y", "r2=y", "r3=x"), ((0, 1),) * 4, frozenset(), frozenset({(1, 0, 1, 0)})),
    Shape("2+2W", 4, 2, ("x", "y"), ((1, 2), (1, 2)), frozenset(), frozenset({(1, 1)})),
    Shape("CoRR", 5, 2, ("r0=x", "r1=x"), ((0, 1), (0, 1)), frozenset({(1, 0)}), frozenset({(1, 0)})),
)}


def configs() -> list[tuple[str, str, bool]]:
    """Every (shape, scope, fence) the suite runs (CoRR needs no fenced form, but has one)."""
    return [(s, sc, f) for s in SHAPES for sc in SCOPES for f in (False, True)]


def name_expression(shape: str, scope: str, fence: bool) -> str:
    """The kernel's name expression for one configuration."""
    return f"litmus<{SHAPES[shape].kid}, {SCOPES.index(scope)}, {int(fence)}>"


def name_expressions() -> tuple[str, ...]:
    return tuple(name_expression(*c) for c in configs())


def geometry(shape: str, scope: str, blocks: int) -> tuple[tuple[int], tuple[int], int]:
    """(grid, block, instances) of a launch that runs ``blocks`` groups of 32 instances."""
    roles = SHAPES[shape].roles
    if scope == "cta":
        return (blocks,), (32 * roles,), 32 * blocks
    return (blocks * roles,), (32,), 32 * blocks


def buffers(instances: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh (mem, out) for ``instances`` instances: x and y 0, registers 0."""
    return np.zeros(64 * instances, np.uint32), np.zeros(4 * instances, np.uint32)


def outcomes(shape: str, mem: np.ndarray, out: np.ndarray) -> np.ndarray:
    """(instances, registers): each instance's outcome, from its registers (2+2W: the final x, y)."""
    n = out.size // 4
    if shape == "2+2W":
        m = np.asarray(mem).reshape(n, 64)
        return np.stack([m[:, 0], m[:, 32]], axis=1)
    return np.asarray(out).reshape(n, 4)[:, :len(SHAPES[shape].registers)]


def module(arch: Optional[str] = None):
    """The litmus kernels on the SIMT machine (compiled by NVRTC)."""
    from helpers.machine.module import RawModule

    opts = ("-std=c++17", *kernels.include_options())
    return RawModule(code=SOURCE.read_text(), options=opts, name_expressions=name_expressions())


def run_on_machine(mod, shape: str, scope: str, fence: bool, blocks: int = 1):
    """One launch of a configuration on the machine: (report, outcomes, defined) with ``defined``
    (instances, registers) True where the machine holds the register's value defined."""
    grid, block, n = geometry(shape, scope, blocks)
    mem, out = buffers(n)
    rep = mod.get_function(name_expression(shape, scope, fence))(grid, block, (mem, out))
    o = outcomes(shape, mem, out)
    und = outcomes(shape, rep.undefined[0], rep.undefined[1])
    return rep, o, ~und.astype(bool)
