"""Where a kernel's variables and parameters live, the fresh memory of one launch, special registers
and the addresses decoded ops read.

Global variables follow the argument arrays (one segment each, :mod:`helpers.machine.memory`);
parameters, constants, static then dynamic (``extern``) shared memory and local variables are laid
out with natural alignment. Special registers (PTX ISA, "Special Registers") are computed per thread
from the launch shape.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from helpers.machine import decode as dec
from helpers.machine import memory as mem
from helpers.machine.ptx import Addr, Function, Reg, Sym
from helpers.machine.registers import Affine


_SPECIALS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%gridid", "%nsmid",
             "%dynamic_smem_size", "%total_smem_size")


_LANEMASKS = ("eq", "lt", "le", "gt", "ge")


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _init_bytes(v) -> np.ndarray:
    dt = dec.NP.get(v.type, np.uint8)
    vals = [dec.imm_value(x, v.type if v.type in dec.NP else "b8") for x in v.init]
    arr = np.zeros(v.count or 1, dt)
    arr[:len(vals)] = vals
    return arr.view(np.uint8)[:v.size]


def _param_bytes(i: int, p, a, alloc) -> bytes:
    size = p.size
    if alloc is not None:
        if size != 8:
            raise ValueError(f"args[{i}]: a NumPy array is passed as a pointer, but kernel parameter {i} is a "
                             f"{size}-byte .{p.type}")
        return int(alloc.base).to_bytes(8, "little")
    if p.count is not None or p.type == "b8":
        b = a.tobytes() if hasattr(a, "tobytes") else bytes(a)
        if len(b) != size:
            raise ValueError(f"args[{i}]: kernel parameter {i} is a {size}-byte aggregate; got {len(b)} bytes")
        return b
    t = p.type
    dt = np.dtype(dec.NP[t])
    if isinstance(a, np.generic):
        if a.dtype.itemsize != size or (a.dtype.kind == "f") != (dt.kind == "f"):
            raise ValueError(f"args[{i}]: kernel parameter {i} is .{t} ({size} bytes); got NumPy {a.dtype} "
                             f"({a.dtype.itemsize} bytes). Pass np.{'float32' if t == 'f32' else dt.name}(...)")
        return a.tobytes()
    if isinstance(a, (bool, int)) and dt.kind in "ui":
        lo, hi = (-(1 << (8 * size - 1)), (1 << (8 * size)) - 1)
        if not lo <= int(a) <= hi:
            raise ValueError(f"args[{i}]: {a} does not fit kernel parameter {i} (.{t}, {size} bytes)")
        return (int(a) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    if isinstance(a, float) and dt.kind == "f":
        return dt.type(a).tobytes()
    raise ValueError(f"args[{i}] must be a NumPy array (a device buffer) or a NumPy scalar matching kernel "
                     f"parameter {i} (.{t}); got {type(a).__name__}")


def _referenced(fn: Function) -> set:
    """The variable names a function's instructions mention."""
    names = getattr(fn, "_symbols", None)
    if names is None:
        names = set()
        for ins in fn.instrs:
            for o in ins.operands:
                if isinstance(o, Sym):
                    names.add(o.name)
                elif isinstance(o, Addr) and o.base is not None and not o.base_is_reg:
                    names.add(o.base)
        fn._symbols = names  # type: ignore[attr-defined]
    return names


