"""Small display helpers that give every notebook the same shape (see docs/conventions.md).

Each call renders something through IPython's display machinery, so a notebook cell stays a line or
two: the backend line, kernel code read from ``kernels/`` by anchor, the boxed seed notes.
"""
from __future__ import annotations

import html
import re
from typing import Optional

from helpers.engine import backend
from helpers.engine import kernels

_NOTE_STYLE = ("border-left: 6px solid #D55E00; background: #FFF4EC; padding: 0.6em 1em; "
               "margin: 0.8em 0; border-radius: 4px")


def header(backend_name: Optional[str] = None) -> None:
    """Print the one-line backend report at the top of a notebook."""
    print(backend.report(backend_name))


def code_markdown(kernel_file: str, anchor_name: Optional[str] = None) -> str:
    """Markdown for a code block read from ``kernels/`` (whole file, or one named anchor)."""
    text = kernels.anchor(kernel_file, anchor_name) if anchor_name else kernels.source(kernel_file)
    where = kernels.path(kernel_file).name + (f" · {anchor_name}" if anchor_name else "")
    return f"```cuda\n{text.rstrip()}\n```\n<sub>from <code>kernels/{where}</code></sub>"


def show_code(kernel_file: str, anchor_name: Optional[str] = None) -> None:
    """Display kernel code read from ``kernels/`` by named anchor (never a pasted copy)."""
    from IPython.display import Markdown, display

    display(Markdown(code_markdown(kernel_file, anchor_name)))


def note_html(title: str, body: str) -> str:
    """HTML of a boxed note. ``body`` is plain text: `backticks` become code, blank lines paragraphs."""
    paragraphs = [re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(p.strip()))
                  for p in body.strip().split("\n\n")]
    inner = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f'<div style="{_NOTE_STYLE}"><b>{html.escape(title)}</b>{inner}</div>'


def seed_note(title: str, body: str) -> None:
    """A boxed 'Where the seed got it wrong' note (see :func:`note_html` for ``body``)."""
    from IPython.display import HTML, display

    display(HTML(note_html(f"Where the seed got it wrong: {title}", body)))


_MOV_IMM = re.compile(r"^\s*mov\.[bsu]32\s+(%r\d+),\s*(-?\d+);")


def ptx_constants(ptx_text: str, needle: str) -> str:
    """The PTX lines containing ``needle`` with registers that were loaded from a constant
    (``mov.u32 %r9, 16;``) replaced by that constant, so ``shfl.sync.down.b32 %r11|%p1, %r6, 16, 31, -1``
    reads like the instruction's definition."""
    consts = {m.group(1): m.group(2) for line in ptx_text.splitlines() if (m := _MOV_IMM.match(line))}
    out = []
    for line in ptx_text.splitlines():
        if needle in line:
            out.append(re.sub(r"%r\d+", lambda m: consts.get(m.group(0), m.group(0)), line.strip()).replace("\t", " "))
    return "\n".join(out)
