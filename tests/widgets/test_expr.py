"""The predicate-expression evaluator: what learners may type, and what it must refuse."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.widgets import expr

LANE = np.arange(32)
VALUE = (LANE * 7) % 10


def run(text: str, **names) -> np.ndarray:
    return expr.evaluate(text, **{"lane": LANE, "value": VALUE, "warp": 0, "n": 5, **names})


@pytest.mark.parametrize("text, expected", [
    ("lane % 3 == 0 and value > 5", (LANE % 3 == 0) & (VALUE > 5)),
    ("(lane & 1) == 0", LANE % 2 == 0),
    ("lane < n", LANE < 5),
    ("not lane", LANE == 0),
    ("lane > 28 or lane == 0", (LANE > 28) | (LANE == 0)),
    ("0 < lane < 4", (LANE > 0) & (LANE < 4)),
    ("lane ^ 1", LANE ^ 1),
    ("(lane << 2) | (lane >> 3)", (LANE << 2) | (LANE >> 3)),
    ("2 ** (lane % 5)", 2 ** (LANE % 5)),
    ("-lane + +3 - lane // 2", -LANE + 3 - LANE // 2),
    ("~lane", ~LANE),
    ("1 if lane < 4 else 0", (LANE < 4).astype(int)),
    ("warp == 0", np.ones(32, bool)),
    ("True", np.ones(32, bool)),
    ("value * 0.5 > 2", VALUE * 0.5 > 2),
])
def test_accepts_good_expressions(text: str, expected: np.ndarray) -> None:
    np.testing.assert_array_equal(run(text), expected)


def test_booleans_count_as_ints_in_arithmetic_as_in_c() -> None:
    np.testing.assert_array_equal(run("(lane < 2) + (lane < 3)"), (LANE < 2).astype(int) + (LANE < 3))


def test_short_circuit_is_per_lane() -> None:
    # Python would never divide on lane 0 here, so neither may we.
    np.testing.assert_array_equal(run("lane != 0 and 10 // lane > 2"), (LANE > 0) & (LANE <= 3))
    np.testing.assert_array_equal(run("lane == 0 or 10 % lane == 0"), np.isin(LANE, [0, 1, 2, 5, 10]))
    np.testing.assert_array_equal(run("0 if lane == 0 else 31 // lane"),
                                  np.where(LANE == 0, 0, 31 // np.maximum(LANE, 1)))


def test_predicate_is_non_zero() -> None:
    np.testing.assert_array_equal(expr.predicate("lane & 2", lane=LANE), (LANE & 2) != 0)


@pytest.mark.parametrize("text, found", [
    ("__import__('os')", "function call"),
    ("__import__('os').system('true')", "function call"),
    ("lane.__class__", "attribute access"),
    ("value.real", "attribute access"),
    ("open('x')", "function call"),
    ("(lambda: 1)()", "function call"),
    ("lambda: 1", "lambda"),
    ("[x for x in (1, 2)]", "comprehension"),
    ("{x: 1 for x in (1,)}", "comprehension"),
    ("sum(x for x in (1,))", "function call"),
    ("lane[0]", "indexing"),
    ("'a'", "literal"),
    ("b'a'", "literal"),
    ("1j", "literal"),
    ("lane / 2", "'/'"),
    ("foo + 1", "name 'foo'"),
    ("lane in (1, 2)", "'in'"),
    ("lane is 1", "'is'"),
    ("(y := 3)", "':='"),
    ("[lane]", "a list"),
    ("f'{lane}'", "f-string"),
])
def test_rejects_anything_else_with_what_is_allowed(text: str, found: str) -> None:
    with pytest.raises(ValueError) as err:
        run(text)
    message = str(err.value)
    assert message.startswith("Only lane, value, warp, n, numbers")
    assert found in message


@pytest.mark.parametrize("text, words", [
    ("9 ** 9 ** 9", "exponent"),
    ("2 ** 1000", "exponent"),
    ("lane ** 65", "exponent"),
    ("2 ** -1", "exponent"),
    ("1 << 64", "shift"),
    ("lane >> -1", "shift"),
    ("10 // (lane - lane)", "division by zero"),
    ("lane % 0", "division by zero"),
    ("1.5 & lane", "integers"),
    ("~1.5", "integer"),
    ("", "empty"),
    ("lane +", "could not parse"),
    ("import os", "could not parse"),
    ("lane; 1", "could not parse"),
    ("(" * 200 + "1" + ")" * 200, "too long"),
    ("99999999999999999999", "too large"),
])
def test_refuses_unsafe_or_broken_arithmetic(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        run(text)


def test_division_by_zero_names_the_lane() -> None:
    with pytest.raises(ValueError, match=r"on lane 3"):
        run("lane != 0 and 1 // (lane - 3) == 0")


def test_names_must_be_known_and_given() -> None:
    with pytest.raises(ValueError, match="names must be among"):
        expr.evaluate("lane", lane=LANE, os=1)
    with pytest.raises(ValueError, match="'n' has no value"):
        expr.evaluate("lane < n", lane=LANE)
    with pytest.raises(ValueError, match="must be numbers"):
        expr.evaluate("value > 1", value=np.array(["a"] * 32))


def test_non_string_is_refused() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        expr.evaluate(42, lane=LANE)  # type: ignore[arg-type]


def test_evaluator_never_calls_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def forbidden(*_a, **_k):
        raise AssertionError("eval/exec must not be used")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    assert run("lane < 3").sum() == 3
