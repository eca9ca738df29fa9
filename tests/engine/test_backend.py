"""The backend line: what it says when the learner chose an engine, and what a stored notebook says."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

from helpers.engine import backend

ROOT = Path(__file__).resolve().parents[2]


def test_report_says_who_chose_the_emulator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPLAB_BACKEND", "emulator")
    assert backend.report().endswith("chosen by WARPLAB_BACKEND=emulator)")
    assert "asked for" in backend.report("emulator")
    monkeypatch.delenv("WARPLAB_BACKEND")
    if not backend.detect().usable:
        assert backend.report().endswith(f"{backend.detect().reason})")
        assert "WARPLAB_BACKEND" not in backend.report()


def test_stored_report_claims_nothing_about_the_readers_machine() -> None:
    line = "Backend: emulator (lane-exact NumPy model of the warp intrinsics; chosen by WARPLAB_BACKEND=emulator)"
    stored = backend.stored_report(line)
    assert stored.startswith("Backend: ") and "WARPLAB_BACKEND" not in stored
    assert "computed by the emulator" in stored and "run this cell" in stored
    assert "computed by a GPU" in backend.stored_report("Backend: GPU NVIDIA H200 (compute capability 9.0), ...")


def test_execute_notebooks_stores_the_neutral_line() -> None:
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "scripts" / "execute_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    outs = [nbformat.v4.new_output("stream", name="stdout",
                                   text="Backend: emulator (lane-exact NumPy model; chosen by WARPLAB_BACKEND=emulator)\nnext\n")]
    mod._store_backend_line(outs)
    assert outs[0].text.startswith("Backend: (stored output, computed by the emulator") and outs[0].text.endswith("\nnext\n")
