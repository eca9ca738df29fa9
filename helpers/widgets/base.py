"""The one explorer base: what a view is, and the ipywidgets wiring every explorer of the series uses.

An explorer is two layers:

* a pure **view function** from the widget values to a :class:`View`: a figure, a plain-text table,
  the engine that produced the figure, an optional machine-readable mapping line, or a message
  saying what was wrong and what is allowed. It never raises, so it can be tested (and fuzzed) over
  the whole parameter range without a browser;
* :func:`build`, which wires ipywidgets controls to that function and shows the result: the
  mapping in a ``<div class="warplab-mapping">`` (browser tests wait for it), a red message box,
  the figure as a PNG image with a line naming its engine, and the table in a ``<pre>``.
  Whatever goes wrong, in the view or in the wiring, the learner sees the message, never a traceback.

Speed (issue 15: a refresh takes at most 200 ms at the 95th percentile on a two-core machine): the
last :data:`MEMO_SIZE` settings are kept rendered, so going back to one shows it at once; a view that
returns the same Figure object again (a cached map) is rendered once; and figures are rendered by
:func:`helpers.viz.render.figure_png`, whose renderer draws text from cached bitmaps.
"""
from __future__ import annotations

import gc
import html
import weakref
from types import SimpleNamespace
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional, Sequence

from matplotlib.figure import Figure

from helpers.engine import backend as _backend
from helpers.viz import render as viz_render
from helpers.viz import style

MEMO_SIZE = 32    # settings an explorer keeps rendered: going back to one shows it at once

# What produced a figure, in the words the explorers and figure footers use.
MACHINE = "the SIMT machine"
EMULATOR = "the intrinsic emulator"


@dataclass(frozen=True)
class View:
    """What an explorer shows for one set of widget values.

    ``message`` is None when the input was good: then ``figure`` is set (or None for a view without
    a picture), ``table`` is the plain-text table, ``engine`` names what produced the figure (the
    SIMT machine, a GPU, or an H200 recording) and ``mapping`` is a machine-readable line (empty
    when the explorer has none). Otherwise ``message`` says, in words, what was wrong and what is
    allowed, and the other fields are empty.
    """

    figure: Optional[Figure] = None
    table: str = ""
    message: Optional[str] = None
    engine: str = ""
    mapping: str = ""

    @classmethod
    def error(cls, message: str) -> "View":
        """The view of bad input: only ``message``."""
        return cls(message=message)


def engine_label(backend: Optional[str] = None, cpu: str = MACHINE) -> str:
    """What runs the helpers with ``backend``: ``"GPU: <name>"`` on a GPU, else ``cpu`` (the words
    for the CPU engine: :data:`MACHINE` for kernels, :data:`EMULATOR` for single intrinsics).
    Raises ValueError/RuntimeError as :func:`helpers.engine.backend.resolve` does."""
    if _backend.resolve(backend) == "cupy":
        return f"GPU: {_backend.detect().gpu_name}"
    return cpu


# ---------------------------------------------------------------- HTML pieces


def message_html(message: Optional[str]) -> str:
    """A red box with the message, or nothing."""
    if not message:
        return ""
    return (f'<div class="warplab-error" style="color:{style.VERMILION};border:1px solid {style.VERMILION};'
            f'padding:6px;border-radius:4px">{html.escape(message)}</div>')


def table_html(table: str) -> str:
    """The plain-text table in a ``<pre class="warplab-table">`` (escaped); nothing for no table."""
    return f'<pre class="warplab-table" style="font-size:11px;line-height:1.25">{html.escape(table)}</pre>' if table else ""


def mapping_html(view: View) -> str:
    """The machine-readable mapping inside ``<div class="warplab-mapping">`` (empty on bad input)."""
    return f'<div class="warplab-mapping" data-mapping="{html.escape(view.mapping)}">{html.escape(view.mapping)}</div>'


def engine_html(engine: str) -> str:
    """The line under the figure that names its engine; nothing when there is no figure."""
    return (f'<div class="warplab-engine" style="font-size:11px;color:#444">figure drawn from: '
            f'{html.escape(engine)}</div>') if engine else ""


# ---------------------------------------------------------------- wiring


def _shown(view: View, png: Optional[bytes]) -> tuple[View, Optional[bytes]]:
    return replace(view, figure=None), png       # keep the picture, not the Figure