class Layout:
    """The part of :class:`helpers.machine.executor.Launch` that lays memory out and serves decoded ops
    (special registers, symbol addresses, address operands). It owns ``syms``, the spaces
    (``gspace``, ``sspace``, ``lspace``, ``pspace``, ``cspace``) and the global layout ``glayout``."""

    def static_layout(self) -> None:
        """Where every variable and parameter lives (the same for every launch of the function)."""
        fn, module = self.fn, self.module
        self.syms: dict[str, tuple[str, int]] = {}
        n_arrays = sum(self.arrays)
        used = _referenced(fn)
        self.global_vars = [v for v in module.vars if v.space == "global" and v.name in used]
        for j, v in enumerate(self.global_vars):
            self.syms[v.name] = ("global", (mem.GLOBAL_SEG0 + n_arrays + j) << mem.SEG_SHIFT)
        off = 0
        for p in fn.params:
            off = _align(off, p.align)
            self.syms[p.name] = ("param", off)
            off += p.size
        self.param_size = off
        off = 0
        cvars = [v for v in module.vars if v.space == "const"]
        for v in cvars:
            off = _align(off, v.align)
            self.syms[v.name] = ("const", off)
            off += v.size
        self.cspace = mem.Space("const", off, defined=True, track_written=False, races=False)
        for v in cvars:
            if v.init:
                o = self.syms[v.name][1]
                self.cspace.data[o:o + v.size] = _init_bytes(v)
        # shared: static variables, then the dynamic (extern) area
        off = 0
        self.shared_vars: list[tuple[int, int, str, str]] = []
        externs = []
        for v in [*module.vars, *fn.vars]:
            if v.space != "shared":
                continue
            if v.extern or v.count == 0:
                externs.append(v)
                continue
            off = _align(off, v.align)
            self.syms[v.name] = ("shared", off)
            self.shared_vars.append((off, v.size, v.name, v.type))
            off += v.size
        dyn = _align(off, max([16] + [v.align for v in externs]))
        for v in externs:
            self.syms[v.name] = ("shared", dyn)
        self._static_shared = list(self.shared_vars)
        self._externs = externs
        self.dyn_base = dyn if externs else off
        off = 0
        for v in fn.vars:
            if v.space == "local":
                off = _align(off, v.align)
                self.syms[v.name] = ("local", off)
                off += v.size
        self.L_total = off
        self.L_stride = _align(max(off, 4), 16)

    def shared_layout(self, shared_mem: int) -> None:
        """The dynamic shared memory area of ``shared_mem`` bytes after the static variables."""
        dyn = self.dyn_base
        S_total = dyn + shared_mem
        if S_total > 228 * 1024:
            raise ValueError(f"shared_mem: {S_total} bytes of shared memory per block exceed the 227 KiB "
                             f"an sm_90 block may have")
        self.shared_vars = self._static_shared + [(dyn, shared_mem, v.name, v.type) for v in self._externs]
        self.S_total = S_total
        self.S_stride = _align(max(S_total, 4), 256)

    def fresh_memory(self, args, globals_: dict) -> None:
        """Fresh memory for one launch: the arguments' allocations, variables, parameters."""
        fn = self.fn
        gl = mem.GlobalLayout()
        self.arg_allocs: list[Optional[mem.Allocation]] = []
        self.args = args
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                if not a.flags.c_contiguous:
                    raise ValueError(f"args[{i}] must be a C-contiguous NumPy array (use np.ascontiguousarray)")
                self.arg_allocs.append(gl.add(f"argument {i}", a.nbytes, mem.array_offset(a), arg=i))
            else:
                self.arg_allocs.append(None)
        var_allocs = [(v, gl.add(v.name, v.size)) for v in self.global_vars]
        known = {v.name: v for v in self.global_vars}
        self.extra: list[tuple[str, np.ndarray, mem.Allocation]] = []
        var_bytes: dict[str, bytes] = {}
        for name, value in globals_.items():
            if name not in known:
                raise ValueError(f"globals: {name!r} is not a __device__ variable this kernel uses; "
                                 f"it uses {sorted(known) or 'none'}")
            var_bytes[name] = self._pack_global(name, value, known[name], gl)
        self.glayout = gl
        self.gspace = self._space(self.gspace, "global", gl.size, defined=True, track_written=False, races=True)
        for a, al in zip(args, self.arg_allocs):
            if al is not None and al.nbytes:
                self.gspace.data[al.start:al.start + al.nbytes] = a.reshape(-1).view(np.uint8)
        for v, al in var_allocs:
            if v.init:
                self.gspace.data[al.start:al.start + al.nbytes] = _init_bytes(v)
            if v.name in var_bytes:
                self.gspace.data[al.start:al.start + al.nbytes] = np.frombuffer(var_bytes[v.name], np.uint8)
        for _, a, al in self.extra:
            if al.nbytes:
                self.gspace.data[al.start:al.start + al.nbytes] = a.reshape(-1).view(np.uint8)
        self.gtab = gl.tables()
        pbytes = bytearray(self.param_size)
        for i, (p, a) in enumerate(zip(fn.params, args)):
            o = self.syms[p.name][1]
            pbytes[o:o + p.size] = _param_bytes(i, p, a, self.arg_allocs[i])
        self.pspace = mem.Space("param", len(pbytes), defined=True, track_written=False, races=False)
        self.pspace.data[:len(pbytes)] = np.frombuffer(bytes(pbytes), np.uint8)
        # with no shared memory every shared access is out of bounds: nothing to keep per CTA
        self.sspace = self._space(self.sspace, "shared", self.ncta * self.S_stride if self.S_total else 0,
                                  defined=False, track_written=True, races=True)
        self.lspace = self._space(self.lspace, "local", self.T * self.L_stride if self.L_total else 0, defined=False,
                                  track_written=True, races=False)

    @staticmethod
    def _space(old: Optional[mem.Space], name: str, nbytes: int, **kind) -> mem.Space:
        """A fresh space of ``nbytes``: the previous launch's reset in place when it has that size (its
        memory is already mapped: refilling it costs a fraction of allocating and faulting in new pages)."""
        if old is not None and old.size == mem.Space.rounded(nbytes):
            old.reset()
            return old
        return mem.Space(name, nbytes, **kind)

    def _pack_global(self, name: str, value, var, gl: mem.GlobalLayout) -> bytes:
        """The bytes of a __device__ variable: raw (an array or scalar of its size) or a tuple of
        struct fields laid out in C order with natural alignment, arrays becoming pointers to new
        allocations (updated in place after the launch)."""
        if isinstance(value, tuple):
            out = bytearray()
            for j, f in enumerate(value):
                if isinstance(f, np.ndarray):
                    if not f.flags.c_contiguous:
                        raise ValueError(f"globals[{name!r}][{j}] must be a C-contiguous array")
                    al = gl.add(f"{name} field {j}", f.nbytes, mem.array_offset(f))
                    self.extra.append((name, f, al))
                    b, align = int(al.base).to_bytes(8, "little"), 8
                elif isinstance(f, np.generic):
                    b, align = f.tobytes(), f.dtype.itemsize
                else:
                    raise ValueError(f"globals[{name!r}][{j}] must be a NumPy array (a pointer) or a NumPy "
                                     f"scalar; got {type(f).__name__}")
                out.extend(b"\0" * ((-len(out)) % align))
                out.extend(b)
            out.extend(b"\0" * ((-len(out)) % 8))
            data = bytes(out)
        elif isinstance(value, (np.ndarray, np.generic)):
            data = value.tobytes()
        else:
            raise ValueError(f"globals[{name!r}] must be a tuple of fields, a NumPy array or a NumPy scalar")
        if len(data) > var.size or (not isinstance(value, tuple) and len(data) != var.size):
            raise ValueError(f"globals[{name!r}] has {len(data)} bytes; the variable has {var.size}")
        return data + b"\0" * (var.size - len(data))

    @staticmethod
    def check_special(name: str) -> None:
        """Raise :class:`helpers.machine.decode.Unsupported` unless :meth:`special` knows ``name``."""
        base = name.split(".")[0]
        if base not in _SPECIALS and base[len("%lanemask_"):] not in _LANEMASKS:
            raise dec.Unsupported(f"special register {name}")

    def special(self, name: str) -> np.ndarray:
        """The values of special register ``name`` (``%tid.x``, ...) for every thread."""
        if name in self._special:
            return self._special[name]
        loc = self.arange[:self.T] % self.TPC
        bx, by, bz = self.block
        gx, gy, gz = self.grid
        cta = np.arange(self.T, dtype=np.int64) // self.TPC
        lane = np.arange(self.T, dtype=np.int64) & 31
        base = name.split(".")[0]
        comp = name.split(".")[1] if "." in name else None
        k = {"x": 0, "y": 1, "z": 2}.get(comp, 0)
        if base == "%tid":
            v = [loc % bx, (loc // bx) % by, loc // (bx * by)][k]
        elif base == "%ntid":
            v = np.full(self.T, self.block[k])
        elif base == "%ctaid":
            v = [cta % gx, (cta // gx) % gy, cta // (gx * gy)][k]
        elif base == "%nctaid":
            v = np.full(self.T, self.grid[k])
        elif base == "%laneid":
            v = lane
        elif base == "%warpid":
            v = loc >> 5
        elif base == "%nwarpid":
            v = np.full(self.T, self.Wc)
        elif base.startswith("%lanemask_"):
            kind = base[len("%lanemask_"):]
            one = np.uint64(1) << lane.astype(np.uint64)
            v = {"eq": one, "lt": one - np.uint64(1), "le": (one << np.uint64(1)) - np.uint64(1),
                 "gt": ~((one << np.uint64(1)) - np.uint64(1)), "ge": ~(one - np.uint64(1))}[kind]
            v = (v & np.uint64(0xFFFFFFFF))
        elif base in ("%smid", "%gridid"):
            v = np.zeros(self.T)
        elif base == "%nsmid":
            v = np.ones(self.T)
        elif base == "%dynamic_smem_size":
            v = np.full(self.T, self.S_total - self.dyn_base)
        elif base == "%total_smem_size":
            v = np.full(self.T, self.S_total)
        else:
            raise dec.Unsupported(f"special register {name}")
        arr = np.asarray(v).astype(np.uint32)
        self._special[name] = arr
        return arr

    def special_affine(self, name: str) -> Optional[Affine]:
        """Special register ``name`` as an :class:`Affine` rule of every thread's place in the launch,
        when it is exactly one for every thread slot of this shape (those of threads a partial warp
        lacks included, so that the rule's array is :meth:`special`'s): ``%tid.x`` of a
        one-dimensional block of whole warps, ``%ctaid.x`` of a one-dimensional grid, ``%laneid`` of
        a block of at most one warp; else None."""
        if name in self._special_rules:
            return self._special_rules[name]
        rule = None
        if name == "%tid.x" and self.block[1] * self.block[2] == 1 and self.all_exist:
            rule = Affine(0, 0, 1, 32, self.ncta, self.TPC)
        elif name == "%ctaid.x" and self.grid[1] * self.grid[2] == 1:
            rule = Affine(0, 1, 0, 32, self.ncta, self.TPC)
        elif name == "%laneid" and self.TPC == 32:
            rule = Affine(0, 0, 1, 32, self.ncta, self.TPC)
        self._special_rules[name] = rule
        return rule

    def symbol_address(self, name: str) -> int:
        if name not in self.syms:
            raise dec.Unsupported(f"unknown symbol {name}")
        return self.syms[name][1]

    def window(self, space: str) -> int:
        return {"global": 0, "shared": mem.SHARED_WINDOW, "local": mem.LOCAL_WINDOW, "const": mem.CONST_WINDOW,
                "param": mem.PARAM_WINDOW}[space]

    def address_reader(self, a):
        """G -> (the addresses of an address operand as int64 (one, or one per thread of G; or, for
        every thread, an :class:`Affine` rule of 64 bits), defined)."""
        if a.base is None:
            v = np.uint64(a.offset & (2**64 - 1))
            return lambda G: (v, True)
        if a.base_is_reg:
            wide = self.regs.dtype[a.base].itemsize == 8
            r = dec.reader(self, Reg(a.base), "u64" if wide else "u32", affine=True)
            off = a.offset

            def read(G):
                v, d = r(G)
                if type(v) is Affine:
                    rule = v if wide else v.unsigned()     # a 32-bit address is zero-extended
                    if rule is not None:
                        return rule.width(64).plus(off), d
                    v = v.array()
                v = np.asarray(v)
                a = v.view(np.int64) if v.dtype == np.uint64 else v.astype(np.int64)   # the same bits
                return (a + off if off else a), d
            return read
        v = np.int64(self.symbol_address(a.base) + a.offset)
        return lambda G: (v, True)
