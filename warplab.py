"""Warp Lab's launcher, the same on Linux, macOS and Windows.

    ./warplab COMMAND ...            Linux, macOS, WSL (a shell script that finds Python and runs this)
    warplab.cmd COMMAND ...          Windows (cmd or PowerShell), the same for Windows
    python warplab.py COMMAND ...    anywhere

It keeps one virtual environment (``.venv``, or ``$WARPLAB_VENV``) installed from the lock: the
files in ``requirements/`` (exported from ``uv.lock``, every package pinned with its hashes), one
file per *set*:

    lab     what the notebooks need (JupyterLab, NumPy, matplotlib, ipywidgets)
    test    the test tools (pytest, nbval, Hypothesis, Playwright)
    nvrtc   NVRTC and the CUDA headers: compile kernels to PTX without a GPU (your own kernels, CI)
    gpu     CuPy: run the kernels on an NVIDIA GPU (needs a CUDA 12+ driver)

``lab`` installs lab (and gpu when an NVIDIA driver is found), ``test`` adds test (and nvrtc), ``add``
adds a set for good. The CUDA sets hold only NVIDIA wheels, which carry environment markers: on a
Mac they install nothing. ``WARPLAB_CUDA=none`` installs no CUDA set at all, as on a Mac.
Each set is installed again only when its requirements file changes.
"""
from __future__ import annotations

import ctypes.util
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent
REQUIREMENTS = ROOT / "requirements"
SETS = ("lab", "test", "nvrtc", "gpu")
CUDA_SETS = ("nvrtc", "gpu")
STAMP = "warplab-sets.json"
DEFAULT_TEST_PATHS = ("tests", "notebooks")
NBVAL_ARGS = ("--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg")
# pytest-xdist (in the test set): one worker per core; --dist loadscope keeps each scope (a test
# module, or a notebook, whose cells must run in order in one kernel) on one worker.
PARALLEL_ARGS = ("-n", "auto", "--dist", "loadscope")
# JupyterLab's "get Jupyter news?" pop-up covers the first cell; no lesson needs the news feed
# (setting names from the apputils-extension:notification schema; the file is documented in
# JupyterLab's "Advanced Usage" as <sys.prefix>/share/jupyter/lab/settings/overrides.json).
LAB_OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}

USAGE = """\
usage: ./warplab COMMAND [ARGS...]      (Windows: warplab.cmd COMMAND ...; anywhere: python warplab.py COMMAND ...)

  lab [JUPYTER-ARGS]       set up .venv (the first run takes a few minutes) and open JupyterLab on notebooks/
  test [PATH...] [ARGS]    set up .venv with the test tools; run pytest on PATHs (default: tests notebooks)
  site [--out DIR]         build the series as static HTML pages (default build/site/; open index.html)
  add nvrtc|gpu            add NVRTC (compile your own kernels to PTX, no GPU needed) or CuPy (run on an NVIDIA GPU)
  lock                     maintainers: update the lock and redo everything made from it (see README)
  ship                     maintainers: recompile the shipped PTX and compiler logs in kernels/shipped/
  help                     show this

PYTHON=python3.12 picks the interpreter; WARPLAB_CUDA=none installs no CUDA wheel; WARPLAB_VENV=DIR uses another venv."""


class LaunchError(Exception):
    """A problem the user can fix; its message says how."""


def is_windows() -> bool:
    return os.name == "nt"


def venv_dir() -> Path:
    """The environment's folder: ``$WARPLAB_VENV`` (relative to the project) or ``.venv``."""
    return ROOT / os.environ.get("WARPLAB_VENV", ".venv")


def venv_python(venv: Path, windows: Optional[bool] = None) -> Path:
    """The interpreter inside ``venv`` (``Scripts\\python.exe`` on Windows, ``bin/python`` elsewhere)."""
    windows = is_windows() if windows is None else windows
    return venv / "Scripts" / "python.exe" if windows else venv / "bin" / "python"


def nvidia_driver() -> bool:
    """True when an NVIDIA driver is installed here (``libcuda`` / ``nvcuda.dll`` or ``nvidia-smi``)."""
    if ctypes.util.find_library("cuda") or ctypes.util.find_library("nvcuda") or shutil.which("nvidia-smi"):
        return True
    return any(Path(p).is_file() for p in ("/usr/lib/wsl/lib/libcuda.so.1", r"C:\Windows\System32\nvcuda.dll"))


