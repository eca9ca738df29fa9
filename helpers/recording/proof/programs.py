"""Random small CUDA C programs over the warp and block primitives, deterministic from a seed.

Each program is one ``extern "C"`` kernel with the same four parameters::

    prog_NNNNN(const int* iin, const float* fin, int* iout, float* fout)

It loads its thread's inputs into registers (ints ``a b c``, floats ``x y``, sometimes a double
``d``), runs a random body, and stores the registers to its own output slots. The body draws from:
shuffles of every mode, offset (constant, per lane, >= 32), width and mask; ballot / any / all,
match_any / match_all, the ``__reduce_*_sync`` family and ``__syncwarp``; divergent branches on the
lane id and on data (with the mask taken by ``__ballot_sync``), block-uniform branches, loops with
per-lane trip counts followed by a warp-synchronous call, uniform loops with calls inside; shared
memory (static and dynamic) with ``__syncthreads`` and ``__syncwarp``, ``__syncwarp`` on both sides of
a branch; integer and float atomics on global and shared memory; ``%laneid``, ``%lanemask_lt``,
``__activemask``; early exits; 1-D and 2-D blocks, sizes that are not multiples of 32.

Every warp-synchronous call names exactly the lanes that reach it (plus lanes that have exited or do
not exist), so no program can hang the GPU. Undefined behaviour is generated on purpose and
recorded in ``Program.intent``: shuffle reads from lanes outside the mask or from exited lanes
(``undefined_read``), reads of shared memory nobody wrote (``uninitialized``), shared-memory races
with a missing barrier (``race``), a global write-write race (``global_race``), and a barrier
reached by part of a warp (``divergent_barrier``). The H200 returns some value there; the machine
must mark it undefined, and only defined outputs are compared.

Float arithmetic: the programs are compiled with ``-fmad=false``, so NVRTC emits ``mul.rn`` and
``add.rn`` (which ptxas may not contract into an FMA) and ``fmaf`` is the only fused operation.
Magnitudes are tracked while generating so no value overflows to infinity (no NaN payloads).

Output layout (``T`` threads in the launch), and how each region is compared:

* ``iout[0, 4T)`` the registers (exact); ``iout[4T, 4T+24)`` integer atomics targets, add / max /
  min / or / xor / and (exact: order-free); ``iout[4T+24]`` a ticket counter (exact);
  ``iout[4T+32, 5T+32)`` tickets from ``atomicAdd(counter, 1)`` (compared as a multiset);
* ``fout[0, 2T)`` the registers (exact); ``fout[2T, 2T+4)`` float atomicAdd of small integers
  (exact: every order gives the same sum); ``fout[2T+4]`` float atomicAdd of arbitrary values
  (``float_sum``: each side within the float32 rounding bound of the exact sum of the terms);
  ``fout[2T+8, 3T+8)`` those terms (exact).
"""
from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from helpers.recording.proof import rand

PROGRAMS = 2000
PER_MODULE = 50
FULL = 0xFFFFFFFF
OPTIONS: tuple[str, ...] = ("-std=c++17", "-lineinfo", "-fmad=false", "-diag-suppress=177")
INTENTS: tuple[str, ...] = ("undefined_read", "uninitialized", "race", "global_race", "divergent_barrier",
                            "exited_read")
KI, AI, KF = 4, 32, 2        # int slots per thread, int atomic region, float slots per thread
F_LIMIT = 1e30               # no float value may grow past this (so none overflows)
SENTINEL32 = 0x7E57AB1E


# The integer atomics a program may call: (function, slot in the int atomic region, operand); each {}
# is an int variable. Each slot takes one function only, which commutes, so its final value does not
# depend on the order the atomics land in.
_INT_ATOMICS: tuple[tuple[str, str, str], ...] = (
    ("atomicAdd", "(lane & 3)", "{} & 0xff"), ("atomicMax", "4 + ({} & 3)", "{}"), ("atomicMin", "8 + (lane & 3)", "{}"),
    ("atomicOr", "12 + (lane & 1)", "1 << ({} & 31)"), ("atomicXor", "14 + (lane & 1)", "{}"),
    ("atomicAnd", "16 + (lane & 1)", "~(1 << ({} & 31))"))


