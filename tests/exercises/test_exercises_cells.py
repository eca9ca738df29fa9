"""The exercise cells: the %%exercise magic's outputs, grading notebooks from outside, and
scripts/insert_exercises.py on copies of the notebooks (idempotent; strict nbval passes)."""
from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from helpers import exercises
from helpers.engine import nvrtc
from helpers.exercises import grade, magic
from helpers.exercises.spec import EXERCISES_DIR

ROOT = Path(__file__).resolve().parents[2]
needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC cannot be loaded here (needed to compile CUDA C)")


def _plain(outs: list) -> list[str]:
    return [o._repr_mimebundle_()["text/plain"] for o in outs]


def test_starter_cell_output_is_deterministic() -> None:
    ex = exercises.get("block_reduce_sum")
    a, b = magic.outputs(ex.name, ex.starter), magic.outputs(ex.name, ex.starter)
    assert _plain(a) == _plain(b)
    assert "not solved yet" in _plain(a)[0] and _plain(a)[1] == magic.BUTTONS_TEXT
    widget = a[1]._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in widget


def test_bad_name_or_options_are_messages() -> None:
    (out,) = magic.outputs("warp_reduce_min", "")
    assert "one of ballot_rank, warp_aggregated_append" in out._repr_mimebundle_()["text/plain"]
    assert magic.parse_line("warp_reduce_max --seed 7 --engine machine") == ("warp_reduce_max", 7, "machine", "")
    assert "optionally --seed N" in magic.parse_line("warp_reduce_max --seed x")[3]


def test_hints_one_at_a_time_and_the_solution_one_click_away() -> None:
    ex = exercises.get("warp_reduce_max")
    box = magic.buttons(ex)
    hint, solution = box.children[0].children
    shown = box.children[1]
    assert shown.value == ""
    hint.click()
    assert "Hint 1." in shown.value and "Hint 2." not in shown.value
    hint.click()
    assert "Hint 2." in shown.value
    solution.click()
    assert "__shfl_down_sync" in shown.value and "Hint 2." in shown.value
    for _ in range(5):
        hint.click()
    assert hint.disabled and f"Hint {len(ex.hints)}." in shown.value


def test_load_ipython_extension_registers_the_cell_magic() -> None:
    calls = []

    class Shell:
        def register_magic_function(self, fn, magic_kind, magic_name):  # noqa: ANN001
            calls.append((fn, magic_kind, magic_name))

    from helpers.widgets import simt

    exercises.load_ipython_extension(Shell())
    assert calls == [(magic.exercise, "cell", "exercise"), (simt.simt, "cell", "simt")]   # and the debugger's


@needs_nvrtc
def test_magic_shows_compile_errors_in_the_cells_lines() -> None:
    (shown, _) = magic.outputs("warp_reduce_max", "__device__ float warp_reduce_max(float v) {\n  return w;\n}\n")
    text = shown._repr_mimebundle_()["text/plain"]
    assert "line 3: error: identifier \"w\" is undefined" in text     # line 1 is the %%exercise line


def _notebook(path: Path, cells: dict[str, str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# answers")]
    nb.cells += [nbformat.v4.new_code_cell(f"%%exercise {name}\n{body}") for name, body in cells.items()]
    nbformat.write(nb, path)
    return path


@needs_nvrtc
def test_grade_a_class_headlessly(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    right = exercises.get("warp_reduce_max").solution
    wrong = (EXERCISES_DIR / "wrong" / "warp_reduce_max.wrong_result.cu").read_text()
    ada = _notebook(tmp_path / "ada.ipynb", {"warp_reduce_max": right,
                                             "block_reduce_sum": exercises.get("block_reduce_sum").starter})
    bob = _notebook(tmp_path / "bob.ipynb", {"warp_reduce_max": wrong})
    out_csv = tmp_path / "grades.csv"
    assert grade.main(["grade", str(ada), str(bob), "--csv", str(out_csv)]) == 0
    table = capsys.readouterr().out
    lines = table.splitlines()
    assert lines[0].split() == ["student", "warp_reduce_max", "block_reduce_sum"]
    assert lines[1].split() == ["ada", "passed", "not_started", "1/2"]
    assert lines[2].split() == ["bob", "wrong_result", "missing", "0/2"]
    rows = list(csv.DictReader(out_csv.open()))
    assert [(r["student"], r["exercise"], r["status"], r["passed"]) for r in rows] == [
        ("ada", "warp_reduce_max", "passed", "1"), ("ada", "block_reduce_sum", "not_started", "0"),
        ("bob", "warp_reduce_max", "wrong_result", "0")]
    assert "the maximum of lanes 0..15 only" in rows[2]["feedback"]


def _copies(tmp_path: Path) -> list[Path]:
    out = []
    for p in sorted((ROOT / "notebooks").glob("0[1-7]_*.ipynb")):
        shutil.copy(p, tmp_path / p.name)
        out.append(tmp_path / p.name)
    return out


def _insert(paths: list[Path]) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "insert_exercises.py"), *map(str, paths)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_insert_exercises_is_idempotent_and_lands_before_the_summary(tmp_path: Path) -> None:
    paths = _copies(tmp_path)
    before = {p: nbformat.read(p, as_version=4) for p in paths}
    _insert(paths)
    first = {p: p.read_text() for p in paths}
    _insert(paths)
    assert {p: p.read_text() for p in paths} == first
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        tagged = [i for i, c in enumerate(nb.cells) if "warplab-exercises" in c.metadata.get("tags", [])]
        summary = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## Summary"))
        assert tagged == list(range(tagged[0], summary))                       # one block, right before the Summary
        names = [c.source.split()[1] for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%exercise")]
        assert names == [ex.name for ex in exercises.by_notebook(p.name[:2])]
        for c in nb.cells:
            if c.cell_type == "code" and c.source.startswith("%%exercise"):
                name, body = c.source.split("\n", 1)[0].split()[1], c.source.split("\n", 1)[1]
                assert [o["data"]["text/plain"] for o in c.outputs] == _plain(magic.outputs(name, body))
        # nothing else changed: the untagged cells' sources are those of the original, in order
        old = "".join(c.source for c in before[p].cells if "warplab-exercises" not in c.metadata.get("tags", []))
        new = "".join(c.source for c in nb.cells if "warplab-exercises" not in c.metadata.get("tags", []))
        assert new.replace("\n", "") == old.replace("\n", "")


@pytest.mark.slow
def test_nbval_passes_on_a_notebook_with_exercises(tmp_path: Path) -> None:
    """Strict nbval over a copy of notebook 02 with its exercise section inserted."""
    (nb,) = [p for p in _copies(tmp_path) if p.name.startswith("02")]
    _insert([nb])
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
                           "--nbval-current-env", "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
                           str(nb)], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