def cuda_mode() -> str:
    """``$WARPLAB_CUDA``: ``auto`` (default) or ``none``."""
    mode = os.environ.get("WARPLAB_CUDA", "auto").strip().lower() or "auto"
    if mode not in ("auto", "none"):
        raise LaunchError(f"WARPLAB_CUDA must be 'auto' or 'none'; got {mode!r}")
    return mode


def wanted_sets(command: str, mode: str, driver: bool) -> list[str]:
    """The sets ``command`` needs: lab for ``lab``, lab and test for ``test``; with ``mode == "auto"``
    also gpu where an NVIDIA ``driver`` is installed, and nvrtc for the tests (to compile every kernel)."""
    sets = ["lab"] + (["test"] if command == "test" else [])
    if mode == "auto":
        if command == "test":
            sets.append("nvrtc")
        if driver:
            sets += ["nvrtc", "gpu"]
    return list(dict.fromkeys(sets))


def requirements_file(name: str) -> Path:
    if name not in SETS:
        raise LaunchError(f"the set must be one of {', '.join(SETS)}; got {name!r}")
    return REQUIREMENTS / f"{name}.txt"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _read_stamp(venv: Path) -> dict[str, str]:
    try:
        return dict(json.loads((venv / STAMP).read_text()))
    except (OSError, ValueError):
        return {}


def to_install(venv: Path, sets: Sequence[str]) -> list[str]:
    """The sets to (re)install: wanted or installed before, and new or changed since."""
    stamp = _read_stamp(venv)
    return [s for s in dict.fromkeys([*sets, *stamp]) if s in SETS and stamp.get(s) != _digest(requirements_file(s))]


def installer(python: Path) -> list[str]:
    """The install command: uv's pip where uv is on PATH (several times faster), else pip. Both check
    every file against the lock's hashes. ``WARPLAB_INSTALLER=pip`` forces pip."""
    uv = shutil.which("uv") if os.environ.get("WARPLAB_INSTALLER", "").lower() != "pip" else None
    if uv:
        return [uv, "pip", "install", "--python", str(python)]
    return [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-compile"]


def _install(cmd: Sequence[str]) -> None:
    """Run the installer with a one-line count of the packages fetched instead of pip's page of
    messages (shown whole, with the error, if the install fails)."""
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    fetched = 0
    tty = sys.stderr.isatty()
    for line in proc.stdout:
        lines.append(line)
        if line.startswith(("Collecting ", "Processing ")) or line.lstrip().startswith("+ "):
            fetched += 1
            if tty or fetched % 25 == 0:
                print(f"{chr(13) if tty else ''}warplab: {fetched} packages ...", end="" if tty else "\n",
                      file=sys.stderr, flush=True)
    if tty:
        print(file=sys.stderr)
    if proc.wait() != 0:
        sys.stderr.write("".join(lines[-80:]))
        raise LaunchError("installing the packages failed (the installer's messages are above)")
    print(f"warplab: {fetched} packages installed; byte-compiling them ...", file=sys.stderr)


def _site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def setup(sets: Sequence[str], venv: Optional[Path] = None) -> Path:
    """Create ``venv`` if needed and bring ``sets`` up to date from the lock; return its Python."""
    venv = venv or venv_dir()
    python = venv_python(venv)
    if not python.exists():
        print(f"warplab: creating {venv.name}/ with Python {sys.version.split()[0]} ...", file=sys.stderr)
        if subprocess.call([sys.executable, "-m", "venv", str(venv)]) != 0:
            raise LaunchError(f"could not create {venv}: this Python has no working 'venv' module. On Debian or "
                              "Ubuntu: sudo apt install python3-venv; or install Python from python.org.")
    pending = to_install(venv, sets)
    if pending:
        print(f"warplab: installing {', '.join(pending)} into {venv.name}/ from the lock "
              "(first run: a few minutes) ...", file=sys.stderr)
        files = [a for s in pending for a in ("-r", str(requirements_file(s)))]
        _install([*installer(python), "--require-hashes", "--no-deps", *files])
        # byte-compile on every core, where the installers work one file at a time (or not at all);
        # without .pyc files every start of a kernel would recompile NumPy and matplotlib
        if subprocess.call([str(python), "-m", "compileall", "-q", "-j0", str(_site_packages(python))]) != 0:
            print("warplab: some files did not byte-compile (see above); they are compiled when imported",
                  file=sys.stderr)
        stamp = _read_stamp(venv)
        stamp.update({s: _digest(requirements_file(s)) for s in pending})
        (venv / STAMP).write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n")
    _link_project(python)
    _lab_settings(venv)
    return python


def _link_project(python: Path) -> None:
    """Make ``import helpers`` work from any folder (notebook kernels start in notebooks/): a ``.pth``
    file naming the project folder, which is what an editable install amounts to, without a build."""
    pth = _site_packages(python) / "warplab.pth"
    if not pth.is_file() or pth.read_text().strip() != str(ROOT):
        pth.write_text(f"{ROOT}\n")


def _lab_settings(venv: Path) -> None:
    path = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    try:
        current = json.loads(path.read_text())
    except (OSError, ValueError):
        current = {}
    merged = {**current, **{k: {**current.get(k, {}), **v} for k, v in LAB_OVERRIDES.items()}}
    if merged != current:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(merged, indent=2) + "\n")