@dataclass(frozen=True)
class Program:
    """One generated kernel and its launch."""

    name: str
    seed: int
    source: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    features: tuple[str, ...]
    intent: tuple[str, ...]

    @property
    def threads(self) -> int:
        return int(np.prod(self.grid) * np.prod(self.block))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Program":
        d = dict(d)
        for k in ("grid", "block", "features", "intent"):
            d[k] = tuple(d[k])
        return cls(**d)


@dataclass(frozen=True)
class Module:
    """Programs compiled together: ``source`` is their kernels, one after the other."""

    name: str
    programs: tuple[Program, ...]

    @property
    def source(self) -> str:
        head = (f"// Warp Lab proof: generated programs, module {self.name} (helpers/recording/proof/programs.py).\n"
                "// Compiled with -fmad=false: no float multiply-add is contracted.\n")
        return head + "\n".join(p.source for p in self.programs)


def layout(threads: int) -> dict[str, int]:
    """Offsets of the output regions for a launch of ``threads`` threads (see the module docstring)."""
    t = threads
    return {"iout": KI * t + AI + t, "fout": KF * t + 8 + t, "int_atomics": KI * t, "ticket_counter": KI * t + 24,
            "tickets": KI * t + AI, "float_exact": KF * t, "float_free": KF * t + 4, "float_terms": KF * t + 8}


