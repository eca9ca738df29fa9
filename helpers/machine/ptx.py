"""Parsing PTX text into functions, variables, instructions and source locations.

Covers the module structure NVRTC emits (PTX ISA chapter 11 "Directives": ``.version``, ``.target``,
``.address_size``, ``.file``, ``.loc``, ``.entry``/``.func``, ``.param``, ``.reg``, ``.global``,
``.shared``, ``.const``, ``.local``, ``.extern .shared``, ``.maxntid``, ``.pragma``, ``.section``), and
the instruction statement syntax of PTX ISA section 4 "Syntax" / 5 "State Spaces, Types, and
Variables" (guard predicates ``@%p``/``@!%p``, vector operands ``{a, b}``, ``d|p`` destination pairs,
addresses ``[reg+imm]``, ``[var+imm]``, ``.loc file line col, function_name ..., inlined_at ...``).

Nothing here executes anything: :mod:`helpers.machine.decode` turns :class:`Instr` into operations.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional, Union

# -- Operands -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reg:
    """A register operand (``%r1``), or a special register (``%tid.x``): ``special`` is then True."""
    name: str
    special: bool = False
    negate: bool = False  # ``!%p`` as a predicate source operand


@dataclass(frozen=True)
class Imm:
    """An immediate, already converted: ``int`` for integer literals, ``('f32'|'f64', bits)`` for
    hex float literals (``0f3F800000``), ``float`` for decimal float literals."""
    value: Union[int, float, tuple]


@dataclass(frozen=True)
class Sym:
    """A variable or label name used as an operand (``mov.u64 %rd1, smem;`` or ``bra $L__BB0_2;``)."""
    name: str


@dataclass(frozen=True)
class Addr:
    """``[base+offset]``: base is a register name, a variable name, or None (an absolute address)."""
    base: Optional[str]
    offset: int
    base_is_reg: bool


@dataclass(frozen=True)
class Vec:
    """``{a, b, ...}``: a vector of operands (``_`` sink elements are Sym('_'))."""
    items: tuple


@dataclass(frozen=True)
class Pair:
    """``d|p``: a destination register and a predicate destination."""
    first: Reg
    second: Reg


Operand = Union[Reg, Imm, Sym, Addr, Vec, Pair]

# -- Program structure ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Loc:
    """Where an instruction comes from: ``.loc file line col`` (PTX ISA 11.5.2 ".loc")."""
    file: str
    line: int
    column: int
    function: Optional[str] = None
    inlined_at: Optional["Loc"] = None

    def short(self) -> str:
        name = self.file.rsplit("/", 1)[-1]
        s = f"{name}:{self.line}" if self.line else f"{name} (no single source line)"
        if self.inlined_at is not None:
            s += f" (inlined into {self.inlined_at.short()})"
        return s


@dataclass
class Instr:
    """One instruction: ``[@[!]guard] opcode.mod.mod operands;``."""
    index: int
    opcode: str
    mods: tuple[str, ...]
    operands: tuple
    text: str
    guard: Optional[str] = None
    guard_negated: bool = False
    loc: Optional[Loc] = None

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode, *self.mods))


@dataclass
class Var:
    """A variable: ``.space .align A .type name[count] = {init}`` (PTX ISA 5.4 "Variables")."""
    space: str
    name: str
    type: str
    align: int
    count: Optional[int]  # None: a scalar; 0: ``name[]`` (extern, dynamic shared memory)
    init: Optional[list] = None
    extern: bool = False

    @property
    def elem_size(self) -> int:
        return type_size(self.type)

    @property
    def size(self) -> int:
        return self.elem_size * (1 if self.count is None else self.count)


@dataclass
class Param:
    name: str
    type: str
    align: int
    count: Optional[int]

    @property
    def size(self) -> int:
        return type_size(self.type) * (1 if self.count is None else self.count)


@dataclass
class Function:
    name: str
    is_entry: bool
    params: list[Param] = field(default_factory=list)
    regs: dict[str, str] = field(default_factory=dict)   # name -> declared type
    vars: list[Var] = field(default_factory=list)        # function-scope .shared/.local
    instrs: list[Instr] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    maxntid: Optional[tuple[int, ...]] = None
    reqntid: Optional[tuple[int, ...]] = None


class Functions(Mapping):
    """The module's functions by name, each parsed the first time it is asked for."""

    def __init__(self, module: "Module") -> None:
        self._module = module
        self._text: dict[str, str] = {}
        self._done: dict[str, Function] = {}
        self.is_entry: dict[str, bool] = {}

    def add_text(self, name: str, is_entry: bool, text: str) -> None:
        self._text[name] = text
        self.is_entry[name] = is_entry

    def __getitem__(self, name: str) -> Function:
        fn = self._done.get(name)
        if fn is None:
            if name not in self._text:
                raise KeyError(name)
            fn = _parse_function(self._text[name], self._module)
            self._done[name] = fn
        return fn

    def __iter__(self):
        return iter(self._text)

    def __len__(self) -> int:
        return len(self._text)


