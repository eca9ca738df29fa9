"""The lane debugger: one launch of any kernel on the SIMT machine, stepped through warp by warp.

    from helpers.widgets import debug
    debug(code, "k", grid=1, block=64, args=(x, out))

:func:`debug` compiles ``code``, runs the launch on the machine with its trace
(:func:`helpers.machine.steps.record`, on copies of the arrays) and returns an ipywidgets box: the
source with the chosen warp's line highlighted, a step slider with buttons (back, step, next barrier,
next finding), a block and warp picker, the warp's 32 lanes (:mod:`helpers.viz.steps`), what the
step did (shuffle sources, addresses, banks, sectors, barrier arrivals) and the launch's findings,
each a button that jumps to its step. Bad input or a kernel the machine cannot run gives the box with
a message instead, never a traceback.

Two layers, as every explorer of the series (:mod:`helpers.widgets.base`): :func:`prepare` (compile
and run; raises nothing, returns a :class:`Session` or a message) and :func:`view` (one setting ->
:class:`DebugView`, pure HTML strings), both tested without a browser; :func:`debug` wires them.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from helpers.machine import steps as model
from helpers.viz import steps as pictures
from helpers.viz import style
from helpers.widgets import base

HIGHLIGHT = "#D6ECF8"     # the current line: a pale tint of the lanes' sky
OTHER = "#FBE3D3"         # a race's other access: a pale tint of vermilion
MAX_FINDINGS = 12         # buttons shown; the rest are counted


@dataclass
class Session:
    """A launch ready to step through: ``steps`` (:class:`helpers.machine.steps.Steps`), the kernel's
    ``name``, the source ``lines`` shown (numbered from ``first_line``), ``arg_names`` (from the
    kernel's signature, else ``args[i]``)."""

    steps: model.Steps
    name: str
    lines: list[str]
    arg_names: list[str]
    first_line: int = 1


@dataclass(frozen=True)
class DebugView:
    """What the debugger shows for one (block, warp, step): HTML for the source, the lanes, the
    step's details and a machine-readable ``state`` line (block, warp, step, line, active mask), or
    a ``message`` when the setting is not one there is."""

    source: str = ""
    lanes: str = ""
    details: str = ""
    state: str = ""
    message: Optional[str] = None


def _dims(what: str, v: Any) -> tuple[int, int, int]:
    """1 to 3 positive ints -> (x, y, z); ValueError naming ``what`` and what is allowed."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (int(v),)
    try:
        t = tuple(int(x) for x in v)
        ok = 1 <= len(t) <= 3 and all(x >= 1 and float(x) == float(y) for x, y in zip(t, v))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{what} must be 1 to 3 positive whole numbers, e.g. {what}=64 or {what}=(32, 2); got {v!r}")
    return (t + (1, 1))[:3]  # type: ignore[return-value]


def arg_names(code: str, name: str, n: int) -> list[str]:
    """The parameter names of kernel ``name`` as the source declares them (``args[i]`` where the
    signature cannot be read plainly, e.g. a template's instantiation)."""
    base_name = re.escape(name.split("<")[0])
    m = re.search(rf"__global__[^;{{]*?\b{base_name}\s*\(([^)]*)\)", code, re.S)
    if m:
        names = [re.findall(r"[A-Za-z_]\w*", p.split("=")[0])[-1:] for p in m.group(1).split(",") if p.strip()]
        if len(names) == n and all(names):
            return [x[0] for x in names]
    return [f"args[{i}]" for i in range(n)]


def kernel_names(code: str) -> list[str]:
    """The names of the ``__global__`` functions ``code`` declares, in order."""
    plain = re.sub(r"__launch_bounds__\s*\([^)]*\)", "", code)
    return list(dict.fromkeys(re.findall(r"__global__[^;{(]*?\b([A-Za-z_]\w*)\s*\(", plain)))


def prepare(code: str, name: str, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0, *,
            options: Sequence[str] = (), blocks: Optional[Sequence[int]] = None,
            show: Optional[tuple[str, str, int]] = None, ptx: Optional[str] = None) -> Union[Session, str]:
    """Compile ``code`` (CUDA C++; ``name`` a kernel or a template's name expression such as
    ``"k<float>"``), run the launch on the machine with its trace and return a :class:`Session`; on
    any problem, a message saying what is wrong and what to write instead (never raises).
    ``show`` = (file, text, first line): show ``text`` as the lines of ``file`` (as ``#line`` or
    ``--filename`` named it) instead of ``code`` itself, e.g. a learner's cell inside a harness.
    ``ptx``: ``code`` already compiled (with line info), so it is not compiled again."""
    from helpers import machine
    from helpers.engine import kernels, nvrtc

    try:
        if not isinstance(code, str) or not code.strip():
            return "code must be the kernel's CUDA C source as a string; got " + (repr(code)[:40] or "nothing")
        if not isinstance(name, str) or not name.strip():
            return f"name must be the kernel's name, e.g. name=\"my_kernel\"; got {name!r}"
        g, b = _dims("grid", grid), _dims("block", block)
        if b[0] * b[1] * b[2] > 1024:
            return f"block must have at most 1024 threads (CUDA's limit); got {b[0] * b[1] * b[2]}"
        if isinstance(args, (np.ndarray, str)) or not isinstance(args, (tuple, list)):
            return f"args must be a tuple or list, one value per kernel parameter, e.g. args=(x, out); got {type(args).__name__}"
        if isinstance(shared_mem, bool) or not isinstance(shared_mem, (int, np.integer)) or shared_mem < 0:
            return f"shared_mem must be a whole number of bytes >= 0; got {shared_mem!r}"
        opts = tuple(options) or ("-std=c++17", *kernels.include_options())
        try:
            mod = machine.RawModule(ptx=ptx) if ptx is not None else machine.RawModule(code=code, options=opts)
            if name not in mod.kernel_names:     # a C++ (mangled) kernel or a template's instantiation
                try:
                    mod = machine.RawModule(code=code, options=opts, name_expressions=(name,))
                except nvrtc.CompileError:
                    return f"name must be one of the kernels this code declares {kernel_names(code)}; got {name!r}"
        except nvrtc.CompileError as exc:
            return f"the kernel does not compile:\n{exc}"
        except nvrtc.NvrtcUnavailable as exc:
            return f"compiling needs NVRTC, which is not installed here: {exc}"
        kernel = mod.get_function(name)
        n_params = len(kernel.function.params)
        if len(args) != n_params:
            return (f"args must have one value per kernel parameter: {name} takes {n_params}, got {len(args)} "
                    f"(write args=({', '.join(arg_names(code, name, n_params))}))")
        steps = model.record(kernel, g, b, list(args), int(shared_mem), blocks=blocks,
                             file=show[0] if show else None)
    except (ValueError, TypeError, machine.MachineError) as exc:
        return str(exc)
    except Exception as exc:  # the learner sees a message, never a traceback
        return f"the debugger could not run this launch ({type(exc).__name__}: {exc})"
    text, first = (show[1], int(show[2])) if show else (code, 1)
    return Session(steps=steps, name=name, lines=text.splitlines(), arg_names=arg_names(code, name, len(args)),
                   first_line=first)


def _source_html(lines: list[str], line: int, other: int = -1, first: int = 1) -> str:
    rows = []
    for i, text in enumerate(lines, start=first):
        bg = HIGHLIGHT if i == line else OTHER if i == other else "transparent"
        mark = "&#9654;" if i == line else "&nbsp;"
        cls = ' class="warplab-current"' if i == line else ""
        rows.append(f'<div{cls} style="background:{bg};white-space:pre"><span style="color:#888">{mark}{i:>4} </span>'
                    f'{html.escape(text)}</div>')
    return (f'<div class="warplab-source" style="font-family:monospace;font-size:12px;line-height:1.35;'
            f'max-height:320px;overflow:auto;border:1px solid #ddd;padding:4px">{"".join(rows)}</div>')


def _finding_text(sess: Session, i: int) -> str:
    """``"race at line 5 and line 6"``: the lines of the shown code where the finding's steps are."""
    sf = sess.steps.findings[i]
    lines = []
    for place in (sf.other, sf.at):
        if place is not None:
            s = sess.steps.warp(*place[:2])[place[2]]
            lines.append(f"line {s.line}" if s.line > 0 else f"{s.inner[0].rsplit('/', 1)[-1]} line {s.inner[1]}")
    f = sf.finding
    where = " and ".join(dict.fromkeys(lines)) or (f"line {f.line}" if f.line else "no source line")
    return f"{f.kind.replace('_', ' ')} at {where}"


def view(sess: Session, block: int, warp: int, index: int, other: Optional[tuple[int, int, int]] = None) -> DebugView:
    """The debugger at step ``index`` of warp ``warp`` of block ``block`` (linear). ``other``: a
    race's other access (block, warp, step), whose line is tinted too. Never raises."""
    try:
        ws = sess.steps.warp(block, warp)
        if not 0 <= index < len(ws):
            return DebugView(message=f"step must be in 0..{len(ws) - 1}; got {index}")
        s = ws[index]
        other_line = -1
        if other is not None:
            other_line = sess.steps.warp(*other[:2])[other[2]].line
        inner = ""
        if s.inner[1] > 0 and s.inner[0] != sess.steps.main_file:
            inner = f" (inside {s.inner[0].rsplit('/', 1)[-1]}, line {s.inner[1]})"
        lines = [html.escape(x) for x in pictures.describe(s)]
        if s.line > 0:
            where = f"line {s.line}{inner}"
        elif s.inner[1] > 0:
            where = f"{s.inner[0].rsplit('/', 1)[-1]}, line {s.inner[1]} (outside the code shown)"
        else:
            where = "no single source line"
        head = (f"<b>block {sess.steps.block_index(block)}, warp {warp}: step {index} of {len(ws) - 1}</b> "
                f"(the machine's scheduling step {s.step}), {html.escape(where)}")
        parts = [f"<div>{head}</div>", "<ul style='margin:2px 0'>" + "".join(f"<li>{x}</li>" for x in lines) + "</ul>"]
        if s.barrier is not None:
            b = s.barrier
            waiting = sum(bin(m).count("1") for m in b.arrived)
            running = sum(bin(m).count("1") for m in b.running)
            parts.append(f"<div>barrier: {waiting} threads of the block wait at a barrier, {running} still run "
                         f"(sky: waiting, pale yellow: running, grey: exited)</div>" + pictures.barrier_svg(b, warp))
        table = pictures.access_table(s.access, sess.arg_names)
        if table:
            parts.append(base.table_html(table))
        for k in s.findings:
            f = sess.steps.findings[k].finding
            parts.append(base.message_html(f"{f.kind.replace('_', ' ')}: {f.message}"))
        state = (f"block={block} warp={warp} step={index} line={s.line} active={s.active:#010x} "
                 f"elsewhere={s.elsewhere:#010x} exited={s.exited:#010x} kind={s.kind.replace(' ', '_')}")
        lanes = pictures.step_svg(s) + f'<div style="font-size:11px">{pictures.LEGEND}</div>'
        return DebugView(source=_source_html(sess.lines, s.line, other_line, sess.first_line), lanes=lanes,
                         details="".join(parts), state=state)
    except Exception as exc:  # a view never shows a traceback
        return DebugView(message=f"Could not draw this: {type(exc).__name__}: {exc}")


def error_box(message: str) -> Any:
    """The debugger's place with only ``message`` (``.message``), for input it cannot open."""
    import ipywidgets as w

    box = w.VBox([w.HTML(base.message_html(message))])
    box.message = message
    return box


def debug(code: str, name: str, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0, *,
          options: Sequence[str] = (), blocks: Optional[Sequence[int]] = None,
          start: Optional[tuple[int, int, int]] = None, show: Optional[tuple[str, str, int]] = None) -> Any:
    """The lane debugger for one launch of kernel ``name`` in ``code`` (see the module docstring):
    ``grid``/``block`` 1 to 3 ints, ``args`` one value per parameter (NumPy arrays for pointers; the
    kernel runs on copies), ``shared_mem`` dynamic shared bytes, ``options`` NVRTC options (default:
    C++17 and the series' include paths), ``blocks`` the blocks to keep in a large grid, ``start``
    (block, warp, step) to open at (default: the first finding's step, else step 0 of warp 0), ``show``
    (file, text, first line) the source to show when it is not ``code`` (see :func:`prepare`).
    Returns an ipywidgets box; on bad input a box with the message (``.message``)."""
    sess = prepare(code, name, grid, block, args, shared_mem, options=options, blocks=blocks, show=show)
    if isinstance(sess, str):
        return error_box(sess)
    return widget(sess, start=start)


def widget(sess: Session, start: Optional[tuple[int, int, int]] = None) -> Any:
    """The debugger's controls and views over a prepared :class:`Session`: ``.controls`` (block, warp,
    step: value widgets), ``.buttons`` (back, forward, next_barrier, next_finding), ``.findings``
    (one button per finding), ``.output`` (source, lanes, details, state, message), ``.go(block,
    warp, step)``."""
    import ipywidgets as w

    st = sess.steps
    warps = st.warps()
    if not warps:
        return error_box("the launch executed nothing (no warp ran an instruction)")
    if start is None:
        first = next((f.at for f in st.findings if f.at is not None), None)
        start = first or (warps[0][0], warps[0][1], 0)
    blocks = sorted({b for b, _ in warps})
    block_pick = base.dropdown("block", [(f"{st.block_index(b)}", b) for b in blocks], start[0], width="200px")
    warp_pick = base.dropdown("warp", [w_ for b, w_ in warps if b == start[0]], start[1], width="120px")
    slider = w.IntSlider(value=0, min=0, max=max(0, len(st.warp(*start[:2])) - 1), description="step",
                         continuous_update=False, layout=w.Layout(width="420px"))
    slider.value = start[2]
    back, fwd = w.Button(description="◀ back", layout=w.Layout(width="80px")), \
        w.Button(description="step ▶", layout=w.Layout(width="80px"))
    to_bar = w.Button(description="next barrier", layout=w.Layout(width="110px"))
    to_find = w.Button(description="next finding", layout=w.Layout(width="110px"))
    source, lanes, details, state, message = w.HTML(), w.HTML(), w.HTML(), w.HTML(), w.HTML()
    status = w.HTML()
    hold = [False]
    current = [start[:2]]       # the (block, warp) shown
    other: list[Optional[tuple[int, int, int]]] = [None]

    def refresh(_: Any = None) -> None:
        if hold[0]:
            return
        current[0] = (block_pick.value, warp_pick.value)
        v = view(sess, block_pick.value, warp_pick.value, slider.value, other[0])
        other[0] = None
        message.value = base.message_html(v.message)
        if v.message is None:
            source.value, lanes.value, details.value = v.source, v.lanes, v.details
        state.value = (f'<div class="warplab-debug-state" data-state="{html.escape(v.state)}" '
                       f'style="font-size:10px;color:#666">{html.escape(v.state)}</div>')

    def go(block: int, warp: int, index: int, race_other: Optional[tuple[int, int, int]] = None) -> None:
        hold[0] = True
        try:
            block_pick.value = block
            warp_pick.options = tuple(w_ for b, w_ in warps if b == block)
            warp_pick.value = warp
            slider.max = max(0, len(st.warp(block, warp)) - 1)
            slider.value = index
        finally:
            hold[0] = False
        other[0] = race_other
        refresh()

    def on_pick(_: Any) -> None:
        if hold[0]:
            return
        # keep the machine's step: the new warp's first step at or after the one shown
        old = st.warp(*current[0])
        at = int(old.steps[min(slider.value, len(old) - 1)])
        b = block_pick.value
        options = [w_ for bb, w_ in warps if bb == b]
        wv = warp_pick.value if warp_pick.value in options else options[0]
        new = st.warp(b, wv)
        go(b, wv, int(min(len(new) - 1, np.searchsorted(new.steps, at))))

    def step_by(k: int) -> None:
        slider.value = max(0, min(slider.max, slider.value + k))

    def next_of(findings: bool) -> None:
        ws = st.warp(block_pick.value, warp_pick.value)
        nxt = ws.next_index(slider.value, ("barrier",), findings=findings)
        if nxt is None:
            status.value = f'<span style="font-size:11px">no {"finding" if findings else "barrier"} after this step in this warp</span>'
            return
        status.value = ""
        slider.value = nxt

    slider.observe(refresh, names="value")
    warp_pick.observe(on_pick, names="value")
    block_pick.observe(on_pick, names="value")
    back.on_click(lambda _: step_by(-1))
    fwd.on_click(lambda _: step_by(1))
    to_bar.on_click(lambda _: next_of(False))
    to_find.on_click(lambda _: next_of(True))

    finding_buttons = []
    for i, sf in enumerate(st.findings[:MAX_FINDINGS]):
        btn = w.Button(description=_finding_text(sess, i), tooltip=sf.finding.message[:300],
                       layout=w.Layout(width="auto"), disabled=sf.at is None)
        btn.on_click(lambda _, sf=sf: go(*sf.at, race_other=sf.other))
        finding_buttons.append(btn)
    n = len(st.findings)
    finding_head = (f"<b>findings</b> ({n}; click one to go to its step"
                    + (f", the first {MAX_FINDINGS} shown" if n > MAX_FINDINGS else "") + ")" if n
                    else "<b>findings</b>: none (no race, out-of-bounds access, undefined shuffle or divergent barrier)")
    launch = (f"<b>{html.escape(sess.name)}</b>&lt;&lt;&lt;{st.grid}, {st.block}&gt;&gt;&gt; on "
              f"{html.escape(base.MACHINE)}, one warp at a time: the machine's schedule (lowest PC first), one of "
              f"the schedules a GPU may choose")
    note = f'<div style="font-size:11px">{html.escape(st.note)}</div>' if st.note else ""
    refresh()
    box = w.VBox([w.HTML(launch + note), w.HBox([block_pick, warp_pick]), w.HBox([slider, back, fwd, to_bar, to_find]),
                  status, state, message, source, lanes, details,
                  w.HTML(finding_head), w.Box(finding_buttons, layout=w.Layout(flex_flow="row wrap"))])
    box.session, box.refresh, box.go = sess, refresh, go
    box.controls = {"block": block_pick, "warp": warp_pick, "step": slider}
    box.buttons = {"back": back, "forward": fwd, "next_barrier": to_bar, "next_finding": to_find}
    box.output = {"source": source, "lanes": lanes, "details": details, "state": state, "message": message}
    box.findings = finding_buttons
    return box
