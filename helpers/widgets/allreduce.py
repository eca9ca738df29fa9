"""The all-reduce explorer of notebook 08: algorithm, ranks, elements, values, step and a chunk to follow.

As every explorer of the series: :func:`allreduce_view` is a pure function from the widget values
to a :class:`helpers.widgets.base.View` (a figure and a text, or a message saying what is wrong and
what is allowed; it never raises), and :func:`allreduce_explorer` wires ipywidgets to it with
:func:`helpers.widgets.base.build`.
"""
from __future__ import annotations

import functools
from typing import Any, Optional

from helpers.topics import allreduce as A
from helpers.widgets import base as explorer
from helpers.viz import allreduce as F
from helpers.widgets.base import View

MAX_RANKS = 12      # the explorer's limit (the emulator takes up to helpers.topics.allreduce.MAX_RANKS)
MAX_ELEMENTS = 64
VALUES: tuple[str, ...] = ("integers", "random floats")
# The ranks are simulated in Python: the schedule of messages, with NumPy adds (not a kernel).
ENGINE = "simulated ranks on the CPU (helpers.topics.allreduce)"


def explorer_inputs(values: str, ranks: int, elements: int) -> Any:
    """The explorer's input buffers: small integers (every order gives the exact sum) or random floats."""
    _check_values(values)
    return A.integer_inputs(ranks, elements) if values == "integers" else A.random_inputs(ranks, elements, seed=7)


def _check_values(values: Any) -> None:
    if not isinstance(values, str) or values not in VALUES:
        raise ValueError(f"values must be one of {', '.join(map(repr, VALUES))}; got {values!r}")


@functools.lru_cache(maxsize=16)
def _run(algorithm: str, ranks: int, elements: int, values: str) -> A.AllReduceRun:
    """The run behind the explorer, once per input: moving the step or the chunk only redraws it."""
    return A.run(explorer_inputs(values, ranks, elements), algorithm, history=True)


def _check_range(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}]; got {value!r}")
    return value


def result_line(run: A.AllReduceRun, step: int) -> str:
    """Where the run stands at ``step``: not finished, or every rank's buffer against NumPy."""
    sched = run.schedule
    if step < sched.n_steps:
        return f"not finished: {sched.n_steps - step} step(s) to go"
    cmp = A.compare_orders(run.inputs)
    mine = run.result[0]
    same = int((A.ulps_apart(mine, run.numpy_float32) == 0).sum())
    m = run.inputs.shape[1]
    verdict = "inside" if cmp.within_bound(sched.algorithm) else "OUTSIDE"
    return (f"finished: every rank holds the same {m} element(s); {same} of {m} bitwise equal to NumPy's "
            f"float32 np.sum(x, axis=0), all {verdict} the float32 error bound of any summation order")


def allreduce_view(algorithm: str = "ring", ranks: int = 4, elements: int = 8, values: str = "integers",
                   step: Optional[int] = None, chunk: int = 0) -> View:
    """The explorer's picture for these widget values (``step`` None: the last). Never raises.

    The table lists the step's messages, what every rank holds for every chunk, the float additions
    behind ``chunk`` (the followed chunk) and, at the last step, the comparison with NumPy.
    """
    try:
        A.check_algorithm(algorithm)
        _check_range(ranks, "ranks", 1, MAX_RANKS)
        _check_range(elements, "elements", 1, MAX_ELEMENTS)
        _check_values(values)
        run = _run(algorithm, ranks, elements, values)
        sched = run.schedule
        step = sched.n_steps if step is None else A.check_step(sched, step)
        A.check_chunk(sched, chunk)
        fig = F.frame_figure(run, step, follow=chunk)
    except (ValueError, TypeError) as exc:
        return View.error(str(exc))
    a, b = run.bounds[chunk]
    order = A.summation_order(sched, chunk) if b > a else "(empty: no elements)"
    table = "\n\n".join([
        f"step {step} of {sched.n_steps}: {sched.labels[step]}",
        F.transfers_text(sched, step),
        "what each rank holds (the ranks summed in; * = a value nobody reads any more)\n" + F.cells_text(run, step),
        f"chunk {chunk}, at the end, is added as: {order}",
        result_line(run, step),
    ])
    return View(fig, table, engine=ENGINE)


def allreduce_explorer() -> Any:
    """An ipywidgets VBox exploring ring and tree all-reduce step by step on simulated ranks.

    Controls: algorithm, ranks (1..12), elements (1..64), values (integers or random floats), step
    (its maximum follows the algorithm and rank count) and the chunk to follow. ``.controls`` maps
    those names to their widgets; ``.refresh()`` redraws.
    """
    controls = {
        "algorithm": explorer.toggle("algorithm", A.ALGORITHMS, "ring"),
        "values": explorer.toggle("values", VALUES, "integers"),
        "ranks": explorer.slider("ranks", 4, 1, MAX_RANKS),
        "elements": explorer.slider("elements", 8, 1, MAX_ELEMENTS, "360px"),
        "step": explorer.slider("step", 0, 0, A.ring_schedule(4).n_steps, "420px"),
        "chunk": explorer.slider("follow chunk", 0, 0, 3, "260px"),
    }

    def adjust_limits(values: dict[str, Any], change: Any) -> None:
        # The step and chunk ranges depend on the algorithm and the rank count; keep the sliders inside them.
        if change is not None and change["owner"] in (controls["algorithm"], controls["ranks"]):
            sched = A.schedule(values["algorithm"], values["ranks"])
            controls["step"].max = sched.n_steps
            controls["chunk"].max = sched.n_chunks - 1

    rows = (("algorithm", "values"), ("ranks", "elements"), ("step", "chunk"))
    header = "<b>All-reduce explorer</b>: simulated ranks on the CPU; move <i>step</i> to replay it."
    return explorer.build(controls, rows, allreduce_view, header, on_change=adjust_limits)
