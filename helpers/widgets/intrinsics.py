"""Interactive explorers for notebooks 01 (``__ballot_sync``) and 02 (the shuffles), and the pure
functions behind them.

Each explorer is a pure view function (:func:`shuffle_view`, :func:`ballot_view`: widget values ->
:class:`helpers.widgets.base.View`, never raising) wired to ipywidgets by :func:`helpers.widgets.base.build`
(:func:`shuffle_explorer`, :func:`ballot_explorer`); the mapping line is what browser tests read.

The intrinsics run through :mod:`helpers.engine.warp` with ``backend=None`` by default: the GPU where
one is usable, the emulator otherwise; the figure's footer says which ran.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from helpers.engine import emulator
from helpers.widgets import base as explorer
from helpers.widgets import expr
from helpers.viz import boxes
from helpers.viz import lanes as figures
from helpers.engine import params
from helpers.engine import warp
from helpers.widgets.base import View
from helpers.engine.params import LANES, WIDTHS

LANE = np.arange(LANES)
MODES: tuple[str, ...] = ("down", "up", "xor", "idx")
OPERAND_NAMES = {"down": "delta", "up": "delta", "xor": "lane_mask", "idx": "src_lane"}
ACTIVE_KINDS: tuple[str, ...] = ("all", "first n", "even", "random")
# What the lanes that do not call are doing: the three lane states of helpers.engine.warp.
OTHERS_KINDS: tuple[str, ...] = ("exited", "alive elsewhere", "some of each")
PREDICATE_KINDS: tuple[str, ...] = ("lane < n", "even lanes", "every k-th lane", "random (seed)",
                                    "custom expression")
DEFAULT_EXPRESSION = "lane % 3 == 0 and value > 5"
FULL_MASK_TEXT = "0xFFFFFFFF"
NOT_CALLING = "-"  # as in every other plain-text lane table


# ---------------------------------------------------------------- inputs


_HEX_MASK = re.compile(r"(0[xX])?[0-9a-fA-F]+(_[0-9a-fA-F]+)*")
_BINARY = re.compile(r"0[bB][01_]+")   # valid hex digits, but surely meant as Python's binary literal


def parse_mask(text: str) -> int:
    """A member mask typed as hex (``0xFFFF0000``, ``ffff0000``, ``0xFFFF_0000``) -> int in [0, 2**32).

    Only ASCII hex digits, one optional ``0x`` and single underscores between digits; spaces only
    around the number (``"1 2"`` is refused, not read as 0x12), and ``0b...`` is refused as binary
    rather than read as hex. Raises ValueError naming the parameter and giving examples.
    """
    hint = "e.g. 0xFFFFFFFF (all 32 lanes) or 0x0000FFFF (lanes 0-15)"
    shown = params.quote(text)
    cleaned = text.strip() if isinstance(text, str) else ""
    if not _HEX_MASK.fullmatch(cleaned) or _BINARY.fullmatch(cleaned):
        raise ValueError(f"mask must be a hexadecimal number from 0x0 to 0xFFFFFFFF, {hint}; got {shown}"
                         + (" (binary? write it in hex)" if _BINARY.fullmatch(cleaned) else ""))
    value = int(cleaned, 16)
    if value > 0xFFFFFFFF:
        raise ValueError(f"mask must be at most 0xFFFFFFFF (32 lanes, one bit each), {hint}; got {shown}")
    return value


def _integer(x: Any, name: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """``x`` as an int if it is a Python or NumPy integer in [lo, hi]; ValueError naming ``name`` otherwise."""
    if not params.is_integer(x) or (lo is not None and x < lo) or (hi is not None and x > hi):
        span = f" in [{lo}, {hi}]" if lo is not None and hi is not None else f" >= {lo}" if lo is not None else ""
        raise ValueError(f"{name} must be an integer{span}; got {params.quote(x)}")
    return int(x)


def active_lanes(kind: str, n: int = LANES, seed: int = 0) -> np.ndarray:
    """(32,) bool, the active lanes: ``"all"``, ``"first n"`` (lanes 0..n-1), ``"even"``, or
    ``"random"`` (n lanes chosen with ``seed``, an integer >= 0). ``n`` (an integer, used by
    "first n" and "random") is clipped to [0, 32]."""
    if kind not in ACTIVE_KINDS:
        raise ValueError(f"active must be one of {', '.join(map(repr, ACTIVE_KINDS))}; got {params.quote(kind)}")
    if kind in ("first n", "random"):
        n = min(max(_integer(n, "n"), 0), LANES)
    if kind == "all":
        return np.ones(LANES, bool)
    if kind == "first n":
        return LANE < n
    if kind == "even":
        return LANE % 2 == 0
    chosen = np.random.default_rng([_integer(seed, "seed", 0), 2]).permutation(LANES)[:n]
    return np.isin(LANE, chosen)


def lane_states(active: str, n: int = LANES, seed: int = 0, others: str = "exited") -> tuple[np.ndarray, np.ndarray]:
    """``(calling, exited)`` lanes for the explorers: the calling lanes from :func:`active_lanes`;
    the others have ``"exited"``, are ``"alive elsewhere"``, or ``"some of each"`` (every other
    non-calling lane, from the lowest, has exited; the rest are elsewhere)."""
    calling = active_lanes(active, n, seed)
    if others == "exited":
        return calling, ~calling
    if others == "alive elsewhere":
        return calling, np.zeros(LANES, bool)
    if others == "some of each":
        rank = np.cumsum(~calling) - 1          # 0, 1, 2, ... over the non-calling lanes
        return calling, ~calling & (rank % 2 == 0)
    raise ValueError(f"others must be one of {', '.join(map(repr, OTHERS_KINDS))}; got {others!r}")


def ballot_values(seed: int) -> np.ndarray:
    """The per-lane data the ballot predicates see as ``value``: integers 0..9, fixed by ``seed`` (>= 0)."""
    return np.random.default_rng([_integer(seed, "seed", 0), 0]).integers(0, 10, LANES).astype(np.int32)


def shuffle_values() -> np.ndarray:
    """The shuffle explorer's input: lane l holds 10 * l, so a value names the lane it came from."""
    return (10 * LANE).astype(np.int32)


