"""Recorded hardware results under ``data/``: written only by the recording scripts on a GPU.

Every file is a JSON object with a ``"stamp"`` (GPU, driver, CuPy, date; see
:func:`helpers.engine.backend.stamp`) and the recorded payload. Loaders return the parsed dict.
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def path(name: str) -> Path:
    """``data/NAME.json``."""
    return DATA_DIR / (name if name.endswith(".json") else f"{name}.json")


def exists(name: str) -> bool:
    return path(name).is_file()


def load(name: str) -> dict[str, Any]:
    """The recorded file ``data/NAME.json``; FileNotFoundError says how to produce it."""
    p = path(name)
    if not p.is_file():
        raise FileNotFoundError(f"{p} is missing: it is written on a GPU by the recording scripts "
                                f"(python -m helpers.recording.record, scripts/gpu_verify.sh)")
    return json.loads(p.read_text())


def write(name: str, payload: dict[str, Any], stamp: dict[str, str]) -> Path:
    """Write a recording with its stamp and today's date. Call only from a recording script on a GPU."""
    p = path(name)
    p.parent.mkdir(parents=True, exist_ok=True)
    body = {"stamp": {**stamp, "date": _dt.date.today().isoformat()}, **payload}
    p.write_text(json.dumps(body, indent=1) + "\n")
    return p


def label(stamp: dict[str, Any]) -> str:
    """A short provenance label, e.g. ``recorded on NVIDIA H200 (driver 580.159.04, CuPy 14.2.0), 2026-11-30``."""
    return (f"recorded on {stamp.get('gpu', '?')} (driver {stamp.get('driver', '?')}, "
            f"CuPy {stamp.get('cupy_version', '?')}), {stamp.get('date', '?')}")


def catalog() -> list[dict[str, str]]:
    """One row per recording in ``data/``: file, GPU, driver, CuPy, date (for notebook 00's table)."""
    rows = []
    for p in sorted(DATA_DIR.glob("*.json")):
        s = json.loads(p.read_text()).get("stamp", {})
        rows.append({"file": f"data/{p.name}", "gpu": s.get("gpu", "?"), "driver": s.get("driver", "?"),
                     "cupy": s.get("cupy_version", "?"), "date": s.get("date", "?")})
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
