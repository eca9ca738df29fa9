"""The all-reduce explorer of notebook 07: algorithm, ranks, elements, values, step and a chunk to follow.

Two layers, as every explorer of the series: :func:`allreduce_view` is a pure function from the
widget values to an :class:`AllReduceView` (a figure and a text, or a message saying what is wrong
and what is allowed; it never raises), and :func:`allreduce_explorer` wires ipywidgets to it. A bad
input shows a red message box, never a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from matplotlib.figure import Figure

from . import allreduce as A
from . import figures
from . import figures_allreduce as F
from .widgets import message_html, table_html

MAX_RANKS = 12      # the explorer's limit (the emulator takes up to helpers.allreduce.MAX_RANKS)
MAX_ELEMENTS = 64
VALUES: tuple[str, ...] = ("integers", "random floats")
PNG_DPI = 100


@dataclass(frozen=True)
class AllReduceView:
    """What the explorer shows: ``figure`` and ``table`` for good input, else ``message``."""

    figure: Optional[Figure]
    table: str
    message: Optional[str]

    @classmethod
    def error(cls, message: str) -> "AllReduceView":
        return cls(None, "", message)


def explorer_inputs(values: str, ranks: int, elements: int) -> Any:
    """The explorer's input buffers: small integers (every order gives the exact sum) or random floats."""
    if values not in VALUES:
        raise ValueError(f"values must be one of {', '.join(map(repr, VALUES))}; got {values!r}")
    return A.integer_inputs(ranks, elements) if values == "integers" else A.random_inputs(ranks, elements, seed=7)


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
                   step: Optional[int] = None, chunk: int = 0) -> AllReduceView:
    """The explorer's picture for these widget values (``step`` None: the last). Never raises.

    The table lists the step's messages, what every rank holds for every chunk, the float additions
    behind ``chunk`` (the followed chunk) and, at the last step, the comparison with NumPy.
    """
    try:
        A.check_algorithm(algorithm)
        _check_range(ranks, "ranks", 1, MAX_RANKS)
        _check_range(elements, "elements", 1, MAX_ELEMENTS)
        run = A.run(explorer_inputs(values, ranks, elements), algorithm, history=True)
        sched = run.schedule
        step = sched.n_steps if step is None else A.check_step(sched, step)
        A.check_chunk(sched, chunk)
        fig = F.frame_figure(run, step, follow=chunk)
    except (ValueError, TypeError) as exc:
        return AllReduceView.error(str(exc))
    a, b = run.bounds[chunk]
    order = A.summation_order(sched, chunk) if b > a else "(empty: no elements)"
    table = "\n\n".join([
        f"step {step} of {sched.n_steps}: {sched.labels[step]}",
        F.transfers_text(sched, step),
        "what each rank holds (the ranks summed in; * = a value nobody reads any more)\n" + F.cells_text(run, step),
        f"chunk {chunk}, at the end, is added as: {order}",
        result_line(run, step),
    ])
    return AllReduceView(fig, table, None)


def allreduce_explorer() -> Any:
    """An ipywidgets VBox exploring ring and tree all-reduce step by step on simulated ranks.

    Controls: algorithm, ranks (1..12), elements (1..64), values (integers or random floats), step
    (its maximum follows the algorithm and rank count) and the chunk to follow. ``.controls`` maps
    those names to their widgets; ``.refresh()`` redraws.
    """
    import ipywidgets as w

    def slider(description: str, value: int, lo: int, hi: int, width: str = "300px") -> Any:
        return w.IntSlider(value=value, min=lo, max=hi, description=description, continuous_update=False,
                           style={"description_width": "initial"}, layout=w.Layout(width=width))

    def toggle(description: str, options: tuple, value: str) -> Any:
        return w.ToggleButtons(options=options, value=value, description=description,
                               style={"button_width": "auto", "description_width": "initial"})

    controls = {
        "algorithm": toggle("algorithm", A.ALGORITHMS, "ring"),
        "values": toggle("values", VALUES, "integers"),
        "ranks": slider("ranks", 4, 1, MAX_RANKS),
        "elements": slider("elements", 8, 1, MAX_ELEMENTS, "360px"),
        "step": slider("step", 0, 0, A.ring_schedule(4).n_steps, "420px"),
        "chunk": slider("follow chunk", 0, 0, 3, "260px"),
    }
    message, table = w.HTML(), w.HTML()
    image = w.Image(format="png", layout=w.Layout(max_width="100%"))
    busy = {"adjusting": False}

    def adjust_limits() -> None:
        # The step and chunk ranges depend on the algorithm and the rank count; keep the sliders inside them.
        sched = A.schedule(controls["algorithm"].value, controls["ranks"].value)
        busy["adjusting"] = True
        try:
            controls["step"].max = sched.n_steps
            controls["chunk"].max = sched.n_chunks - 1
        finally:
            busy["adjusting"] = False

    def refresh(change: Any = None) -> None:
        if busy["adjusting"]:
            return
        try:
            if change is not None and change["owner"] in (controls["algorithm"], controls["ranks"]):
                adjust_limits()
            view = allreduce_view(**{k: c.value for k, c in controls.items()})
        except Exception as exc:  # a widget never shows a traceback, whatever went wrong
            view = AllReduceView.error(f"Could not draw this: {type(exc).__name__}: {exc}")
        if view.figure is not None:
            image.value = figures.figure_png(view.figure, dpi=PNG_DPI)
        image.layout.display = None if view.figure is not None else "none"
        message.value = message_html(view.message)
        table.value = table_html(view.table)

    for c in controls.values():
        c.observe(refresh, names="value")
    refresh()
    rows = (("algorithm", "values"), ("ranks", "elements"), ("step", "chunk"))
    header = w.HTML("<b>All-reduce explorer</b>: simulated ranks on the CPU; move <i>step</i> to replay it.")
    box = w.VBox([header, *(w.HBox([controls[n] for n in row]) for row in rows), message, image, table])
    box.controls = controls
    box.refresh = refresh
    return box