def ballot_predicate(kind: str, *, n: int, k: int, seed: int, expression: str, values: np.ndarray) -> np.ndarray:
    """(32,) bool predicate for a predicate ``kind`` (see ``PREDICATE_KINDS``); ``n`` is in [0, 32].

    A custom expression is evaluated safely by :func:`helpers.widgets.expr.predicate` over lane, value,
    warp (0) and n; it raises ValueError with a friendly message when it is not allowed.
    """
    if kind == "lane < n":
        return LANE < _integer(n, "n", 0, LANES)
    if kind == "even lanes":
        return LANE % 2 == 0
    if kind == "every k-th lane":
        if not params.is_integer(k) or k < 1:
            raise ValueError(f"k must be at least 1 for 'every k-th lane' (an integer); got {params.quote(k)}")
        return LANE % k == 0
    if kind == "random (seed)":
        return np.random.default_rng([_integer(seed, "seed", 0), 1]).random(LANES) < 0.5
    if kind == "custom expression":
        n = _integer(n, "n", 0, LANES)
        return np.broadcast_to(expr.predicate(expression, lane=LANE, value=values, warp=0, n=n), (LANES,)).copy()
    raise ValueError(f"predicate must be one of {', '.join(map(repr, PREDICATE_KINDS))}; got {params.quote(kind)}")


def engine_label(backend: Optional[str] = None) -> str:
    """Which engine runs the intrinsics, for figure footers: ``"emulator"`` or ``"GPU: <name>"``."""
    return explorer.engine_label(backend, cpu="emulator")


# ---------------------------------------------------------------- pure views


def shuffle_op_label(mode: str, offset: int, width: int, mask: int) -> str:
    """The CUDA call a shuffle view shows, e.g. ``__shfl_down_sync(0xFFFFFFFF, v, 2, 32)``."""
    name = "__shfl_sync" if mode == "idx" else f"__shfl_{mode}_sync"
    return f"{name}(0x{mask:08X}, v, {offset}, {width})"


_SHUFFLES: dict[str, Callable[..., warp.ShuffleResult]] = {
    "down": warp.shfl_down, "up": warp.shfl_up, "xor": warp.shfl_xor, "idx": warp.shfl_idx,
}


def shuffle_view(mode: str = "down", offset: int = 1, width: int = 32, mask: str = FULL_MASK_TEXT,
                 active: str = "all", n_active: int = LANES, seed: int = 0, others: str = "exited",
                 backend: Optional[str] = None) -> View:
    """The shuffle explorer's picture for these widget values. Never raises.

    ``mode`` is one of down/up/xor/idx, ``offset`` its operand (delta, lane_mask or src_lane),
    ``mask`` hex text, ``active``/``n_active``/``seed`` choose the calling lanes (see
    :func:`active_lanes`) and ``others`` what the rest are doing (see :func:`lane_states`). The
    input is :func:`shuffle_values`. ``mapping`` is ``src: ...``.
    """
    try:
        source = engine_label(backend)
        if not params.is_one_of(mode, MODES):
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {params.quote(mode)}")
        mask_int = parse_mask(mask)
        act, gone = lane_states(active, _n_active(active, n_active), seed, others)
        values = shuffle_values()
        result = _SHUFFLES[mode](values, offset, width, mask=mask_int, active=act, exited=gone, backend=backend)
    except (ValueError, RuntimeError) as exc:   # RuntimeError: a GPU was demanded but is not usable
        return View.error(str(exc))
    out_of_range = ~emulator.in_range(mode, np.full((1, LANES), offset), width)[0]
    fig = figures.shuffle_figure(values, result, op_label=shuffle_op_label(mode, offset, width, mask_int),
                                 width=width, mask=mask_int, active=act, exited=gone, source_label=source,
                                 kept_own=out_of_range)
    return View(fig, figures.lane_table(result, kept_own=out_of_range), engine=source, mapping=figures.mapping_text(result))


