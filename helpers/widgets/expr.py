"""Safe evaluation of the learner's predicate expressions, e.g. ``"lane % 3 == 0 and value > 5"``.

The text is parsed with :mod:`ast` and walked by a small interpreter over NumPy arrays; it is never
handed to ``eval``. Only these are allowed:

* names ``lane``, ``value``, ``warp``, ``n``; integer and float literals; ``True`` / ``False``
* arithmetic ``+ - * // % **`` (exponent in [0, 64]), unary ``+ - ~``
* bitwise ``& | ^ << >>`` (shift in [0, 63])
* comparisons ``== != < <= > >=`` (chains too), ``and`` / ``or`` / ``not``, ``x if c else y``

Evaluation is elementwise, one element per lane, with C-like meanings: ``and``/``or``/``not`` give
booleans, a boolean used in arithmetic counts as 0/1, and the right side of ``and``/``or`` (and each
branch of ``x if c else y``) only matters on the lanes where Python would evaluate it, so
``lane != 0 and 10 // lane > 2`` is fine on lane 0. Integers are 64-bit and wrap on overflow.

Anything else raises :class:`ValueError` with a message saying what is allowed.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

import numpy as np

NAMES: tuple[str, ...] = ("lane", "value", "warp", "n")
MAX_LENGTH = 300      # longer text is not a predicate anyone types; it also bounds parser recursion
MAX_EXPONENT = 64     # int64 results: anything larger only overflows (and 9**9**9 would hang Python)
MAX_SHIFT = 63

ALLOWED = ("Only lane, value, warp, n, numbers and the operators + - * // % ** & | ^ ~ << >> "
           "== != < <= > >= and/or/not (and 'x if condition else y') are allowed")

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: np.floor_divide, ast.Mod: np.mod, ast.Pow: np.power,
    ast.BitAnd: np.bitwise_and, ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor,
    ast.LShift: np.left_shift, ast.RShift: np.right_shift,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Invert: np.invert}

# Friendly names for what learners most often try, for the "found ..." part of the message.
_FOUND: dict[type, str] = {
    ast.Call: "a function call", ast.Attribute: "attribute access", ast.Subscript: "indexing",
    ast.Lambda: "lambda", ast.ListComp: "a comprehension", ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension", ast.GeneratorExp: "a comprehension", ast.NamedExpr: "':='",
    ast.List: "a list", ast.Tuple: "a tuple", ast.Dict: "a dict", ast.Set: "a set",
    ast.JoinedStr: "an f-string", ast.Starred: "'*'", ast.Await: "await", ast.Yield: "yield",
    ast.Is: "'is'", ast.IsNot: "'is not'", ast.In: "'in'", ast.NotIn: "'not in'",
    ast.Div: "'/' (use '//' for integer division)", ast.MatMult: "'@'",
}


def _refuse(what: str) -> ValueError:
    return ValueError(f"{ALLOWED}; found {what}")


def _describe(node: ast.AST, text: str) -> str:
    what = _FOUND.get(type(node), type(node).__name__)
    segment = ast.get_source_segment(text, node) if hasattr(node, "lineno") else None
    if segment and segment != what.strip("'"):
        snippet = segment if len(segment) <= 40 else segment[:37] + "..."
        return f"{what} {snippet!r}"
    return what


def parse(text: str) -> ast.Expression:
    """Parse and check ``text``; return its syntax tree. Raises ValueError naming what is not allowed."""
    if not isinstance(text, str):
        raise ValueError(f"expression must be a string; got {type(text).__name__}")
    source = text.strip()
    if not source:
        raise ValueError(f"expression is empty. {ALLOWED}, e.g. 'lane % 3 == 0 and value > 5'")
    if len(source) > MAX_LENGTH:
        raise ValueError(f"expression is too long ({len(source)} characters; at most {MAX_LENGTH})")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise ValueError(f"could not parse {source!r}{where}: {exc.msg}. {ALLOWED}") from None
    except (RecursionError, MemoryError):
        raise ValueError("expression is nested too deeply") from None
    for node in ast.walk(tree):
        _check(node, source)
    return tree


def _check(node: ast.AST, text: str) -> None:
    ok = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Name,
          ast.Constant, ast.Load, ast.And, ast.Or, ast.Not, *_BINOPS, *_CMPOPS, *_UNARY)
    if not isinstance(node, ok):
        raise _refuse(_describe(node, text))
    if isinstance(node, ast.Name) and node.id not in NAMES:
        raise _refuse(f"the name {node.id!r}")
    if isinstance(node, ast.Constant):
        v = node.value
        if not isinstance(v, (bool, int, float)):
            raise _refuse(f"the literal {v!r} (only numbers, True and False)")
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2**63:
            raise ValueError(f"the number {v} is too large (integers are 64-bit)")


class _Evaluator:
    """Evaluates a checked tree; ``need`` marks the lanes whose result matters (short-circuiting)."""

    def __init__(self, text: str, names: dict[str, np.ndarray], shape: tuple[int, ...]) -> None:
        self.text, self.names, self.shape = text, names, shape

    def run(self, node: ast.AST, need: np.ndarray) -> np.ndarray:
        method = getattr(self, "_" + type(node).__name__)
        return np.broadcast_to(method(node, need), self.shape)

    def _Expression(self, node: ast.Expression, need: np.ndarray) -> np.ndarray:
        return self.run(node.body, need)

    def _Constant(self, node: ast.Constant, need: np.ndarray) -> np.ndarray:
        return np.asarray(node.value, dtype=np.float64 if isinstance(node.value, float) else np.int64)

    def _Name(self, node: ast.Name, need: np.ndarray) -> np.ndarray:
        if node.id not in self.names:
            raise ValueError(f"the name {node.id!r} has no value here; give it as a keyword argument")
        return self.names[node.id]

    def _UnaryOp(self, node: ast.UnaryOp, need: np.ndarray) -> np.ndarray:
        x = self.run(node.operand, need)
        if isinstance(node.op, ast.Not):
            return ~_truth(x)
        if isinstance(node.op, ast.Invert) and x.dtype.kind == "f":
            raise ValueError(f"'~' needs an integer; got a float in {self._segment(node)!r}")
        return _UNARY[type(node.op)](_numeric(x))

    def _BinOp(self, node: ast.BinOp, need: np.ndarray) -> np.ndarray:
        a, b = _numeric(self.run(node.left, need)), _numeric(self.run(node.right, need))
        op, seg = type(node.op), self._segment(node)
        if op in (ast.FloorDiv, ast.Mod):
            zero = (b == 0) & need
            if zero.any():
                raise ValueError(f"division by zero in {seg!r}{_on_lane(zero)}")
            b = np.where(b == 0, 1, b)   # lanes that do not need it: keep NumPy quiet
        if op is ast.Pow:
            bad = ((b < 0) | (b > MAX_EXPONENT)) & need
            if bad.any():
                raise ValueError(f"the exponent in {seg!r} must be in [0, {MAX_EXPONENT}]; "
                                 f"got {b[bad].flat[0]}{_on_lane(bad)}")
            b = np.where((b < 0) | (b > MAX_EXPONENT), 0, b)
        if op in (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor):
            if a.dtype.kind == "f" or b.dtype.kind == "f":
                raise ValueError(f"bitwise operators need integers; got a float in {seg!r}")
        if op in (ast.LShift, ast.RShift):
            bad = ((b < 0) | (b > MAX_SHIFT)) & need
            if bad.any():
                raise ValueError(f"the shift in {seg!r} must be in [0, {MAX_SHIFT}]; "
                                 f"got {b[bad].flat[0]}{_on_lane(bad)}")
            b = np.clip(b, 0, MAX_SHIFT)
        return _BINOPS[op](a, b)

    def _BoolOp(self, node: ast.BoolOp, need: np.ndarray) -> np.ndarray:
        is_and = isinstance(node.op, ast.And)
        result = np.full(self.shape, is_and)
        for value in node.values:
            # Like Python's short-circuit, lane by lane: once decided, later operands don't matter.
            pending = need & (result if is_and else ~result)
            t = _truth(self.run(value, pending))
            result = (result & t) if is_and else (result | t)
        return result

    def _Compare(self, node: ast.Compare, need: np.ndarray) -> np.ndarray:
        result = np.ones(self.shape, bool)
        left = self.run(node.left, need)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.run(comparator, need & result)
            result = result & _CMPOPS[type(op)](left, right)
            left = right
        return result

    def _IfExp(self, node: ast.IfExp, need: np.ndarray) -> np.ndarray:
        t = _truth(self.run(node.test, need))
        yes, no = self.run(node.body, need & t), self.run(node.orelse, need & ~t)
        return np.where(t, yes, no)

    def _segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or type(node).__name__


def _truth(x: np.ndarray) -> np.ndarray:
    return x != 0


def _numeric(x: np.ndarray) -> np.ndarray:
    # C semantics: a comparison is an int 0/1 in arithmetic (NumPy would keep bools: True+True=True).
    return x.astype(np.int64) if x.dtype == np.bool_ else x


def _on_lane(where: np.ndarray) -> str:
    """`` (on lane L)`` for the first True (the last axis is the lane); nothing for a single value."""
    return f" (on lane {int(np.argwhere(where)[0][-1])})" if where.ndim else ""


def _as_array(name: str, x: Any) -> np.ndarray:
    if isinstance(x, np.ma.MaskedArray):
        raise ValueError(f"{name} must be a plain array, not a masked array (fill it first, e.g. {name}.filled(0))")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError):   # ragged nested lists, or objects NumPy cannot read
        raise ValueError(f"{name} must be a number or an array of numbers; got a ragged or unreadable "
                         f"{type(x).__name__}") from None
    if arr.dtype == np.bool_:
        return arr.astype(np.int64)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        return arr.astype(np.float64)
    raise ValueError(f"{name} must be numbers (int or float); got dtype {arr.dtype}")


def evaluate(text: str, **names: Any) -> np.ndarray:
    """Evaluate the expression ``text`` elementwise over the given names (any of lane, value, warp, n).

    Each name is a number or an array; they broadcast together (usually ``lane=np.arange(32)``).
    Returns an int64, float64 or bool array of the broadcast shape. Raises ValueError for text that
    is not allowed, a name without a value, division by zero, or an exponent/shift out of range, on
    a lane where the result is needed.
    """
    unknown = set(names) - set(NAMES)
    if unknown:
        raise ValueError(f"names must be among {', '.join(NAMES)}; got {', '.join(sorted(unknown))}")
    tree = parse(text)
    arrays = {k: _as_array(k, v) for k, v in names.items()}
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
    except ValueError:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in arrays.items())
        raise ValueError(f"the names' values must broadcast together (like lane=np.arange(32)); got {shapes}") from None
    ev = _Evaluator(text.strip(), arrays, shape)
    with np.errstate(all="ignore"):   # int64 wraps, as in C; float overflow gives inf
        try:
            return np.array(ev.run(tree, np.ones(shape, bool)))
        except TypeError as exc:
            raise ValueError(f"cannot evaluate {text.strip()!r}: {exc}") from None


def predicate(text: str, **names: Any) -> np.ndarray:
    """:func:`evaluate`, then true where the result is non-zero (as a CUDA predicate is)."""
    return evaluate(text, **names) != 0
