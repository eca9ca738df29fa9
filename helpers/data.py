"""Recorded hardware results: the shipped ones under ``data/`` (written only by the recording
scripts on the H200, :func:`load`), and a learner's own under ``local-recordings/`` (written by the
same commands on their GPU, :func:`load_local`); :func:`write` puts a recording where
``$WARPLAB_RECORD_INTO`` says (:func:`record_dir`).

Every file is a JSON object with a ``"stamp"`` (GPU, driver, CuPy, date; see
:func:`helpers.engine.backend.stamp`) and the recorded payload. Loaders return the parsed dict.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any, Optional

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
# A learner's own recordings (git-ignored): what `python -m helpers.recording.record` and
# `python -m helpers.bench --record` write on their GPU, so data/ keeps only the shipped ones.
LOCAL_DIR = Path(__file__).resolve().parent.parent / "local-recordings"
RECORD_INTO = "WARPLAB_RECORD_INTO"      # where write() puts a recording: a folder, or "data"
LOCAL_RECORDINGS = "WARPLAB_LOCAL_RECORDINGS"   # where load_local() looks (tests point it at nothing)


def path(name: str) -> Path:
    """``data/NAME.json``."""
    return DATA_DIR / (name if name.endswith(".json") else f"{name}.json")


def exists(name: str) -> bool:
    return path(name).is_file()


def load(name: str) -> dict[str, Any]:
    """The recorded file ``data/NAME.json``; FileNotFoundError says how to produce it."""
    p = path(name)
    if not p.is_file():
        raise FileNotFoundError(f"{p} is missing: the shipped recordings are written on the H200 by the "
                                f"recording scripts (SHIP=1 bash scripts/gpu_verify.sh, scripts/gpu/*.sh)")
    return json.loads(p.read_text())


def record_dir() -> Path:
    """Where :func:`write` puts a recording: ``$WARPLAB_RECORD_INTO`` (``data`` means ``data/``,
    the shipped recordings; anything else is a folder), else ``data/``. The learner's commands set
    it to :func:`local_dir` unless it is set (:func:`record_locally_unless_set`)."""
    into = os.environ.get(RECORD_INTO, "")
    return DATA_DIR if into in ("", "data") else Path(into).resolve()


def local_dir() -> Path:
    """Where a learner's own recordings are: ``$WARPLAB_LOCAL_RECORDINGS``, else ``local-recordings/``."""
    return Path(os.environ.get(LOCAL_RECORDINGS) or LOCAL_DIR)


def record_locally_unless_set() -> Path:
    """For the learner's commands: record into :func:`local_dir` unless ``$WARPLAB_RECORD_INTO``
    says otherwise (the maintainers' H200 scripts set it to ``data``); returns the folder."""
    if not os.environ.get(RECORD_INTO):
        os.environ[RECORD_INTO] = str(local_dir())
    return record_dir()


def load_local(name: str) -> Optional[dict[str, Any]]:
    """A learner's own recording ``NAME.json`` in :func:`local_dir`, or None if there is none."""
    p = local_dir() / (name if name.endswith(".json") else f"{name}.json")
    return json.loads(p.read_text()) if p.is_file() else None


def write(name: str, payload: dict[str, Any], stamp: dict[str, str]) -> Path:
    """Write a recording with its stamp and today's date into :func:`record_dir`. Call only from a
    recording script on a GPU."""
    p = record_dir() / path(name).name
    p.parent.mkdir(parents=True, exist_ok=True)
    body = {"stamp": {**stamp, "date": _dt.date.today().isoformat()}, **payload}
    p.write_text(json.dumps(body, indent=1) + "\n")
    return p


def label(stamp: dict[str, Any]) -> str:
    """A short provenance label, e.g. ``recorded on NVIDIA H200 (driver 580.159.04, CuPy 14.2.0), 2026-11-30``."""
    return (f"recorded on {stamp.get('gpu', '?')} (driver {stamp.get('driver', '?')}, "
            f"CuPy {stamp.get('cupy_version', '?')}), {stamp.get('date', '?')}")


def recorded_date(body: dict[str, Any]) -> str:
    """The day a recording was made: its stamp's ``date``, else the day of its ``recorded`` time.

    The first litmus recording (``data/litmus.json``, 2026-12-07) keeps its time beside the stamp as
    ``"recorded": "YYYY-MM-DD HH:MM:SS UTC"``; ``record_litmus`` now stamps ``date`` like every recording.
    Returns "" when the recording says neither."""
    return body.get("stamp", {}).get("date") or str(body.get("recorded", ""))[:10]


def catalog() -> list[dict[str, str]]:
    """One row per recording in ``data/``: file, GPU, driver, CuPy, date (for notebook 00's table)."""
    rows = []
    for p in sorted(DATA_DIR.glob("*.json")):
        body = json.loads(p.read_text())
        s = body.get("stamp", {})
        rows.append({"file": f"data/{p.name}", "gpu": s.get("gpu", "?"), "driver": s.get("driver", "?"),
                     "cupy": s.get("cupy_version", "?"), "date": recorded_date(body) or "?"})
    return rows


def catalog_text() -> str:
    """:func:`catalog` as an aligned plain-text table (deterministic, for nbval)."""
    rows = catalog()
    if not rows:
        return "No recordings yet: run `python -m helpers.recording.record` on a GPU."
    cols = ("file", "gpu", "driver", "cupy", "date")
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    line = lambda r: "  ".join(r[c].ljust(widths[c]) for c in cols).rstrip()  # noqa: E731
    return "\n".join([line({c: c for c in cols})] + [line(r) for r in rows])
