"""The ``%%simt NAME [grid=G] [block=B] [args=...] [shared=BYTES]`` cell magic: compile the cell's
CUDA C and open the lane debugger (:func:`helpers.widgets.debug.debug`) on one launch of ``NAME``.

    %load_ext helpers.widgets          (or %load_ext helpers.exercises, which registers it too)
    %%simt k grid=1 block=64 args=arange(64),zeros(64)
    __global__ void k(const float* in, float* out) { ... }

``grid``/``block``: a whole number or ``(x,y)``/``(x,y,z)`` (default 1 and 32). ``args``: one item
per kernel parameter, separated by commas: ``arange(N)``, ``zeros(N)``, ``ones(N)``, ``full(N, v)``,
``random(N)`` (whole numbers in [-8, 8], seeded, so every run sees the same) for a pointer; a number
for a value parameter. The element type follows the parameter's declared type (``float``, ``int``,
``double``, ``unsigned``, ``long long``) unless given as a last word: ``zeros(32, int32)``. The text is
parsed with :mod:`ast`, never evaluated. Every problem is a message that says what to write.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Optional

import numpy as np

from helpers.widgets import base

MAX_ELEMENTS = 1 << 22          # per array: the debugger is for small launches
MAKERS = ("arange", "zeros", "ones", "full", "random")
DTYPES = {"int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64, "float32": np.float32,
          "float64": np.float64, "int": np.int32, "float": np.float32, "double": np.float64}
HOW = ("write args= as one item per kernel parameter, separated by commas and no spaces: arange(N), zeros(N), "
       "ones(N), full(N,v) or random(N) for a pointer, a number for a value; an element type as the last word "
       "if the parameter's type is a template's: zeros(32,int32)")
USAGE = "%%simt NAME [grid=G] [block=B] [args=...] [shared=BYTES], e.g. %%simt k grid=1 block=64 args=arange(64),zeros(64)"


def c_params(code: str, name: str) -> Optional[list[tuple[str, str]]]:
    """(declared type, name) of each parameter of kernel ``name`` as the source declares it; None
    when the signature cannot be read plainly."""
    m = re.search(rf"__global__[^;{{]*?\b{re.escape(name.split('<')[0])}\s*\(([^)]*)\)", code, re.S)
    if not m:
        return None
    out = []
    for p in m.group(1).split(","):
        p = p.split("=")[0].strip()
        if not p:
            continue
        words = re.findall(r"[A-Za-z_]\w*|\*", p)
        if len(words) < 2:
            return None
        out.append((" ".join(words[:-1]), words[-1]))
    return out


def _c_dtype(ctype: str) -> Optional[type]:
    words = ctype.replace("*", " ").split()
    words = [w for w in words if w not in ("const", "volatile", "__restrict__", "restrict", "signed")]
    text = " ".join(words)
    table = {"float": np.float32, "double": np.float64, "int": np.int32, "unsigned int": np.uint32,
             "unsigned": np.uint32, "long long": np.int64, "unsigned long long": np.uint64, "int32_t": np.int32,
             "uint32_t": np.uint32, "int64_t": np.int64, "uint64_t": np.uint64, "size_t": np.uint64}
    return table.get(text)


def split_words(line: str) -> list[str]:
    """The words of the magic's line, split at spaces outside parentheses."""
    words, depth, cur = [], 0, ""
    for ch in line:
        depth += ch == "("
        depth -= ch == ")"
        if ch.isspace() and depth <= 0:
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += ch
    return words + ([cur] if cur else [])


def _dims(what: str, text: str) -> tuple[int, ...]:
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        v = None
    v = (v,) if isinstance(v, int) and not isinstance(v, bool) else v
    if not isinstance(v, tuple) or not 1 <= len(v) <= 3 or not all(isinstance(x, int) and x >= 1 for x in v):
        raise ValueError(f"{what}= must be a whole number >= 1 or (x,y) / (x,y,z) with no spaces, e.g. {what}=64 "
                         f"or {what}=(32,2); got {what}={text}")
    return v