@dataclass
class Module:
    version: str = ""
    target: str = ""
    address_size: int = 64
    files: dict[int, str] = field(default_factory=dict)
    vars: list[Var] = field(default_factory=list)
    strings: dict[str, str] = field(default_factory=dict)  # $L__info_string labels -> text

    def __post_init__(self) -> None:
        self.functions = Functions(self)


class PtxSyntaxError(ValueError):
    """The PTX text could not be parsed; the message quotes the statement."""


_TYPE_SIZES = {"b8": 1, "s8": 1, "u8": 1, "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
               "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
               "b64": 8, "s64": 8, "u64": 8, "f64": 8, "pred": 1, "b128": 16}


def type_size(t: str) -> int:
    """Size in bytes of a PTX fundamental type (PTX ISA 5.2 "Types")."""
    try:
        return _TYPE_SIZES[t]
    except KeyError:
        raise PtxSyntaxError(f"unknown PTX type .{t}") from None


# -- Lexing ---------------------------------------------------------------------------------------

_LINE_DIRECTIVES = (".loc\t", ".loc ", ".file\t", ".file ", ".version", ".target", ".address_size")
_FUNC_HEAD = re.compile(r"^\s*(\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\b")
_LABEL = re.compile(r"^\s*([\$A-Za-z_][\w\$]*)\s*:")
_REG_DECL = re.compile(r"^\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.+)$", re.S)
_RANGE = re.compile(r"^(%?[\w\$]+)<(\d+)>$")


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _items(text: str):
    """Yield ('dir', text) | ('stmt', text) | ('open', header) | ('close', '') | ('label', name)."""
    buf: list[str] = []
    in_section = False
    for raw in _strip_comments(text).split("\n"):
        line = raw.strip()
        if not line:
            continue
        if in_section:  # debug sections: one datum per line, no ';'
            if line == "}":
                in_section = False
                yield ("close", "")
            elif line.endswith(":"):
                yield ("label", line[:-1])
            elif line != "{":
                yield ("stmt", line)
            continue
        if line.startswith(".section"):
            in_section = True
            yield ("open", line)
            continue
        if not buf or not "".join(buf).strip():
            if line.startswith(_LINE_DIRECTIVES):
                yield ("dir", line)
                continue
            if line.endswith(";") and line.count(";") == 1 and "{" not in line and "}" not in line \
                    and ":" not in line:
                yield ("stmt", line[:-1].strip())  # the common case: one statement per line
                buf = []
                continue
        i, n = 0, len(line)
        while i < n:
            ch = line[i]
            pending = "".join(buf).strip()
            if ch == ";":
                if pending:
                    yield ("stmt", pending)
                buf = []
            elif ch == "{" and (not pending or _FUNC_HEAD.match(pending) or pending.startswith(".section")):
                yield ("open", pending)
                buf = []
            elif ch == "{":
                # a vector operand or an initializer: copy up to the matching brace
                j = line.index("}", i)
                buf.append(line[i:j + 1])
                i = j
            elif ch == "}" and not pending:
                yield ("close", "")
            elif ch == ":" and not pending.startswith(".") and _LABEL.match(pending + ":"):
                yield ("label", pending)
                buf = []
            else:
                buf.append(ch)
            i += 1
        buf.append(" ")
    if "".join(buf).strip():
        yield ("stmt", "".join(buf).strip())


# -- Operands -------------------------------------------------------------------------------------

def _split_commas(s: str) -> list[str]:
    if "[" not in s and "{" not in s and "(" not in s:
        return [x.strip() for x in s.split(",") if x.strip()]
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


_INT = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*|0[bB][01]+)U?$")
_HEXF = re.compile(r"^0([fFdD])([0-9a-fA-F]+)$")
_DECF = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")


