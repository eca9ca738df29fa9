"""Hypothesis settings and input strategies shared by the fuzz tests (tests/widgets/test_fuzz_*.py).

CI runs the suite twice on a two-core machine, so every fuzz test has a small, fixed example
budget: derandomized (the same examples every run, so CI never flakes on a new draw), no example
database, no deadline (a loaded machine must not fail a test for being slow). Set
``WARPLAB_FUZZ_SCALE=20`` (say) to multiply every budget for a deeper run on your own machine;
``WARPLAB_FUZZ_RANDOM=1`` draws fresh examples instead of the fixed ones.

The strategies mix values that are allowed with values that are not (wrong types, shapes, dtypes,
out-of-range numbers, NaN, masked arrays, ragged lists, huge text), because the contract under
test is the same for both: a result, or a ValueError whose message names the parameter.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SCALE = max(1, int(os.environ.get("WARPLAB_FUZZ_SCALE", "1")))
RANDOM = os.environ.get("WARPLAB_FUZZ_RANDOM", "") not in ("", "0")
MAX_MESSAGE = 600   # a message is read in a widget: never a wall of text


def fuzz(max_examples: int) -> Callable:
    """``@settings`` for one fuzz test: ``max_examples`` (times WARPLAB_FUZZ_SCALE), fixed draws."""
    return settings(max_examples=max_examples * SCALE, deadline=None, database=None, derandomize=not RANDOM,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much], print_blob=True)


def check_message(exc: BaseException, *names: str) -> None:
    """The refusal contract: a ValueError, short, naming one of ``names`` (when given)."""
    text = str(exc)
    assert isinstance(exc, ValueError), f"{type(exc).__name__} instead of ValueError: {text[:300]}"
    assert text and len(text) <= MAX_MESSAGE, f"message of {len(text)} characters: {text[:200]}..."
    if names:
        assert any(n in text for n in names), f"message names none of {names}: {text}"


def call(fn: Callable, *args: Any, names: tuple[str, ...] = (), runtime_ok: bool = False, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or None when it refused cleanly (see :func:`check_message`).

    ``runtime_ok``: a RuntimeError is fine too (a GPU demanded on a machine without one).
    """
    try:
        return fn(*args, **kwargs)
    except RuntimeError as exc:
        if not runtime_ok:
            raise
        assert "GPU" in str(exc) or "cupy" in str(exc), str(exc)
        return None
    except Exception as exc:  # noqa: BLE001 - the point is to see which exceptions escape
        check_message(exc, *names)
        return None


# ---------------------------------------------------------------- strategies

LANES = 32
DTYPES = ("int32", "uint32", "float32", "float64")
BAD_DTYPES = ("int8", "int64", "uint64", "float16", "bool", "complex64")

junk = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8), st.just("x" * 1000), st.lists(st.integers(-3, 3), max_size=3), st.just(object()),
    st.just(np.float64("nan")), st.just(np.int64(7)), st.just(np.array([1, 2])), st.just({}),
)


def small_ints(lo: int = -2**31, hi: int = 2**31 - 1) -> st.SearchStrategy:
    return st.integers(lo, hi)


def lane_arrays(dtypes: tuple[str, ...] = DTYPES, max_warps: int = 3) -> st.SearchStrategy:
    """Well-formed (32,) or (n_warps, 32) arrays of an allowed dtype (NaN and inf included for floats)."""
    shape = st.one_of(st.just((LANES,)), st.integers(1, max_warps).map(lambda n: (n, LANES)))
    return st.sampled_from(dtypes).flatmap(lambda dt: shape.flatmap(lambda sh: hnp.arrays(dt, sh)))


def int_lane_arrays(dtypes: tuple[str, ...] = ("int32", "uint32"), max_warps: int = 3) -> st.SearchStrategy:
    return lane_arrays(dtypes, max_warps)


def any_values(max_warps: int = 3) -> st.SearchStrategy:
    """What a learner might pass as ``values``: good arrays, Python lists (in and out of int32),
    wrong shapes and dtypes, masked arrays, np.matrix, ragged lists, scalars and junk."""
    good = lane_arrays(max_warps=max_warps)
    bad_shape = st.sampled_from(DTYPES).flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(max_dims=3, max_side=40)))
    bad_dtype = st.sampled_from(BAD_DTYPES).flatmap(lambda dt: hnp.arrays(dt, (LANES,)))
    lists = st.one_of(st.lists(st.integers(-2**40, 2**40), min_size=32, max_size=32),
                      st.lists(st.integers(-2**31, 2**31 - 1), min_size=32, max_size=32),
                      st.lists(st.booleans(), min_size=32, max_size=32),
                      st.lists(st.floats(), min_size=32, max_size=32))
    ragged = st.just([[1] * 32, [1] * 31])
    masked = lane_arrays(("int32", "float32")).map(lambda a: np.ma.masked_array(a, mask=np.arange(a.size).reshape(a.shape) % 5 == 0))
    matrix = int_lane_arrays(max_warps=2).map(lambda a: np.asmatrix(np.atleast_2d(a)))
    return st.one_of(good, good, bad_shape, bad_dtype, lists, ragged, masked, matrix, junk)


def masks() -> st.SearchStrategy:
    return st.one_of(st.integers(0, 0xFFFFFFFF), st.just(0xFFFFFFFF), st.integers(-2**40, 2**40),
                     hnp.arrays("uint32", st.integers(1, 3)), junk)


def actives(shape: tuple[int, ...] = (LANES,)) -> st.SearchStrategy:
    return st.one_of(st.none(), hnp.arrays(bool, shape), hnp.arrays(bool, hnp.array_shapes(max_dims=2, max_side=33)),
                     hnp.arrays("int32", shape), junk)


def backends() -> st.SearchStrategy:
    """Mostly the emulator; sometimes names that must be refused. Without a GPU also auto (None) and
    'cupy' (refused with a RuntimeError); on a GPU machine those would launch kernels per example."""
    from helpers.engine.backend import detect

    refused = st.sampled_from(["gpu", "", "CUDA", "Emulator"])
    if detect().usable:
        return st.one_of(st.just("emulator"), st.just("emulator"), refused)
    return st.one_of(st.just("emulator"), st.just("emulator"), st.none(), st.just("cupy"), refused, junk)


def mixed(good: st.SearchStrategy, weight: int = 3) -> st.SearchStrategy:
    """``good`` most of the time, junk the rest."""
    return st.one_of(*([good] * weight), junk)