def build(controls: Mapping[str, Any], layout: Sequence[Sequence[str]], view: Callable[..., View], header: str, *,
          on_change: Optional[Callable[[dict[str, Any], Any], None]] = None, notice: str = "",
          remember: bool = True) -> Any:
    """An ipywidgets VBox: ``header`` (HTML), the ``controls`` (name -> widget) row by row as
    ``layout`` lists their names, then what ``view(**values)`` returns, refreshed on every change.

    ``on_change(values, change)`` runs first on each change (``change`` is None for the first
    drawing): it may relabel, enable or re-range controls; the changes it causes draw nothing until
    it returns, then the view is drawn once. The last four children are the mapping line, the
    message, the picture (image and engine line; hidden on bad input) and the table; ``.output``
    names them (mapping, message, picture, image, engine, table). ``notice`` is a standing message shown above every
    view's (e.g. "timing is off: no GPU"). ``remember=False`` draws every setting anew (a view that
    times something now). The VBox keeps ``.controls`` and ``.refresh()``.
    """
    import ipywidgets as w

    message, engine, mapping, table = w.HTML(), w.HTML(), w.HTML(), w.HTML()
    image = w.Image(format="png", layout=w.Layout(max_width="100%"))
    picture = w.VBox([image, engine])
    memo: dict[tuple, tuple[View, Optional[bytes]]] = {}   # the last few settings, rendered
    pngs: "weakref.WeakKeyDictionary[Figure, bytes]" = weakref.WeakKeyDictionary()   # a Figure shown again
    adjusting = [False]

    def render(values: dict[str, Any]) -> tuple[View, Optional[bytes]]:
        try:
            v = view(**values)
            png = None
            if v.figure is not None:
                png = pngs.get(v.figure)
                if png is None:
                    png = pngs[v.figure] = viz_render.figure_png(v.figure)
            return _shown(v, png)
        except Exception as exc:  # a widget never shows a traceback, whatever went wrong
            return View.error(f"Could not draw this: {type(exc).__name__}: {exc}"), None

    def refresh(change: Any = None) -> None:
        if adjusting[0]:
            return
        values = {name: c.value for name, c in controls.items()}
        problem = ""
        if on_change is not None:
            adjusting[0] = True
            try:
                on_change(values, change)
            except Exception as exc:  # the same promise for the wiring
                problem = f"Could not adjust the controls: {type(exc).__name__}: {exc}"
            finally:
                adjusting[0] = False
            values = {name: c.value for name, c in controls.items()}   # what on_change left them at
        key = tuple(values.items())
        seen = memo.pop(key, None)
        if seen is None:
            seen = render(values)
            # The figure just rendered is garbage in reference cycles: collecting the young
            # generations now frees it for a few ms, before it is promoted to the old generation,
            # whose full collections (100-200 ms in a notebook's heap) would land in some refresh.
            gc.collect(1)
        if remember:
            memo[key] = seen
            if len(memo) > MEMO_SIZE:
                memo.pop(next(iter(memo)))            # the least recently shown
        shown, png = seen
        if png is not None:
            image.value = png
            engine.value = engine_html(shown.engine)
        # On bad input, hide the stale picture rather than show one that no longer matches.
        picture.layout.display = None if png is not None else "none"
        message.value = message_html("\n".join(m for m in (notice, problem, shown.message) if m))
        table.value = table_html(shown.table)
        # Last: whoever waits for the mapping to change (a browser test) then sees a finished update.
        mapping.value = mapping_html(shown)

    for c in controls.values():
        c.observe(refresh, names="value")
    refresh()
    rows = [w.HBox([controls[name] for name in row]) for row in layout]
    box = w.VBox([w.HTML(header), *rows, mapping, message, picture, table])
    box.controls = dict(controls)
    box.output = SimpleNamespace(mapping=mapping, message=message, picture=picture, image=image, engine=engine,
                                 table=table)
    box.refresh = refresh
    return box


# ---------------------------------------------------------------- controls


def slider(description: str, value: int, lo: int, hi: int, width: str = "300px") -> Any:
    """An IntSlider that redraws once when the handle is released (or per arrow key), not while dragged."""
    import ipywidgets as w

    return w.IntSlider(value=value, min=lo, max=hi, description=description, continuous_update=False,
                       style={"description_width": "initial"}, layout=w.Layout(width=width))


def toggle(description: str, options: Sequence[Any], value: Any, button_width: str = "auto") -> Any:
    """ToggleButtons with the series' label style."""
    import ipywidgets as w

    return w.ToggleButtons(options=tuple(options), value=value, description=description,
                           style={"button_width": button_width, "description_width": "initial"})


def dropdown(description: str, options: Sequence[Any], value: Any, width: str = "260px") -> Any:
    """A Dropdown with the series' label style."""
    import ipywidgets as w

    return w.Dropdown(options=tuple(options), value=value, description=description,
                      style={"description_width": "initial"}, layout=w.Layout(width=width))


def text(description: str, value: str, width: str = "220px", placeholder: str = "") -> Any:
    """A Text box that redraws when the learner presses Enter or leaves it, not on every keystroke."""
    import ipywidgets as w

    return w.Text(value=value, description=description, continuous_update=False, placeholder=placeholder,
                  style={"description_width": "initial"}, layout=w.Layout(width=width))