def parse_int(s: str) -> int:
    s = s.strip().rstrip("U")
    neg = s.startswith("-")
    s = s.lstrip("+-")
    if s.lower().startswith("0x"):
        v = int(s, 16)
    elif s.lower().startswith("0b"):
        v = int(s[2:], 2)
    elif len(s) > 1 and s.startswith("0"):
        v = int(s, 8)
    else:
        v = int(s)
    return -v if neg else v


def _immediate(s: str) -> Optional[Imm]:
    m = _HEXF.match(s)
    if m:
        return Imm(("f32" if m.group(1) in "fF" else "f64", int(m.group(2), 16)))
    if _INT.match(s):
        return Imm(parse_int(s))
    if _DECF.match(s):
        return Imm(float(s))
    return None


def _operand(s: str) -> Operand:
    s = s.strip()
    if s.startswith("{"):
        return Vec(tuple(_operand(x) for x in _split_commas(s[1:-1])))
    if s.startswith("["):
        inner = s[1:-1].replace(" ", "")
        m = re.match(r"^([%\$\w.]+?)?(?:([+-])(.+))?$", inner)
        if not m:
            raise PtxSyntaxError(f"cannot read the address {s!r}")
        base, sign, off = m.group(1), m.group(2), m.group(3)
        if base is not None and _immediate(base) is not None and sign is None:
            return Addr(None, parse_int(base), False)
        offset = 0 if off is None else parse_int(off) * (-1 if sign == "-" else 1)
        return Addr(base, offset, base is not None and base.startswith("%"))
    if "|" in s:
        a, b = s.split("|")
        return Pair(_reg(a), _reg(b))
    if s.startswith("!%"):
        return Reg(s[1:], negate=True)
    if s.startswith("%"):
        return _reg(s)
    imm = _immediate(s)
    if imm is not None:
        return imm
    if s.startswith("-") and _immediate(s[1:]) is not None:
        return _immediate(s)
    return Sym(s)


_SPECIAL = re.compile(r"^%(tid|ntid|ctaid|nctaid|laneid|warpid|nwarpid|smid|nsmid|gridid|lanemask_\w+|clock\w*|"
                      r"globaltimer\w*|dynamic_smem_size|total_smem_size|envreg\d+|pm\d+)(\.[xyz])?$")


def _reg(s: str) -> Reg:
    s = s.strip()
    return Reg(s, special=bool(_SPECIAL.match(s)))


# -- Statements -----------------------------------------------------------------------------------

def _parse_var(stmt: str, space_hint: Optional[str] = None) -> Var:
    init = None
    if "=" in stmt:
        stmt, rhs = stmt.split("=", 1)
        rhs = rhs.strip()
        items = _split_commas(rhs[1:-1]) if rhs.startswith("{") else [rhs]
        init = []
        for it in items:
            imm = _immediate(it.strip())
            if imm is None:
                raise PtxSyntaxError(f"unsupported initializer {it!r} in {stmt!r}")
            init.append(imm.value)
    toks = stmt.split()
    extern = False
    space, align, typ, name = space_hint, 0, None, None
    for t in toks:
        if t in (".visible", ".weak", ".common"):
            continue
        if t == ".extern":
            extern = True
        elif t in (".global", ".shared", ".const", ".local", ".param"):
            space = t[1:]
        elif t == ".align":
            continue
        elif t.isdigit() and align == 0 and typ is None:
            align = int(t)
        elif t.startswith(".v") and t[2:].isdigit():
            raise PtxSyntaxError(f"vector variables are not supported: {stmt!r}")
        elif t.startswith("."):
            typ = t[1:]
        else:
            name = t
    if space is None or typ is None or name is None:
        raise PtxSyntaxError(f"cannot read the variable declaration {stmt!r}")
    count: Optional[int] = None
    m = re.match(r"^([\w\$]+)\[(\d*)\]$", name)
    if m:
        name, count = m.group(1), (int(m.group(2)) if m.group(2) else 0)
    return Var(space, name, typ, align or type_size(typ), count, init, extern)


def _parse_params(header: str) -> list[Param]:
    m = re.search(r"\((.*)\)", header, re.S)
    if not m or not m.group(1).strip():
        return []
    out = []
    for p in _split_commas(m.group(1)):
        v = _parse_var(p, "param")
        out.append(Param(v.name, v.type, v.align, v.count))
    return out


