"""The recording files of the machine's proof, ``data/machine_*``, written only on the H200.

* ``machine_manifest.json``: stamped (GPU, driver, CUDA, CuPy via :func:`helpers.engine.backend.stamp`,
  plus NVRTC's version); what each file below holds, and counts. It is the file the project's
  catalog and stamp checks see.
* ``machine_kernels.json.gz`` + ``machine_kernels.npz``: every kernel module's PTX (compiled once,
  on the GPU host, with ``-lineinfo``), every launch (seed, shape, input checksum, status) and, in
  the ``.npz``, the H200's outputs (``L<index>.<argument>``).
* ``machine_programs.json.gz`` + ``machine_programs.npz``: the generated programs (CUDA source,
  launch, features, intent), each module's PTX, and the H200's outputs (``<program>.iout``, ``.fout``).
* ``machine_sass.json.gz``: the SASS (``ptxas -arch=sm_90`` then ``cuobjdump -sass``) of the
  recorded PTX of reduce_v0..v4 (and v9, from its next recording), to set the machine's PTX counters
  beside ncu's SASS counters, and to check the SASS read on the CPU (tests/engine/test_sass.py).
* ``machine_sanitizer.json``: racecheck / synccheck verdicts per sampled program, and the runs that
  show what compute-sanitizer cannot see (an out-of-bounds read inside a pooled allocation, a
  shuffle read of an exited lane).

Inputs are not stored: they are rebuilt from seeds (:mod:`helpers.recording.proof.rand`) and checked
against the recorded checksums.
"""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any, Optional

import numpy as np

from helpers import data

PREFIX = "machine_"
MANIFEST = "machine_manifest"
KERNELS = "machine_kernels"
PROGRAMS = "machine_programs"
SANITIZER = "machine_sanitizer"
SASS = "machine_sass"


def data_dir(root: Optional[Path] = None) -> Path:
    """Where the recordings live: ``data/`` (or ``root``, for tests with fabricated recordings)."""
    return Path(root) if root is not None else data.DATA_DIR


def write_json_gz(name: str, payload: dict[str, Any], root: Optional[Path] = None) -> Path:
    p = data_dir(root) / f"{name}.json.gz"
    p.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(p, "wt", compresslevel=9) as f:
        json.dump(payload, f, separators=(",", ":"))
    return p


def read_json_gz(name: str, root: Optional[Path] = None) -> dict[str, Any]:
    with gzip.open(data_dir(root) / f"{name}.json.gz", "rt") as f:
        return json.load(f)


def write_arrays(name: str, arrays: dict[str, np.ndarray], root: Optional[Path] = None) -> Path:
    p = data_dir(root) / f"{name}.npz"
    p.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    p.write_bytes(buf.getvalue())
    return p


def read_arrays(name: str, root: Optional[Path] = None) -> dict[str, np.ndarray]:
    with np.load(data_dir(root) / f"{name}.npz") as z:
        return {k: z[k] for k in z.files}


def write_json(name: str, payload: dict[str, Any], stamp: dict[str, str], root: Optional[Path] = None) -> Path:
    """A plain stamped JSON recording (``data.write`` when ``root`` is None)."""
    if root is None:
        return data.write(name, payload, stamp)
    p = data_dir(root) / f"{name}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"stamp": stamp, **payload}, indent=1) + "\n")
    return p


def read_json(name: str, root: Optional[Path] = None) -> dict[str, Any]:
    return json.loads((data_dir(root) / f"{name}.json").read_text())


def present(root: Optional[Path] = None) -> list[str]:
    """Which of the proof's recordings exist: any of "kernels", "programs", "sanitizer"."""
    d = data_dir(root)
    have = []
    if (d / f"{KERNELS}.json.gz").is_file() and (d / f"{KERNELS}.npz").is_file():
        have.append("kernels")
    if (d / f"{PROGRAMS}.json.gz").is_file() and (d / f"{PROGRAMS}.npz").is_file():
        have.append("programs")
    if (d / f"{SANITIZER}.json").is_file():
        have.append("sanitizer")
    return have


def missing_reason(what: str, root: Optional[Path] = None) -> Optional[str]:
    """None when recording ``what`` exists, else a sentence saying how it is made."""
    if what in present(root):
        return None
    return (f"data/{PREFIX}{what}* not recorded yet: it is written on the H200 by scripts/gpu/machine.sh "
            f"(STEPS=machine bash scripts/gpu_verify.sh)")
