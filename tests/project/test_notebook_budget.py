"""The learner's path stays within its budget (scripts/notebook_budget.py): words on the main path,
sentence lengths, and a run's output in every numbered section."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "notebook_budget.py"
_spec = importlib.util.spec_from_file_location("warplab_notebook_budget", _PATH)
budget = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = budget
_spec.loader.exec_module(budget)


def test_details_and_code_spans_are_not_main_path_words():
    text = budget._plain(budget.main_path(
        "Call `__shfl_down_sync(mask, v, 1)` now.\n\n<details><summary>Why</summary>Many words here.</details>"))
    assert budget.count_words(text) == 3


def test_a_list_is_not_one_sentence(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["## 1. Lists\n", "- one two\n", "- three four five\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "01_x.ipynb"
    path.write_text(__import__("json").dumps(nb))
    m = budget.measure(path)
    assert [n for n, _ in m.sentences] == [1, 2, 3]
    assert m.breaches() == ["01_x: section 1 (Lists) shows no figure, widget or table from a run"]


#: The notebooks held to the budget so far (the lead extends this to 05+ as they meet it).
WITHIN_BUDGET = ("00", "01", "02", "03", "04", "05", "06", "07", "08")


@pytest.mark.parametrize("number", WITHIN_BUDGET)
def test_notebook_meets_the_budget(number: str) -> None:
    """Words on the main path, mean and longest sentence, and a run's output in every numbered section."""
    (path,) = [p for p in budget.notebooks() if p.name.startswith(f"{number}_")]
    assert budget.measure(path).breaches() == []