def _parse_loc(line: str, files: dict[int, str], strings: dict[str, str]) -> Loc:
    # .loc f l c [, function_name $L__info_stringN, inlined_at f l c]
    parts = [p.strip() for p in line[len(".loc"):].split(",")]
    f, l, c = (int(x) for x in parts[0].split()[:3])
    fn, inl = None, None
    for p in parts[1:]:
        if p.startswith("function_name"):
            fn = p.split()[1]
        elif p.startswith("inlined_at"):
            f2, l2, c2 = (int(x) for x in p.split()[1:4])
            inl = Loc(files.get(f2, str(f2)), l2, c2)
    return Loc(files.get(f, str(f)), l, c, fn, inl)


_HEADER = re.compile(r"(?m)^[ \t]*(?:(?:\.visible|\.weak|\.extern)\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w\$]+)")


_BRACES = re.compile(r"[{}]")


def parse(text: str) -> Module:
    """Parse a PTX module: its directives and variables now, each function when first asked for.

    Raises :class:`PtxSyntaxError` naming the statement it cannot read.
    """
    mod = Module()
    text = _strip_comments(text)
    for m in re.finditer(r'(?m)^\s*\.file\s+(\d+)\s+"([^"]*)"', text):
        mod.files[int(m.group(1))] = m.group(2)
    rest: list[str] = []
    pos = 0
    for m in _HEADER.finditer(text):
        if m.start() < pos:
            continue
        j = m.end()
        # the parameter list, then directives, then '{' (a body) or ';' (a prototype)
        if text[j:j + 200].lstrip().startswith("("):
            j = text.index(")", j) + 1
        brace, semi = text.find("{", j), text.find(";", j)
        rest.append(text[pos:m.start()])
        if brace < 0 or (0 <= semi < brace):
            pos = (semi if semi >= 0 else len(text) - 1) + 1
            continue
        j = brace
        depth, k = 0, j
        for b in _BRACES.finditer(text, j):
            depth += 1 if b.group() == "{" else -1
            if depth == 0:
                k = b.start()
                break
        mod.functions.add_text(m.group(2), m.group(1) == "entry", text[m.start():k + 1])
        pos = k + 1
    rest.append(text[pos:])
    remainder = "".join(rest)
    sec = remainder.find(".section")
    if sec >= 0:  # debug sections: only the inlined functions' names are read, and only when needed
        mod._sections = remainder[sec:]
        remainder = remainder[:sec]
    _walk(list(_items(remainder)), mod)
    return mod


def _parse_function(text: str, mod: Module) -> Function:
    if getattr(mod, "_sections", None):
        _read_strings(list(_items(mod._sections)), mod)
        mod._sections = None
    out = _walk(list(_items(text)), mod)
    if len(out) != 1:
        raise PtxSyntaxError(f"expected one function in {text[:80]!r}")
    return out[0]