def _item(node: ast.AST, text: str, ctype: str, pname: str) -> Any:
    pointer = "*" in ctype
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool) \
            or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = ast.literal_eval(node)
        if pointer:
            raise ValueError(f"args: {pname} is a pointer ({ctype}); give it an array such as zeros({value}), "
                             f"not the number {text}")
        dt = _c_dtype(ctype) or (np.int32 if isinstance(value, int) else np.float32)
        return dt(value)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MAKERS
            and not node.keywords):
        raise ValueError(f"args: {text!r} is not understood; {HOW}")
    parts = list(node.args)
    dt = None
    if len(parts) > 1 and isinstance(parts[-1], ast.Name):
        if parts[-1].id not in DTYPES:
            raise ValueError(f"args: the element type {parts[-1].id!r} in {text!r} must be one of {', '.join(DTYPES)}")
        dt = DTYPES[parts.pop().id]
    want = 2 if node.func.id == "full" else 1
    try:
        nums = [ast.literal_eval(p) for p in parts]
    except ValueError:
        nums = None
    if nums is None or len(nums) != want or not isinstance(nums[0], int) or isinstance(nums[0], bool):
        shape = "full(N,v)" if want == 2 else f"{node.func.id}(N)"
        raise ValueError(f"args: {text!r} must be {shape} with N a whole number; {HOW}")
    n = nums[0]
    if not 1 <= n <= MAX_ELEMENTS:
        raise ValueError(f"args: {text!r}: N must be in 1..{MAX_ELEMENTS:,} (the debugger is for small launches)")
    if not pointer and ctype:
        raise ValueError(f"args: {pname} is a value ({ctype}); give it a number, not {text!r}")
    dt = dt or _c_dtype(ctype) or np.float32
    if node.func.id == "arange":
        return np.arange(n).astype(dt)
    if node.func.id == "zeros":
        return np.zeros(n, dt)
    if node.func.id == "ones":
        return np.ones(n, dt)
    if node.func.id == "full":
        return np.full(n, nums[1]).astype(dt)
    return np.random.default_rng(0).integers(-8, 9, n).astype(dt)


def parse_args(text: str, params: Optional[list[tuple[str, str]]]) -> tuple[Any, ...]:
    """``args=`` text -> the launch's arguments (see the module docstring); ValueError saying what to write."""
    try:
        tree = ast.parse(f"({text},)", mode="eval").body
    except SyntaxError:
        raise ValueError(f"args: {text!r} is not understood; {HOW}") from None
    items = tree.elts if isinstance(tree, ast.Tuple) else [tree]
    chunks = [ast.get_source_segment(f"({text},)", it) or "?" for it in items]
    if params is not None and len(items) != len(params):
        raise ValueError(f"args: the kernel takes {len(params)} parameter(s) "
                         f"({', '.join(f'{t} {n}' for t, n in params)}); got {len(items)}: {text}")
    return tuple(_item(it, chunk, params[i][0] if params else "", params[i][1] if params else f"args[{i}]")
                 for i, (it, chunk) in enumerate(zip(items, chunks)))


def suggestion(params: list[tuple[str, str]], threads: int) -> str:
    """An ``args=`` line for these parameters: arange for const pointers, zeros for the others, the
    thread count for a value."""
    out = []
    for ctype, _ in params:
        if "*" in ctype:
            out.append(f"arange({threads})" if "const" in ctype.split() else f"zeros({threads})")
        else:
            out.append(str(threads))
    return "args=" + ",".join(out)


def parse_line(line: str, code: str) -> dict[str, Any]:
    """The magic's line -> keyword arguments of :func:`helpers.widgets.debug.debug`; ValueError with
    what to write."""
    words = split_words(line)
    if not words or "=" in words[0]:
        raise ValueError(f"%%simt needs the kernel's name first: {USAGE}")
    name, grid, block, args, shared = words[0], (1,), (32,), None, 0
    for w in words[1:]:
        key, _, value = w.partition("=")
        if key == "grid":
            grid = _dims("grid", value)
        elif key == "block":
            block = _dims("block", value)
        elif key == "args":
            args = value
        elif key == "shared" and value.isdigit():
            shared = int(value)
        else:
            raise ValueError(f"%%simt does not understand {w!r}: {USAGE} (shared= is a whole number of bytes)")
    params = c_params(code, name)
    threads = int(np.prod(grid) * np.prod(block))
    if args is None:
        if params:
            raise ValueError(f"%%simt needs args= for {name}({', '.join(f'{t} {n}' for t, n in params)}): "
                             f"e.g. {suggestion(params, threads)}")
        values: tuple[Any, ...] = ()
    else:
        values = parse_args(args, params)
    return {"code": code, "name": name, "grid": grid, "block": block, "args": values, "shared_mem": shared}


def _message(text: str) -> Any:
    from IPython.display import HTML

    return HTML(base.message_html(text))


def simt(line: str, cell: str) -> None:
    """The cell magic (see the module docstring); shows the debugger or a message, never a traceback."""
    from IPython.display import display

    from helpers.widgets import debug

    try:
        kw = parse_line(line, cell)
    except ValueError as exc:
        display(_message(str(exc)))
        return
    except Exception as exc:  # the learner sees a message, never a traceback
        display(_message(f"%%simt could not read this line ({type(exc).__name__}: {exc})"))
        return
    box = debug.debug(kw.pop("code"), kw.pop("name"), kw.pop("grid"), kw.pop("block"), kw.pop("args"), **kw)
    display(box)


def register(ipython: Any) -> None:
    """Register ``%%simt`` with an IPython shell (``%load_ext helpers.widgets`` calls this)."""
    ipython.register_magic_function(simt, magic_kind="cell", magic_name="simt")