def pytest_args(args: Sequence[str]) -> list[str]:
    """pytest's arguments for ``test ARGS``: the nbval options, the parallel options (unless ``args``
    choose their own: ``-n N``, ``--numprocesses``, ``-p no:xdist``), then ``args``; the default paths
    (tests, notebooks) only when no argument names a path (``tests/test_x.py::test_y`` counts)."""
    names_path = any(not a.startswith("-") and (ROOT / a.split("::")[0]).exists() for a in args)
    own_workers = any(a.startswith(("-n", "--numprocesses", "--dist")) or a == "no:xdist" for a in args)
    return [*NBVAL_ARGS, *([] if own_workers else PARALLEL_ARGS), *([] if names_path else DEFAULT_TEST_PATHS), *args]


def _exec(cmd: list[str]) -> int:
    """Run ``cmd`` in the project folder: replace this process where the OS allows (Ctrl-C goes
    straight to JupyterLab), else wait for it."""
    os.chdir(ROOT)
    sys.stdout.flush()
    sys.stderr.flush()
    if is_windows():
        try:
            return subprocess.call(cmd)
        except KeyboardInterrupt:
            return 130
    os.execv(cmd[0], cmd)
    return 0  # not reached


# What `add` reports afterwards: what the project itself now finds (NVIDIA publishes no CUDA wheels
# for macOS, so there the set installs nothing and the report says so).
_REPORT = {
    "nvrtc": "from helpers.engine import nvrtc\n"
             "print(f'warplab: NVRTC {nvrtc.release()} is installed' if nvrtc.available() else 'warplab: ' + nvrtc.HOW_TO_GET_IT)",
    "gpu": "from helpers.engine import backend\nd = backend.detect()\n"
           "print('warplab: CuPy is installed; ' + ('the GPU is usable' if d.usable else 'no usable GPU: ' + d.reason))",
}


def main(argv: Sequence[str]) -> int:
    if sys.version_info < (3, 10):
        raise LaunchError(f"Python 3.10 or newer is needed; this is {sys.version.split()[0]}. Set PYTHON=python3.X.")
    command, args = (argv[0], list(argv[1:])) if argv else ("help", [])
    if command in ("help", "-h", "--help"):
        print(USAGE)
        return 0
    if command == "lab":
        python = setup(wanted_sets("lab", cuda_mode(), nvidia_driver()))
        root = ["--allow-root"] if not is_windows() and os.geteuid() == 0 else []  # e.g. in a container
        return _exec([str(python), "-m", "jupyterlab", "notebooks/", *root, *args])
    if command == "test":
        python = setup(wanted_sets("test", cuda_mode(), nvidia_driver()))
        return _exec([str(python), "-m", "pytest", *pytest_args(args)])
    if command == "site":
        # the lab set holds nbconvert and nbclient; the notebooks run on the SIMT machine, so no CUDA set
        python = setup(["lab"])
        return _exec([str(python), "scripts/build_site.py", *args])
    if command == "add":
        if len(args) != 1 or args[0] not in CUDA_SETS:
            raise LaunchError(f"add takes one of {', '.join(CUDA_SETS)}; got {' '.join(args) or 'nothing'}")
        python = setup(["lab", *(["nvrtc"] if args[0] == "gpu" else []), args[0]])
        return subprocess.call([str(python), "-c", _REPORT[args[0]]], cwd=ROOT)
    if command == "lock":
        python = setup(wanted_sets("test", cuda_mode(), nvidia_driver()))
        return _exec([str(python), "scripts/lock.py", *args])
    if command == "ship":
        python = setup(["lab", "nvrtc"])
        return _exec([str(python), "scripts/ship_compiled.py", *args])
    print(f"warplab: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        raise SystemExit(main(sys.argv[1:]))
    except LaunchError as exc:
        print(f"warplab: {exc}", file=sys.stderr)
        raise SystemExit(1)
