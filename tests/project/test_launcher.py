"""The launcher: ./warplab and warplab.cmd find Python and run warplab.py, which does what it says
on Linux, macOS and (as far as Linux can check) Windows."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import warplab  # noqa: E402


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "warplab"), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def test_unknown_command_says_so_and_prints_the_usage() -> None:
    out = _run("bogus")
    assert out.returncode == 2
    assert "unknown command 'bogus'" in out.stderr and "usage: ./warplab COMMAND" in out.stderr


def test_help_lists_every_command() -> None:
    out = _run("help")
    assert out.returncode == 0
    for command in ("lab", "test [PATH...]", "site [--out DIR]", "add nvrtc|gpu", "lock", "ship"):
        assert command in out.stdout


def test_missing_interpreter_gives_a_clean_message() -> None:
    out = _run("lab", PYTHON="nosuchpython")
    assert out.returncode == 1
    assert out.stderr.startswith("warplab: no Python interpreter named 'nosuchpython' was found.")
    assert "line " not in out.stderr and "Traceback" not in out.stderr


def test_old_interpreter_gives_a_clean_message(tmp_path: Path) -> None:
    fake = tmp_path / "python2"
    fake.write_text("#!/bin/sh\n[ \"$1\" = -V ] && echo 'Python 2.7.18' && exit 0\nexit 1\n")
    fake.chmod(0o755)
    out = _run("lab", PYTHON=str(fake))
    assert out.returncode == 1 and "Python 3.10 or newer is needed; " in out.stderr and "Python 2.7.18" in out.stderr


def test_windows_launcher_runs_the_same_python_launcher() -> None:
    raw = (ROOT / "warplab.cmd").read_bytes()
    assert b"\r\n" in raw and raw.count(b"\n") == raw.count(b"\r\n"), "cmd.exe needs CRLF line endings"
    text = raw.decode()
    assert '%PYTHON% "%~dp0warplab.py" %*' in text and "exit /b %errorlevel%" in text
    assert "sys.version_info < (3, 10)" in text


def test_test_runs_only_the_paths_given() -> None:
    first = [*warplab.NBVAL_ARGS, *warplab.PARALLEL_ARGS]
    assert warplab.pytest_args([]) == [*first, "tests", "notebooks"]
    assert warplab.pytest_args(["-q", "-k", "emulator"]) == [*first, "tests", "notebooks", "-q", "-k", "emulator"]
    one = "notebooks/02_shfl_down_offset_width.ipynb"
    assert warplab.pytest_args([one]) == [*first, one]
    assert warplab.pytest_args(["tests/widgets/test_expr.py::test_x", "-x"]) == [*first, "tests/widgets/test_expr.py::test_x", "-x"]
    assert warplab.pytest_args(["tests", "-m", "not slow"]) == [*first, "tests", "-m", "not slow"]   # the README's quick run


@pytest.mark.parametrize("own", [["-n", "0"], ["-n2"], ["--numprocesses=3"], ["-p", "no:xdist"]])
def test_test_spreads_over_the_cores_unless_told_otherwise(own: list[str]) -> None:
    assert warplab.pytest_args(own) == [*warplab.NBVAL_ARGS, "tests", "notebooks", *own]


def test_sets_per_command() -> None:
    assert warplab.wanted_sets("lab", "auto", driver=False) == ["lab"]
    assert warplab.wanted_sets("lab", "auto", driver=True) == ["lab", "nvrtc", "gpu"]
    assert warplab.wanted_sets("test", "auto", driver=False) == ["lab", "test", "nvrtc"]
    assert warplab.wanted_sets("test", "none", driver=True) == ["lab", "test"]


def test_cuda_mode_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPLAB_CUDA", "maybe")
    with pytest.raises(warplab.LaunchError, match="WARPLAB_CUDA must be 'auto' or 'none'; got 'maybe'"):
        warplab.cuda_mode()


def test_venv_layout_on_windows_and_elsewhere(tmp_path: Path) -> None:
    assert warplab.venv_python(tmp_path, windows=True) == tmp_path / "Scripts" / "python.exe"
    assert warplab.venv_python(tmp_path, windows=False) == tmp_path / "bin" / "python"


def test_sets_are_reinstalled_only_when_their_file_changes(tmp_path: Path) -> None:
    assert warplab.to_install(tmp_path, ["lab", "test"]) == ["lab", "test"]
    stamp = {s: warplab._digest(warplab.requirements_file(s)) for s in ("lab", "test")}
    stamp["nvrtc"] = "0" * 16  # installed once, since changed: kept up to date though not asked for
    (tmp_path / warplab.STAMP).write_text(json.dumps(stamp))
    assert warplab.to_install(tmp_path, ["lab"]) == ["nvrtc"]
    with pytest.raises(warplab.LaunchError, match="the set must be one of lab, test, nvrtc, gpu; got 'cuda'"):
        warplab.requirements_file("cuda")


def test_lab_settings_turn_the_news_off(tmp_path: Path) -> None:
    f = tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    warplab._lab_settings(tmp_path)
    got = json.loads(f.read_text())
    assert got["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}  # the user's stay
    assert got["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}


def test_the_news_settings_exist_in_this_jupyterlab() -> None:
    """The names in warplab.LAB_OVERRIDES are the installed JupyterLab's own (its settings schema)."""
    schema = (Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas" / "@jupyterlab" / "apputils-extension"
              / "notification.json")
    if not schema.is_file():
        pytest.skip(f"JupyterLab's schemas are not in {sys.prefix}")
    props = json.loads(schema.read_text())["properties"]
    assert "false" in [o["const"] for o in props["fetchNews"]["oneOf"]] and props["checkForUpdates"]["type"] == "boolean"
    installed = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    if (Path(sys.prefix) / warplab.STAMP).is_file():  # a venv the launcher made: the file is in place
        assert json.loads(installed.read_text())["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
