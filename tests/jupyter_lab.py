"""A JupyterLab server for the browser tests (tests/project/test_browser.py, tests/project/test_browser_debugger.py).

:func:`serve` starts one on ``root`` with the settings the tests need, waits until it answers, yields its
base URL and token, and stops it afterwards.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "warplab-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_settings(config_dir: Path) -> None:
    """No news pop-up or update check (nothing may cover what the test clicks), no autosave, and every
    cell in the page (no windowing: the waits read every cell's prompt and output)."""
    settings = config_dir / "lab" / "user-settings" / "@jupyterlab"
    for plugin, values in {"apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
                           "docmanager-extension/plugin": {"autosave": False},
                           "notebook-extension/tracker": {"windowingMode": "none"}}.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@contextlib.contextmanager
def serve(root: Path, config_dir: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab on ``root`` (the SIMT machine as backend, helpers from this checkout): (base URL, token).

    Raises RuntimeError when the server exits or does not answer within 60 s."""
    write_settings(config_dir)
    port = free_port()
    # the kernels import helpers from this checkout, whatever is installed
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "WARPLAB_BACKEND": "emulator", "JUPYTER_CONFIG_DIR": str(config_dir), "PYTHONPATH": pythonpath}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"JupyterLab exited: {proc.stderr.read().decode()[-2000:]}")
                if time.time() > deadline:
                    raise RuntimeError("JupyterLab did not come up within 60 s")
                time.sleep(0.5)
        yield base, TOKEN
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