def ballot_view(kind: str = "lane < n", n: int = 20, k: int = 3, seed: int = 0,
                expression: str = DEFAULT_EXPRESSION, mask: str = FULL_MASK_TEXT, active: str = "all",
                n_active: int = LANES, others: str = "exited", backend: Optional[str] = None) -> View:
    """The ballot explorer's picture for these widget values. Never raises.

    ``kind`` picks the predicate (see :func:`ballot_predicate`; ``n``, ``k``, ``seed`` and
    ``expression`` are its parameters), ``mask`` is hex text, ``active``/``n_active`` choose the
    calling lanes and ``others`` what the rest are doing: exited, alive elsewhere, or some of each
    (see :func:`lane_states`). ``mapping`` is ``ballot: 0x... bits: ...`` (the set bits, i.e.
    their lanes), or ``ballot: undefined`` when the mask names a lane that is alive elsewhere.
    """
    try:
        source = engine_label(backend)
        mask_int = parse_mask(mask)
        act, gone = lane_states(active, _n_active(active, n_active), seed, others)
        values = ballot_values(seed)
        pred = _user_predicate(kind, n=n, k=k, seed=seed, expression=expression, values=values)
        votes = [f(pred, mask=mask_int, active=act, exited=gone, backend=backend)
                 for f in (warp.ballot, warp.any_sync, warp.all_sync)]
    except (ValueError, RuntimeError) as exc:
        return View.error(str(exc))
    fig = figures.ballot_figure(pred, mask_int, act, votes[0], source, values=values, exited=gone)
    return View(fig, _ballot_table(pred, mask_int, act, gone, *votes), engine=source, mapping=_ballot_mapping(votes[0]))


def _n_active(active: Any, n_active: Any) -> Any:
    """``n_active`` checked where the active-lane choice uses it (the slider's range, [0, 32])."""
    return _integer(n_active, "n_active", 0, LANES) if active in ("first n", "random") else n_active


def _user_predicate(kind: str, **kwargs: Any) -> np.ndarray:
    """:func:`ballot_predicate`, with any failure of a custom expression turned into ValueError."""
    try:
        return ballot_predicate(kind, **kwargs)
    except ValueError:
        raise
    except Exception as exc:  # the learner's expression may fail in ways the checker cannot foresee
        what = "the expression could not be evaluated" if kind == "custom expression" else \
            f"the predicate {kind!r} could not be computed"
        raise ValueError(f"{what}: {type(exc).__name__}: {exc}") from None


def _ballot_mapping(result: warp.VoteResult) -> str:
    if not result.defined:
        return "ballot: undefined bits: none"
    bits = figures.ballot_bits(result.value)
    return f"ballot: {result.hex()} bits: " + (" ".join(map(str, np.flatnonzero(bits))) or "none")


STATE_LETTERS = {"calling": "C", "exited": "X", "elsewhere": "E"}


def _ballot_table(pred: np.ndarray, mask: int, act: np.ndarray, gone: np.ndarray, ballot: warp.VoteResult,
                  any_: warp.VoteResult, all_: warp.VoteResult) -> str:
    in_mask = figures.ballot_bits(mask)
    yes = lambda a: ["1" if x else "0" for x in a]  # noqa: E731
    calls = lambda a: [c if called else NOT_CALLING for c, called in zip(a, act)]  # noqa: E731
    state = ["C" if a else "X" if g else "E" for a, g in zip(act, gone)]
    bits = (calls(yes(figures.ballot_bits(ballot.value))) if ballot.defined
            else [boxes.UNDEF_TEXT] * LANES)
    rows = [("lane", [str(l) for l in LANE]), ("state", state), ("in mask", yes(in_mask)),
            ("predicate", calls(yes(pred))), ("bit", bits)]
    key = f"state: C calls, X has exited, E is alive elsewhere; {NOT_CALLING}: does not call (its bit is 0)"
    if ballot.defined:
        summary = (f"__ballot_sync = {ballot.hex()} (bit l = lane l), "
                   f"__any_sync = {any_.hex()}, __all_sync = {all_.hex()}")
        outside = np.flatnonzero(act & ~in_mask)
        if outside.size:   # PTX vote.sync: undefined for an executing thread not in membermask
            summary += (f"; lane(s) {' '.join(map(str, outside))} call from outside the mask: "
                        f"their own results are undefined")
    else:
        culprits = " ".join(str(l) for l in np.flatnonzero(in_mask & ~act & ~gone))
        summary = (f"__ballot_sync, __any_sync, __all_sync: undefined (the mask names lane(s) {culprits}, "
                   f"alive but not calling)")
    return figures.lane_blocks(rows, 16) + "\n" + key + "\n" + summary