def _walk(items, mod: Module) -> list[Function]:
    """The statement loop: module directives and variables, function headers and bodies."""
    done: list[Function] = []
    raw_locs: list[tuple[Function, int, str]] = []
    fn: Optional[Function] = None
    depth = 0
    section_depth = 0
    scopes: list[dict[str, str]] = []
    scope_id = 0
    cur_loc: Optional[str] = None
    for kind, s in items:
        if section_depth:
            if kind == "open":
                section_depth += 1
            elif kind == "close":
                section_depth -= 1
            continue
        if kind == "dir":
            if s.startswith(".version"):
                mod.version = s.split()[1]
            elif s.startswith(".target"):
                mod.target = s.split(None, 1)[1]
            elif s.startswith(".address_size"):
                mod.address_size = int(s.split()[1])
            elif s.startswith((".loc\t", ".loc ")) and fn is not None:
                cur_loc = s
            continue
        if kind == "open":
            if s.startswith(".section"):
                section_depth = 1
            elif _FUNC_HEAD.match(s):
                head = re.match(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+"
                                r"(?:\([^)]*\)\s*)?([\w\$]+)", s)
                if not head:
                    raise PtxSyntaxError(f"cannot read the function header {s[:80]!r}")
                fn = Function(head.group(2), head.group(1) == "entry")
                fn.params = _parse_params(s[head.end():])
                for dname in ("maxntid", "reqntid"):
                    dm = re.search(rf"\.{dname}\s+([\d\s,]+)", s)
                    if dm:
                        setattr(fn, dname, tuple(int(x) for x in dm.group(1).replace(",", " ").split()))
                done.append(fn)
                depth = 1
                scopes = [{}]
                cur_loc = None
            elif fn is not None:
                depth += 1
                scope_id += 1
                scopes.append({"$id": str(scope_id)})
            continue
        if kind == "close":
            if fn is not None:
                depth -= 1
                scopes.pop()
                if depth == 0:
                    fn = None
            continue
        if kind == "label":
            if fn is not None:
                fn.labels[s] = len(fn.instrs)
            continue
        # statements
        if fn is None:
            if s.startswith((".global", ".const", ".shared", ".visible", ".extern", ".weak")) and \
                    not _FUNC_HEAD.match(s):
                mod.vars.append(_parse_var(s))
            continue  # .func prototypes without bodies, etc.
        if s.startswith(".reg"):
            m = _REG_DECL.match(s)
            if not m:
                raise PtxSyntaxError(f"cannot read the register declaration {s!r}")
            typ = m.group(1)
            for nm in _split_commas(m.group(2)):
                r = _RANGE.match(nm)
                names = [f"{r.group(1)}{k}" for k in range(int(r.group(2)))] if r else [nm]
                for n in names:
                    real = n if len(scopes) == 1 else f"{n}${scopes[-1]['$id']}"
                    scopes[-1][n] = real
                    fn.regs[real] = typ
            continue
        if s.startswith((".shared", ".local", ".global", ".const")):
            fn.vars.append(_parse_var(s))
            continue
        if s.startswith("."):
            continue  # .pragma, .maxnreg, ...
        instr = _parse_instr(s, len(fn.instrs), scopes)
        fn.instrs.append(instr)
        if cur_loc is not None:
            raw_locs.append((fn, instr.index, cur_loc))
    for f, idx, line in raw_locs:
        # line 0: code the compiler made from several lines (e.g. two stores merged into one)
        f.instrs[idx].loc = _parse_loc(line, mod.files, mod.strings)
    for f in done:
        for ins in f.instrs:
            if ins.loc is not None and ins.loc.function in mod.strings:
                ins.loc = Loc(ins.loc.file, ins.loc.line, ins.loc.column, mod.strings[ins.loc.function],
                              ins.loc.inlined_at)
    return done


def _read_strings(items, mod: Module) -> None:
    """The ``.debug_str`` section's ``$L__info_stringN: .b8 ...`` labels (inlined function names)."""
    inside, label, data = 0, None, []
    for kind, s in items:
        if kind == "open" and s.startswith(".section") and "debug_str" in s:
            inside = 1
            continue
        if not inside:
            continue
        if kind == "close":
            inside = 0
        elif kind == "label":
            if label is not None:
                mod.strings[label] = bytes(data).split(b"\0")[0].decode(errors="replace")
            label, data = s, []
        elif kind == "stmt" and s.startswith(".b8"):
            data += [int(x) for x in s[3:].replace(",", " ").split()]
    if label is not None:
        mod.strings[label] = bytes(data).split(b"\0")[0].decode(errors="replace")


def _rename(op: Operand, scopes: list[dict[str, str]]) -> Operand:
    def name(n: str) -> str:
        for sc in reversed(scopes):
            if n in sc:
                return sc[n]
        return n

    if isinstance(op, Reg) and not op.special:
        return Reg(name(op.name), False, op.negate)
    if isinstance(op, Pair):
        return Pair(_rename(op.first, scopes), _rename(op.second, scopes))
    if isinstance(op, Vec):
        return Vec(tuple(_rename(x, scopes) for x in op.items))
    if isinstance(op, Addr) and op.base_is_reg:
        return Addr(name(op.base), op.offset, True)
    return op


def _parse_instr(s: str, index: int, scopes: list[dict[str, str]]) -> Instr:
    text = " ".join(s.split())
    guard, neg = None, False
    body = s.strip()
    if body.startswith("@"):
        g, body = body.split(None, 1)
        neg = g.startswith("@!")
        guard = g[2:] if neg else g[1:]
        guard = _rename(Reg(guard), scopes).name
    parts = body.split(None, 1)
    opfull = parts[0]
    ops_text = parts[1] if len(parts) > 1 else ""
    pieces = opfull.split(".")
    opcode, mods = pieces[0], tuple(p for p in pieces[1:] if p)
    operands = tuple(_rename(_operand(o), scopes) for o in _split_commas(ops_text)) if ops_text.strip() else ()
    return Instr(index, opcode, mods, operands, text, guard, neg)
