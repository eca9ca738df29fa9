"""The ``%%exercise NAME`` cell magic: check the cell's CUDA C and show the verdict, with hint and
solution buttons.

    %load_ext helpers.exercises
    %%exercise warp_reduce_max
    __device__ float warp_reduce_max(float v) { ... }

The cell shows two outputs: the feedback (HTML, with a plain-text version for nbval and headless
runs), then the buttons (an ipywidgets box whose plain-text form is a fixed sentence, so stored
notebooks compare equal on every engine). Hints come one at a time; the solution is one click
away. Nothing here lets a traceback reach the learner: a bad name or an internal error is shown
as a message.
"""
from __future__ import annotations

import html
from typing import Any, Optional

from helpers.exercises.catalog import EXERCISES, get
from helpers.exercises.spec import Exercise

BUTTONS_TEXT = "[hint and solution buttons: run this cell in JupyterLab to use them]"
FIRST_LINE = 2   # the code starts under the %%exercise line: line 2 of the cell


class _Html:
    """An HTML output with a given plain-text form (``text/plain`` is what nbval compares)."""

    def __init__(self, html_text: str, plain: str) -> None:
        self.html_text, self.plain = html_text, plain

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html_text, "text/plain": self.plain}


class _Buttons:
    """The hint and solution widget, shown with a fixed plain-text form."""

    def __init__(self, widget: Any) -> None:
        self.widget = widget

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = dict(data)
        data["text/plain"] = BUTTONS_TEXT
        return data


def _code_html(code: str) -> str:
    return f'<pre style="font-size:90%;background:#F7F7F7;padding:6px">{html.escape(code)}</pre>'


def buttons(ex: Exercise, launch: Optional[Any] = None) -> Any:
    """A box with "Hint k of n" (one more hint per click), "Show the solution", and what they revealed;
    with ``launch`` (a failed check's :class:`helpers.exercises.run.DebugLaunch`) also "Open in the
    debugger", which opens the lane debugger on that launch below (built on the click, not before)."""
    import ipywidgets as w

    shown = w.HTML(value="")
    place = w.VBox([])
    state = {"hints": 0}
    n = len(ex.hints)
    hint = w.Button(description=f"Hint 1 of {n}", tooltip="one hint at a time")
    solution = w.Button(description="Show the solution")

    def render(show_solution: bool = False) -> None:
        parts = [f"<p><b>Hint {i + 1}.</b> {html.escape(h)}</p>" for i, h in enumerate(ex.hints[:state["hints"]])]
        if show_solution:
            parts.append(f"<p><b>Solution</b> (kernels/exercises/solutions/{ex.name}.cu):</p>{_code_html(ex.solution)}")
        shown.value = "".join(parts)

    def on_hint(_: Any) -> None:
        state["hints"] = min(n, state["hints"] + 1)
        hint.description = f"Hint {state['hints'] + 1} of {n}" if state["hints"] < n else "No more hints"
        hint.disabled = state["hints"] >= n
        render(solution.disabled)

    def on_solution(_: Any) -> None:
        solution.disabled = True
        render(True)

    hint.on_click(on_hint)
    solution.on_click(on_solution)
    row = [hint, solution]
    if launch is not None:
        opener = w.Button(description="Open in the debugger", tooltip=f"step through {launch.label} lane by lane")

        def on_open(_: Any) -> None:
            opener.disabled = True
            try:
                place.children = (launch.open(),)
            except Exception as exc:  # the learner sees a message, never a traceback
                place.children = (w.HTML(f"<b>The debugger could not open this launch: "
                                         f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</b>"),)

        opener.on_click(on_open)
        row.append(opener)
    box = w.VBox([w.HBox(row), shown, place])
    box.place = place
    return box


def outputs(name: str, source: str, *, seed: Optional[int] = None, engine: Optional[str] = None) -> list[Any]:
    """What the cell displays for ``source``: the feedback, then the buttons (when the name is known)."""
    if name not in EXERCISES:
        known = ", ".join(EXERCISES)
        text = (f"%%exercise needs the name of an exercise on its first line: one of {known}"
                + (f"; got {name!r}." if name else "."))
        return [_Html(f'<div class="warplab-exercise"><b>{html.escape(text)}</b></div>', text)]
    from helpers.exercises import check
    from helpers.exercises.run import EngineUnavailable

    ex = get(name)
    launch = None
    try:
        result = check(name, source, seed=seed, engine=engine, first_line=FIRST_LINE)
        launch = result.debug
        shown = _Html(result.html(), result.feedback)
    except EngineUnavailable as exc:   # `--engine gpu` on a computer without one: say so, no "report it"
        text = f"Exercise {name}: not checked: {exc}. Drop --engine gpu to check it on the SIMT machine."
        shown = _Html(f'<div class="warplab-exercise"><b>{html.escape(text)}</b></div>', text)
    except Exception as exc:  # the learner sees a message, never a traceback
        text = (f"Exercise {name}: the checker itself failed ({type(exc).__name__}: {exc}). This is not your "
                f"code's fault; please report it. helpers.exercises.check({name!r}, source) reproduces it.")
        shown = _Html(f'<div class="warplab-exercise"><b>{html.escape(text)}</b></div>', text)
    try:
        return [shown, _Buttons(buttons(ex, launch))]
    except ImportError:  # no ipywidgets: hints and solution as text
        return [shown]


def parse_line(line: str) -> tuple[str, Optional[int], Optional[str], str]:
    """``NAME [--seed N] [--engine machine|gpu]`` -> (name, seed, engine, problem or "")."""
    words = line.split()
    name = words[0] if words else ""
    seed: Optional[int] = None
    engine: Optional[str] = None
    rest = words[1:]
    while rest:
        flag = rest.pop(0)
        value = rest.pop(0) if rest else ""
        if flag == "--seed" and value.isdigit():
            seed = int(value)
        elif flag == "--engine" and value in ("machine", "gpu"):
            engine = value
        else:
            return name, None, None, (f"%%exercise takes NAME, then optionally --seed N (a whole number) and "
                                      f"--engine machine|gpu; got {line.strip()!r}.")
    return name, seed, engine, ""


def exercise(line: str, cell: str) -> None:
    """The cell magic: ``%%exercise NAME [--seed N] [--engine machine|gpu]``, the CUDA C below it."""
    from IPython.display import display

    name, seed, engine, problem = parse_line(line)
    if problem:
        display(_Html(f'<div class="warplab-exercise"><b>{html.escape(problem)}</b></div>', problem))
        return
    for out in outputs(name, cell, seed=seed, engine=engine):
        display(out)


def register(ipython: Any) -> None:
    """Register ``%%exercise`` with an IPython shell (``%load_ext helpers.exercises`` calls this)."""
    ipython.register_magic_function(exercise, magic_kind="cell", magic_name="exercise")