# ---------------------------------------------------------------- builders


def _active_controls() -> dict[str, Any]:
    return {
        "active": explorer.dropdown("calling lanes", ACTIVE_KINDS, "all", "220px"),
        "n_active": explorer.slider("n calling", LANES, 0, LANES),
        "seed": explorer.slider("seed", 0, 0, 99, "240px"),
        "others": explorer.dropdown("the other lanes", OTHERS_KINDS, "exited"),
    }


def _offset_label(mode: str) -> str:
    # "offset" stays in the label whatever the mode: learners (and the browser test) look for it.
    return f"offset ({OPERAND_NAMES.get(mode, 'operand')})"


def shuffle_explorer(backend: Optional[str] = None) -> Any:
    """An ipywidgets VBox exploring ``__shfl_{down,up,xor}_sync`` / ``__shfl_sync`` on one warp.

    Controls: mode, offset (0..31: delta, lane_mask or src_lane), width (1..32), mask (hex text),
    calling lanes and what the other lanes are doing (exited / alive elsewhere / some of each).
    Shows the figure, ``<div class="warplab-mapping">src: ...</div>`` and the table.
    ``.controls`` maps mode, offset, width, mask, active, n_active, seed, others to their widgets.
    """
    controls = {
        "mode": explorer.toggle("mode", MODES, "down", "56px"),
        "offset": explorer.slider(_offset_label("down"), 1, 0, LANES - 1, "520px"),
        "width": explorer.toggle("width", WIDTHS, 32, "56px"),
        "mask": explorer.text("mask (hex)", FULL_MASK_TEXT),
        **_active_controls(),
    }
    layout = (("mode", "width"), ("offset",), ("mask", "active", "n_active", "seed"), ("others",))

    def relabel(values: dict[str, Any], _change: Any) -> None:
        controls["offset"].description = _offset_label(values["mode"])
        controls["others"].disabled = values["active"] == "all"

    return explorer.build(controls, layout, lambda **v: shuffle_view(**v, backend=backend),
                          "<b>Shuffle explorer</b>: lane l starts with the value 10 × l.", on_change=relabel)


def ballot_explorer(backend: Optional[str] = None) -> Any:
    """An ipywidgets VBox exploring ``__ballot_sync`` on one warp.

    Controls: predicate kind, n, k, seed, custom expression (over lane, value, warp, n), mask (hex
    text), calling lanes, and what the other lanes are doing: the three lane states (calling,
    exited, alive elsewhere). Shows the figure, ``<div class="warplab-mapping">ballot: 0x... bits:
    ...</div>`` and the table. ``.controls`` maps kind, n, k, expression, mask, active, n_active,
    seed, others to their widgets.
    """
    controls = {
        "kind": explorer.dropdown("predicate", PREDICATE_KINDS, "lane < n"),
        "n": explorer.slider("n", 20, 0, LANES),
        "k": explorer.slider("k", 3, 1, LANES),
        "expression": explorer.text("expression", DEFAULT_EXPRESSION, "520px", "e.g. lane % 3 == 0 and value > 5"),
        "mask": explorer.text("mask (hex)", FULL_MASK_TEXT),
        **_active_controls(),
    }
    layout = (("kind", "n", "k"), ("expression",), ("mask", "active", "n_active", "seed"), ("others",))

    def enable(values: dict[str, Any], _change: Any) -> None:
        # Grey out what the current choice ignores, so learners know which knob does something.
        controls["k"].disabled = values["kind"] != "every k-th lane"
        controls["expression"].disabled = values["kind"] != "custom expression"
        controls["n_active"].disabled = values["active"] not in ("first n", "random")
        controls["others"].disabled = values["active"] == "all"

    header = "<b>Ballot explorer</b>: <code>value</code> is a random digit per lane (fixed by the seed)."
    return explorer.build(controls, layout, lambda **v: ballot_view(**v, backend=backend), header, on_change=enable)