def arguments(program: Program) -> list[np.ndarray]:
    """(iin, fin, iout, fout) for ``program``, deterministic from its seed (small ints and floats in
    [-4, 4); outputs pre-filled with the sentinel, atomic targets with random bits, counters 0)."""
    t = program.threads
    s = rand.Stream(program.seed ^ 0xA5A5)
    lay = layout(t)
    iin = (s.bits(4 * t) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
    small = s.unit(4 * t) < 0.5
    iin = np.where(small, iin % 64 - 16, iin).astype(np.int32)
    fin = ((s.unit(4 * t) * 8 - 4)).astype(np.float32)
    iout = np.full(lay["iout"], SENTINEL32, np.uint32).view(np.int32)
    iout[lay["int_atomics"]:lay["int_atomics"] + 24] = (s.bits(24) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
    iout[lay["ticket_counter"]] = 0
    fout = np.full(lay["fout"], SENTINEL32, np.uint32).view(np.float32)
    fout[lay["float_exact"]:lay["float_exact"] + 5] = 0.0
    return [iin, fin, iout, fout]


def regions(program: Program) -> dict[str, list[tuple[str, int, int]]]:
    """How each output is compared: {argument name: [(mode, start, stop), ...]} covering it all."""
    lay = layout(program.threads)
    return {"iout": [("exact", 0, lay["tickets"]), ("multiset", lay["tickets"], lay["iout"])],
            "fout": [("exact", 0, lay["float_free"]), ("float_sum", lay["float_free"], lay["float_free"] + 1),
                     ("exact", lay["float_free"] + 1, lay["fout"])]}


# ------------------------------------------------------------------------------ the generator

@dataclass
class _Ctx:
    mask: str                 # C expression: the member mask of a warp-synchronous call here
    lanes: Optional[int]      # the lanes that can be here, when known statically (None: data-dependent)
    uniform: bool             # block-uniform control flow: __syncthreads() allowed
    sync: bool = True         # warp-synchronous calls allowed (False inside per-lane trip loops)
    depth: int = 0


def _hex(m: int) -> str:
    return f"0x{m & FULL:08x}u"


def _lane_set(pred: Callable[[int], bool]) -> int:
    return sum(1 << l for l in range(32) if pred(l))


class _Gen:
    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.s = rand.Stream(seed)
        self.lines: list[str] = []
        self.ind = 1
        self.features: set[str] = set()
        self.intent: set[str] = set()
        self.fbound = 4.0       # |float register| bound
        self.dbound = 4.0
        self.k = 0              # fresh-name counter
        self.statements = 0

    # -- helpers
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    def fresh(self, p: str) -> str:
        self.k += 1
        return f"{p}{self.k}"

    def pick(self, weighted: list[tuple[float, Any]]) -> Any:
        total = sum(w for w, _ in weighted)
        r = self.s.uniform() * total
        for w, v in weighted:
            r -= w
            if r < 0:
                return v
        return weighted[-1][1]

    # -- expressions
    def ivar(self) -> str:
        return self.s.choice(("a", "b", "c"))

    def fvar(self) -> str:
        return self.s.choice(("x", "y"))

    def pred(self) -> str:
        return self.s.choice(("(a & 1)", "(b > c)", "(x > 0.0f)", f"(lane < {self.s.integer(1, 32)})",
                              "((a ^ lane) & 2)", "(y < x)", "(c % 3 == 0)"))

    def lane_cond(self) -> tuple[str, int]:
        k = self.s.integer(1, 32)
        m = self.s.choice((1, 2, 3, 4, 8, 16, 5))
        r = self.s.integer(0, 3)
        return self.s.choice((
            (f"lane < {k}", _lane_set(lambda l: l < k)),
            (f"lane >= {k}", _lane_set(lambda l: l >= k)),
            (f"(lane & {m}) == 0", _lane_set(lambda l: (l & m) == 0)),
            (f"(lane & {m}) != 0", _lane_set(lambda l: (l & m) != 0)),
            (f"lane % 3 == {r}", _lane_set(lambda l: l % 3 == r)),
            (f"lane == {k}", _lane_set(lambda l: l == k)),
            (f"((lane >> 2) & 1) == {r & 1}", _lane_set(lambda l: ((l >> 2) & 1) == (r & 1))),
        ))

    # -- statements
    def int_arith(self, ctx: _Ctx) -> None:
        v, w = self.ivar(), self.ivar()
        e = self.s.choice((f"{v} + {w}", f"{v} - {w}", f"{v} * {w}", f"{v} ^ {w}", f"{v} & {w}", f"{v} | {w}",
                           f"{v} << ({w} & 31)", f"{v} >> ({w} & 31)", f"(int)((unsigned){v} >> ({w} & 31))",
                           f"min({v}, {w})", f"max({v}, {w})", f"__popc({v})", f"__clz({v})", f"__ffs({v})",
                           f"(int)__brev((unsigned){v})", f"abs({v})", f"{v} / {self.s.choice((3, 5, 7, -3, 16))}",
                           f"{v} % {self.s.choice((3, 5, 7, 16))}", f"{v} + lane", f"{v} * {self.s.integer(-9, 10)} + {w}"))
        self.emit(f"{self.ivar()} = {e};")

    def float_arith(self, ctx: _Ctx) -> None:
        b = self.fbound
        opts = [(2 * b, "{u} + {v}"), (2 * b, "{u} - {v}"), (b, "fminf({u}, {v})"), (b, "fmaxf({u}, {v})"),
                (b, "fabsf({u})"), (max(b, 256.0), "(float)(a & 1023) * 0.25f"), (max(b * 0.5, 1.0), "{u} * 0.5f"),
                (max(b, 4096.0), "(float)(b % 4096)")]
        if b * b + b < F_LIMIT:
            opts += [(b * b, "{u} * {v}"), (b * b + b, "fmaf({u}, {v}, {w})"), (b * b + b, "{u} * {v} + {w}")]
        nb, e = self.s.choice(opts)
        if "fmaf" in e:
            self.features.add("fma")
        self.fbound = max(self.fbound, nb)
        self.emit(f"{self.fvar()} = " + e.format(u=self.fvar(), v=self.fvar(), w=self.fvar()) + ";")

    def double_arith(self, ctx: _Ctx) -> None:
        b = self.dbound
        opts = [(2 * b + self.fbound, "d + (double){u}"), (b, "fmin(d, (double){u})"), (2 * b, "d - d * 0.5")]
        if b * self.fbound + b < F_LIMIT:
            opts.append((b * self.fbound + b, "d * (double){u} + d"))
        nb, e = self.s.choice(opts)
        self.dbound = max(self.dbound, nb)
        self.emit("d = " + e.format(u=self.fvar()) + ";")
        self.features.add("double")

    def shuffle(self, ctx: _Ctx) -> None:
        mode = self.s.choice(("", "_up", "_down", "_xor"))
        kind = self.pick([(5, "int"), (3, "float"), (1, "double" if "double" in self.features else "int")])
        var = {"int": self.ivar(), "float": self.fvar(), "double": "d"}[kind]
        r = self.s.integer(0, 10)
        if r < 5:
            arg = str(self.s.integer(0, 32))
        elif r < 6:
            arg = str(self.s.integer(32, 64))          # PTX uses b[4:0]
        elif r < 7 and mode == "":
            arg = str(self.s.integer(-40, 0))
        else:
            arg = self.s.choice(("(b & 31)", "(lane ^ 3)", f"((lane + {self.s.integer(1, 32)}) & 31)", "(c & 63)",
                                 "(31 - lane)", "(lane / 2)"))
        width = self.s.choice(("", ", 32", ", 16", ", 8", ", 4", ", 2", ", 1"))
        self.features.add(f"shfl{mode or '_idx'}")
        self.emit(f"{var} = __shfl{mode}_sync({ctx.mask}, {var}, {arg}{width});")
        if ctx.lanes is not None and ctx.lanes != FULL or ctx.lanes is None:
            self.intent.add("undefined_read")   # some source lanes may be outside the mask

    def vote(self, ctx: _Ctx) -> None:
        p = self.pred()
        self.features.add("vote")
        self.emit(self.s.choice((f"a = __ballot_sync({ctx.mask}, {p});", f"b += __any_sync({ctx.mask}, {p});",
                                 f"c ^= __all_sync({ctx.mask}, {p});",
                                 f"a = __popc(__ballot_sync({ctx.mask}, {p})) + a;")))

    def match(self, ctx: _Ctx) -> None:
        self.features.add("match")
        if self.s.chance(0.5):
            self.emit(f"a = __match_any_sync({ctx.mask}, {self.s.choice(('b & 7', 'c & 1', 'x', 'lane / 4'))});")
        else:
            p = self.fresh("p")
            self.emit(f"{{ int {p}; b = __match_all_sync({ctx.mask}, {self.s.choice(('a & 1', 'lane & 0', 'c'))}, &{p}); "
                      f"c += {p}; }}")

    def redux(self, ctx: _Ctx) -> None:
        self.features.add("redux")
        op = self.s.choice(("add", "min", "max", "and", "or", "xor"))
        v = self.ivar()
        arg = f"(unsigned){v}" if op in ("and", "or", "xor") else v
        self.emit(f"{self.ivar()} = (int)__reduce_{op}_sync({ctx.mask}, {arg});")

    def syncwarp(self, ctx: _Ctx) -> None:
        self.features.add("syncwarp")
        self.emit(f"__syncwarp({ctx.mask});")

    def warp_special(self, ctx: _Ctx) -> None:
        r = self.s.integer(0, 3)
        if r == 0:
            self.features.add("laneid")
            v = self.fresh("l")
            self.emit(f'{{ unsigned {v}; asm volatile("mov.u32 %0, %%laneid;" : "=r"({v})); a += (int){v}; }}')
        elif r == 1:
            self.features.add("lanemask_lt")
            v = self.fresh("lm")
            self.emit(f'{{ unsigned {v}; asm("mov.u32 %0, %%lanemask_lt;" : "=r"({v})); '
                      f"b += __popc({v} & __ballot_sync({ctx.mask}, a & 1)); }}")
        else:
            self.features.add("activemask")
            self.emit("c ^= (int)__activemask();")

    def lane_branch(self, ctx: _Ctx) -> None:
        cond, set_ = self.lane_cond()
        self.features.add("divergent_branch")

        def sub(s: int, cexpr: str) -> _Ctx:
            if ctx.lanes is None:
                return _Ctx(f"({ctx.mask} & {_hex(s)})", None, False, ctx.sync, ctx.depth + 1)
            lanes = ctx.lanes & s
            return _Ctx(_hex(lanes), lanes, False, ctx.sync and lanes != 0, ctx.depth + 1)

        self.emit(f"if ({cond}) {{")
        self.block(sub(set_, cond), self.s.integer(1, 3))
        if self.s.chance(0.6):
            self.emit("} else {")
            self.block(sub(~set_ & FULL, cond), self.s.integer(1, 3))
        self.emit("}")

    def data_branch(self, ctx: _Ctx) -> None:
        if not ctx.sync:
            return self.int_arith(ctx)
        p, m = self.fresh("p"), self.fresh("m")
        self.features.add("data_branch")
        self.emit("{")
        self.ind += 1
        self.emit(f"const bool {p} = {self.pred()};")
        self.emit(f"const unsigned {m} = __ballot_sync({ctx.mask}, {p});")
        self.emit(f"if ({p}) {{")
        self.block(_Ctx(m, None, False, True, ctx.depth + 1), self.s.integer(1, 3))
        if self.s.chance(0.5):
            self.emit("} else {")
            self.block(_Ctx(f"({ctx.mask} & ~{m})", None, False, True, ctx.depth + 1), self.s.integer(1, 2))
        self.emit("}")
        self.ind -= 1
        self.emit("}")

    def uniform_branch(self, ctx: _Ctx) -> None:
        self.features.add("uniform_branch")
        cond = self.s.choice(("iin[0] & 1", "blockIdx.x == 0", "(iin[1] & 3) != 2", "gridDim.x > 1"))
        self.emit(f"if ({cond}) {{")
        self.block(_Ctx(ctx.mask, ctx.lanes, ctx.uniform, ctx.sync, ctx.depth + 1), self.s.integer(1, 3))
        if self.s.chance(0.5):
            self.emit("} else {")
            self.block(_Ctx(ctx.mask, ctx.lanes, ctx.uniform, ctx.sync, ctx.depth + 1), self.s.integer(1, 2))
        self.emit("}")

    def trip_loop(self, ctx: _Ctx) -> None:
        i = self.fresh("i")
        self.features.add("per_lane_loop")
        trip = self.s.choice((f"((lane * 5 + {self.s.integer(0, 8)}) & 3)", "(b & 3)", "((a & 1) + (lane & 1))",
                              "(lane % 4)"))
        self.emit(f"for (int {i} = 0; {i} < {trip}; ++{i}) {{")
        inner = _Ctx(ctx.mask, ctx.lanes, False, False, ctx.depth + 1)
        self.block(inner, self.s.integer(1, 2))
        self.emit("}")
        if ctx.sync:    # the warp-synchronous call after a loop whose lanes leave at different times
            self.pick([(3, self.shuffle), (1, self.vote), (1, self.redux), (1, self.syncwarp)])(ctx)

    def uniform_loop(self, ctx: _Ctx) -> None:
        i = self.fresh("i")
        self.features.add("uniform_loop")
        self.emit(f"for (int {i} = 0; {i} < 2; ++{i}) {{")
        self.block(_Ctx(ctx.mask, ctx.lanes, ctx.uniform, ctx.sync, ctx.depth + 1), self.s.integer(1, 3))
        self.emit("}")

    def shared_block(self, ctx: _Ctx) -> None:
        """A phase through shared memory between two __syncthreads (block-uniform code only)."""
        nt = self.nt
        self.features.add("shared_barrier")
        perm = self.s.choice((f"(tid + {self.s.integer(1, nt + 1)}) % {nt}", f"{nt - 1} - tid", f"(tid * 3) % {nt}",
                              "tid / 2", f"(tid + 32) % {nt}"))
        r = self.s.integer(0, 9)
        if r <= 2:
            self.emit(f"sI[tid] = {self.ivar()};")
            self.emit("__syncthreads();")
            self.emit(f"{self.ivar()} += sI[{perm}];")
            self.emit("__syncthreads();")
        elif r == 3:
            cond, _ = self.lane_cond()
            self.emit(f"if ({cond}) sI[{self.ntp} + tid] = {self.ivar()};")
            self.emit("__syncthreads();")
            self.emit(f"{self.ivar()} ^= sI[{self.ntp} + ({perm})];")
            self.emit("__syncthreads();")
            self.intent.add("uninitialized")
        elif r == 4 and self.fbound * 2 < F_LIMIT:
            self.emit(f"sF[tid] = {self.fvar()};")
            self.emit("__syncthreads();")
            self.emit(f"{self.fvar()} = {self.fvar()} + sF[{perm}];")
            self.emit("__syncthreads();")
            self.fbound *= 2
        elif r == 5:
            st = self.fresh("s")
            self.features.add("block_tree")
            self.emit(f"sI[tid] = {self.ivar()};")
            self.emit("__syncthreads();")
            self.emit(f"for (int {st} = {self.ntp2 // 2}; {st} > 0; {st} >>= 1) {{")
            self.emit(f"    if (tid < {st} && tid + {st} < {nt}) sI[tid] += sI[tid + {st}];")
            self.emit("    __syncthreads();")
            self.emit("}")
            self.emit(f"{self.ivar()} += sI[0];")
            self.emit("__syncthreads();")
        elif r == 6:
            slot = f"sI[{2 * self.ntp + self.s.integer(0, 8)}]"
            op = self.s.choice(("atomicAdd", "atomicMax", "atomicOr", "atomicXor", "atomicMin"))
            self.features.add("shared_atomic")
            self.emit(f"if (tid == 0) {slot} = {self.s.integer(-5, 5)};")
            self.emit("__syncthreads();")
            guard, _ = self.lane_cond()
            self.emit(f"if ({guard}) {op}(&{slot}, {self.ivar()} & 255);")
            self.emit("__syncthreads();")
            self.emit(f"{self.ivar()} ^= {slot};")
            self.emit("__syncthreads();")
        elif r == 7 and self.s.chance(0.25):
            self.intent.add("race")
            self.features.add("shared_race")
            k = self.s.choice(("missing_barrier", "write_write", "warp"))
            if k == "missing_barrier":
                self.emit(f"sI[tid] = {self.ivar()};")
                self.emit(f"{self.ivar()} += sI[{perm}];   // RACE on purpose: no barrier between")
                self.emit("__syncthreads();")
            elif k == "write_write":
                self.emit(f"sI[{self.s.integer(0, nt)}] = {self.ivar()};   // RACE on purpose: every thread writes")
                self.emit("__syncthreads();")
                self.emit(f"{self.ivar()} += sI[{self.s.integer(0, nt)}];")
                self.emit("__syncthreads();")
            else:
                self.emit(f"sI[tid] = {self.ivar()};")
                self.emit(f"{self.ivar()} += sI[tid ^ 1];   // RACE on purpose: no __syncwarp")
                self.emit("__syncthreads();")
        else:
            self.shared_warp(ctx)

    def shared_warp(self, ctx: _Ctx) -> None:
        """Lanes of one warp exchange through shared memory, ordered by __syncwarp(mask)."""
        if not ctx.sync:
            return self.int_arith(ctx)
        self.features.add("shared_syncwarp")
        if ctx.lanes is not None and self.s.chance(0.3):
            # __syncwarp() on each side of a branch, both naming every lane here: they match (sm_70+)
            self.features.add("syncwarp_both_sides")
            odd = ctx.lanes & 0xAAAAAAAA
            self.emit("if (lane & 1) {")
            self.emit(f"    sI[tid] = a; __syncwarp({ctx.mask}); b += sI[tid ^ 1];")
            self.emit("} else {")
            self.emit(f"    sI[tid] = b; __syncwarp({ctx.mask}); a += sI[tid ^ 1];")
            self.emit("}")
            self.emit(f"__syncwarp({ctx.mask});")
            if odd != ((ctx.lanes & 0x55555555) << 1):
                self.intent.add("uninitialized")
            return
        off = self.s.integer(1, 32)
        self.emit(f"sI[tid] = {self.ivar()};")
        self.emit(f"__syncwarp({ctx.mask});")
        self.emit(f"{self.ivar()} += sI[(tid & ~31) | ((lane + {off}) & 31)];")
        self.emit(f"__syncwarp({ctx.mask});")
        if ctx.lanes != FULL:
            self.intent.add("uninitialized")

    def atomic_global(self, ctx: _Ctx) -> None:
        self.features.add("global_atomic")
        r = self.s.integer(0, 8)
        if r < len(_INT_ATOMICS):
            fn, slot, operand = _INT_ATOMICS[r]
            call = f"{fn}(&iout[{self.lay['int_atomics']} + {slot}], {operand});"
            self.emit(call.format(*(self.ivar() for _ in range(call.count("{}")))))   # each {} its own draw
        else:
            self.features.add("float_atomic")
            self.emit(f"atomicAdd(&fout[{self.lay['float_exact']} + (lane & 3)], (float)({self.ivar()} & 15));")

    def first(self, feature: str) -> bool:
        """Add ``feature``; False when the program has it already (one ticket draw and one
        free-order float sum at most: later draws of them are plain global atomics)."""
        new = feature not in self.features
        self.features.add(feature)
        return new

    def ticket(self, ctx: _Ctx) -> None:
        if not self.first("ticket"):
            return self.atomic_global(ctx)
        self.emit(f"iout[{self.lay['tickets']} + gid] = atomicAdd(&iout[{self.lay['ticket_counter']}], 1);")

    def float_free(self, ctx: _Ctx) -> None:
        if not self.first("float_atomic_order"):
            return self.atomic_global(ctx)
        t = self.fresh("t")
        self.emit(f"{{ const float {t} = {self.fvar()}; fout[{self.lay['float_terms']} + gid] = {t}; "
                  f"atomicAdd(&fout[{self.lay['float_free']}], {t}); }}")

    def statement(self, ctx: _Ctx) -> None:
        self.statements += 1
        top = ctx.depth == 0
        choices: list[tuple[float, Callable[[_Ctx], None]]] = [(6, self.int_arith), (4, self.float_arith),
                                                              (2, self.atomic_global)]
        if "double" in self.features:
            choices.append((1, self.double_arith))
        if ctx.sync:
            choices += [(7, self.shuffle), (3, self.vote), (1, self.match), (2, self.redux), (1, self.syncwarp),
                        (0.6, self.warp_special), (2, self.shared_warp)]
        if ctx.depth < 2:
            choices += [(3, self.lane_branch), (2, self.data_branch), (2, self.trip_loop)]
            if ctx.sync:
                choices.append((1, self.uniform_loop))
        if ctx.depth < 1:
            choices.append((1, self.uniform_branch))
        if ctx.uniform:
            choices.append((4, self.shared_block))
        if top:
            choices += [(0.5, self.ticket), (0.5, self.float_free)]
        self.pick(choices)(ctx)

    def block(self, ctx: _Ctx, n: int) -> None:
        self.ind += 1
        for _ in range(n):
            self.statement(ctx)
        self.ind -= 1

    # -- the whole kernel
    def program(self) -> Program:
        s = self.s
        shape = s.choice(((32, 1), (32, 1), (32, 1), (64, 1), (64, 1), (96, 1), (128, 1), (48, 1), (40, 1), (100, 1),
                          (20, 1), (16, 2), (8, 8), (48, 2), (32, 3), (10, 10)))
        small = shape[0] * shape[1] <= 64
        grid = s.choice(((1, 1), (1, 1), (1, 1), (2, 1), (3, 1), (2, 2)) if small else ((1, 1), (1, 1), (2, 1)))
        self.nt = shape[0] * shape[1]
        self.ntp = -(-self.nt // 32) * 32          # threads rounded up to whole warps
        self.ntp2 = 1 << (self.nt - 1).bit_length()  # ... and to a power of two (the tree)
        threads = self.nt * grid[0] * grid[1]
        self.lay = layout(threads)
        dynamic = s.chance(0.2)
        if s.chance(0.25):
            self.features.add("double")
        head = [f'extern "C" __global__ void {self.name}(const int* __restrict__ iin, const float* __restrict__ fin, '
                "int* iout, float* fout) {"]
        shared_words = 2 * self.ntp + 8
        if dynamic:
            self.features.add("dynamic_shared")
            self.lines += ["    extern __shared__ int sI[];", f"    float* sF = reinterpret_cast<float*>(sI + {shared_words});"]
        else:
            self.lines += [f"    __shared__ int sI[{shared_words}];", f"    __shared__ float sF[{self.ntp}];"]
        self.lines += [
            "    const int tid = threadIdx.y * blockDim.x + threadIdx.x;",
            "    const int lane = tid & 31;",
            "    const int gid = (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y) + tid;",
            "    int a = iin[4 * gid], b = iin[4 * gid + 1], c = iin[4 * gid + 2];",
            "    float x = fin[4 * gid], y = fin[4 * gid + 1];",
        ]
        if "double" in self.features:
            self.lines.append("    double d = (double)fin[4 * gid + 2];")
        ctx = _Ctx("0xffffffffu", FULL, True)
        if s.chance(0.15):
            cond = s.choice(("lane >= 24", "(lane % 7) == 3", "iin[4 * gid + 3] % 5 == 0", f"gid >= {threads - 13}",
                             "(lane & 8) != 0"))
            self.emit(f"if ({cond}) return;   // these lanes exit: reading them is undefined")
            self.features.add("early_exit")
            self.intent.add("exited_read")
            ctx = _Ctx("0xffffffffu", FULL, False)
        n = s.integer(4, 10)
        for _ in range(n):
            self.statement(ctx)
        if self.nt % 32 and self.features & {"shfl_idx", "shfl_up", "shfl_down", "shfl_xor"}:
            self.intent.add("undefined_read")   # the tail warp names lanes that do not exist
        self.emit(f"iout[{KI} * gid] = a; iout[{KI} * gid + 1] = b; iout[{KI} * gid + 2] = c;")
        if "double" in self.features:
            self.emit(f"iout[{KI} * gid + 3] = __double2hiint(d) ^ __double2loint(d);")
        else:
            self.emit(f"iout[{KI} * gid + 3] = __float_as_int(x) ^ a;")
        self.emit(f"fout[{KF} * gid] = x; fout[{KF} * gid + 1] = y;")
        if ctx.uniform and s.chance(0.012):
            k = s.integer(1, 32)
            self.emit(f"if (lane < {k}) __syncthreads();   // BARRIER ON PURPOSE reached by part of a warp")
            self.intent.add("divergent_barrier")
        if s.chance(0.01):
            self.emit(f"iout[{KI} * (({threads} - 1) - gid / 2) + 3] = gid;   // RACE on purpose: two threads, one word")
            self.intent.add("global_race")
        source = "\n".join(head + self.lines + ["}", ""])
        return Program(self.name, 0, source, (grid[0], grid[1], 1), (shape[0], shape[1], 1),
                       shared_words * 4 + self.ntp * 4 if dynamic else 0,
                       tuple(sorted(self.features)), tuple(sorted(self.intent)))


def program(index: int, base_seed: int = 20261201) -> Program:
    """Generated program number ``index`` (deterministic)."""
    seed = zlib.crc32(f"program#{index}".encode()) ^ (base_seed & 0xFFFFFFFF)
    name = f"prog_{index:05d}"
    p = _Gen(name, seed).program()
    return Program(p.name, seed, p.source, p.grid, p.block, p.shared_mem, p.features, p.intent)


def modules(n_programs: int = PROGRAMS, per_module: int = PER_MODULE, base_seed: int = 20261201) -> list[Module]:
    """``n_programs`` programs in modules of ``per_module`` (names ``progmod_NNN``)."""
    progs = [program(i, base_seed) for i in range(n_programs)]
    return [Module(f"progmod_{k // per_module:03d}", tuple(progs[k:k + per_module]))
            for k in range(0, n_programs, per_module)]


def compile_module(module: Module, arch: str = "compute_90") -> tuple[str, str]:
    """(PTX, NVRTC log) of ``module`` through :mod:`helpers.engine.nvrtc`, with :data:`OPTIONS`."""
    from helpers.engine import nvrtc

    c = nvrtc.compile(module.source, filename=f"{module.name}.cu", options=(f"-arch={arch}", *OPTIONS))
    return c.ptx, c.log


def float_sum_bound(terms: np.ndarray) -> tuple[float, float]:
    """(exact sum, bound): any float32 sum of ``terms`` in any order (starting from 0) lies within
    ``bound`` of the exact sum: ``(k - 1) * u * sum |t|`` with u = 2^-24 (Higham, "Accuracy and
    Stability of Numerical Algorithms", 2nd ed., eq. 4.4), plus the final rounding."""
    t = np.asarray(terms, np.float64)
    k = max(len(t), 1)
    mag = float(np.abs(t).sum())
    return float(t.sum()), (k + 1) * 2.0**-24 * mag + 2.0**-149
