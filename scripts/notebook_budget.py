"""The learner's path, measured: words, sentences and figures on each notebook's main path.

The main path is what a learner reads without opening anything: the markdown cells, less every
``<details>`` block (the evidence, one click away). A code span (`` `...` ``) counts as one word,
and so does a LaTeX span; every other whitespace-separated token is a word. A sentence ends at ``.``, ``!``, ``?`` or ``:`` followed by a space and
a capital, and at the end of a paragraph, heading, list item or table cell, so a bullet list
is not one long sentence.

Every numbered section (``## N.``) must show at least one thing a run produced: a figure
(``image/png``), an animation or other HTML output, a widget, or a table printed by a cell.

The budgets (``BUDGETS``): at most 2,500 main-path words for each notebook after 00 and 900 for
00; a mean sentence of at most 20 words; no sentence over 40 words.

    python scripts/notebook_budget.py            # the table, every notebook
    python scripts/notebook_budget.py --check    # exit 1 and name each breach

``tests/project/test_notebook_budget.py`` runs ``--check``'s logic, so the budget holds as the series changes.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

#: (words on the main path, mean sentence, longest sentence); "00" has its own word budget.
MAX_WORDS = 2500
MAX_WORDS_START = 900
MAX_MEAN_SENTENCE = 20.0
MAX_SENTENCE = 40

_DETAILS = re.compile(r"<details\b.*?</details>", re.S | re.I)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_MATH_SPAN = re.compile(r"\$[^$\n]+\$")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_FENCE = re.compile(r"```.*?```", re.S)
_SECTION = re.compile(r"^##\s+(\d+)\.\s*(.*)$")
_MARKER = re.compile(r"^(#+\s+(\d+(\.\d+)*\.?\s+)?|[-*+]\s+|\d+\.\s+|>\s+)")
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z*_(\"'`\[])")
#: Outputs that show a run: a picture, an HTML view (animations, tables, boxed notes), a widget.
_SHOWING = ("image/png", "image/svg+xml", "text/html", "application/vnd.jupyter.widget-view+json")


@dataclass
class Section:
    """One numbered section: its number, title and whether a run's output shows in it."""

    number: str
    title: str
    shows_output: bool = False


@dataclass
class Measure:
    """A notebook's main path: words, sentence lengths and its numbered sections."""

    name: str
    words: int = 0
    sentences: list[tuple[int, str]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)

    @property
    def mean_sentence(self) -> float:
        return self.words / len(self.sentences) if self.sentences else 0.0

    @property
    def longest(self) -> tuple[int, str]:
        return max(self.sentences, default=(0, ""))

    def breaches(self) -> list[str]:
        """Every budget this notebook breaks, as a sentence naming the limit; empty when within."""
        limit = MAX_WORDS_START if self.name.startswith("00") else MAX_WORDS
        out = []
        if self.words > limit:
            out.append(f"{self.name}: {self.words} main-path words, over the budget of {limit}")
        if self.mean_sentence > MAX_MEAN_SENTENCE:
            out.append(f"{self.name}: mean sentence {self.mean_sentence:.1f} words, over {MAX_MEAN_SENTENCE:g}")
        for n, text in self.sentences:
            if n > MAX_SENTENCE:
                out.append(f"{self.name}: a sentence of {n} words (over {MAX_SENTENCE}): {text[:90]}…")
        for s in self.sections:
            if not s.shows_output:
                out.append(f"{self.name}: section {s.number} ({s.title}) shows no figure, widget or table from a run")
        return out


def main_path(markdown: str) -> str:
    """The markdown a learner reads without opening anything: ``<details>`` blocks and fences removed."""
    return _FENCE.sub(" ", _DETAILS.sub(" ", markdown))


def _units(text: str) -> list[str]:
    """Paragraphs, headings, list items and table cells: no sentence runs across two of them."""
    # Consecutive plain lines are one paragraph; structured lines are one unit each.
    joined, para = [], []
    for raw in text.split("\n\n"):
        lines = [ln for ln in raw.splitlines() if ln.strip()]
        if lines and all(not re.match(r"\s*(#|[-*+]\s|\d+\.\s|\||>)", ln) for ln in lines):
            joined.append(" ".join(ln.strip() for ln in lines))
        else:
            para.extend(lines)
    for line in para:
        line = line.strip()
        if not line or set(line) <= set("|-: "):
            continue
        line = _MARKER.sub("", line)
        joined.extend(cell for cell in line.split("|") if cell.strip())
    return joined


def count_words(text: str) -> int:
    """Words in ``text``: its whitespace-separated tokens (symbols such as ``→`` count too, the stricter
    reading); a code or math span has already been made one token."""
    return len(text.split())


def _plain(markdown: str) -> str:
    text = _CODE_SPAN.sub("CODE", markdown)
    text = _MATH_SPAN.sub("CODE", text)
    text = _LINK.sub(r"\1", text)
    return _TAG.sub(" ", text)


def measure(path: Path) -> Measure:
    """Measure one notebook's main path (see the module docstring for the rules)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    m = Measure(path.stem)
    current: Section | None = None
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            text = _plain(main_path(source))
            for unit in _units(text):
                for sentence in _SENTENCE_END.split(unit):
                    n = count_words(sentence)
                    if n:
                        m.words += n
                        m.sentences.append((n, sentence.strip()))
            for line in main_path(source).splitlines():
                hit = _SECTION.match(line.strip())
                if hit:
                    current = Section(hit.group(1), hit.group(2).strip())
                    m.sections.append(current)
                elif line.startswith("## "):
                    current = None
        elif cell["cell_type"] == "code" and current is not None:
            current.shows_output |= _shows(cell, source)
    return m


def _shows(cell: dict, source: str) -> bool:
    """Whether a code cell shows what a run produced (or will produce, for an ignored output)."""
    for out in cell.get("outputs", []):
        if any(kind in out.get("data", {}) for kind in _SHOWING):
            return True
        if out.get("output_type") == "stream" and re.search(r"^\s*\S.*(\||  ).*\S\s*$", out.get("text", "") if isinstance(out.get("text"), str) else "".join(out.get("text", [])), re.M):
            return True
    # Outputs nbval ignores (animations, widgets) are dropped from the stored notebook.
    return "NBVAL_IGNORE_OUTPUT" in source and bool(re.search(r"animation|explorer|widget|HTML\(|figure|debug", source))


def notebooks() -> list[Path]:
    """The series, in order."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 and name each breach")
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: the series)")
    args = parser.parse_args(argv)
    paths = args.paths or notebooks()
    print(f"{'notebook':<36} {'words':>6} {'mean':>5} {'longest':>7} {'sections':>8}")
    breaches = []
    for path in paths:
        m = measure(path)
        bare = sum(not s.shows_output for s in m.sections)
        print(f"{m.name:<36} {m.words:>6} {m.mean_sentence:>5.1f} {m.longest[0]:>7} "
              f"{len(m.sections) - bare:>4}/{len(m.sections):<3}")
        breaches += m.breaches()
    if args.check and breaches:
        print("\n".join(["", *breaches]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
