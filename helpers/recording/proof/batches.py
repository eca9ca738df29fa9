"""Running recorded launches in worker processes (:mod:`helpers.recording.proof.worker`), several at a
time: a :class:`Batch` is one module's PTX and items; a worker whose context dies is restarted past the item
that killed it. Shared by the recordings (:mod:`helpers.recording.proof.record`) and the sanitizer runs
(:mod:`helpers.recording.proof.sanitize`), which sit above it.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

SANITIZER_MODULES = 5        # the first 5 program modules (250 programs) go under the sanitizers


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Batch:
    """The items of one module for :func:`run_batches`."""

    module: str
    ptx: str
    items: list[dict[str, Any]]            # {"key", "function", "kind", "item"}
    results: dict[str, str] = field(default_factory=dict)   # key -> "ok" | "failed: ..."
    logs: list[str] = field(default_factory=list)


_MARK = re.compile(r"^@@(start|done|error) (\S+)(.*)$")


def _run_worker(batch: Batch, items: list[dict[str, Any]], work: Path, tag: str, prefix: Sequence[str],
                timeout: float) -> tuple[str, int, Path]:
    spec_path = work / f"{tag}.spec.json"
    ptx_path = work / f"{batch.module}.ptx"
    if not ptx_path.exists():
        ptx_path.write_text(batch.ptx)
    spec_path.write_text(json.dumps({"ptx": str(ptx_path), "items": items}))
    out = work / tag
    cmd = [*prefix, sys.executable, "-m", "helpers.recording.proof.worker", str(spec_path), str(out)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "PYTHONUNBUFFERED": "1"})
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        text += f"\n@@timeout after {timeout} s\n"
        rc = 124
    return text, rc, out


def run_batch(batch: Batch, work: Path, prefix: Sequence[str] = (), timeout: float = 120.0,
              collect: Optional[Callable[[Path], None]] = None) -> Batch:
    """Run every item of ``batch``; after a crash, restart past the item that was running."""
    todo = list(batch.items)
    attempt = 0
    while todo:
        tag = f"{batch.module}.{attempt}"
        text, rc, out = _run_worker(batch, todo, work, tag, prefix, timeout)
        batch.logs.append(text)
        started, done = [], set()
        for line in text.splitlines():
            m = _MARK.match(line)
            if m:
                (started.append if m.group(1) == "start" else done.add)(m.group(2))
                if m.group(1) == "error":
                    batch.results[m.group(2)] = f"failed: {m.group(3).strip()}"
        for key in done:
            if key not in batch.results:
                batch.results[key] = "ok"
        if collect is not None and Path(f"{out}.npz").exists():
            collect(out)
        keys = [it["key"] for it in todo]
        handled = {k for k in keys if k in batch.results}
        if rc != 0 and started and started[-1] not in handled:
            batch.results[started[-1]] = f"failed: worker exit {rc}"
            handled.add(started[-1])
        if not started and rc != 0:     # the worker died before its first item: give up on all
            for k in keys:
                batch.results.setdefault(k, f"failed: worker exit {rc} before any launch")
            break
        todo = [it for it in todo if it["key"] not in batch.results]
        attempt += 1
    return batch


def run_batches(batches: Sequence[Batch], work: Path, jobs: int, prefix: Sequence[str] = (), timeout: float = 120.0,
                collect: Optional[Callable[[Path], None]] = None) -> list[Batch]:
    work.mkdir(parents=True, exist_ok=True)
    with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(lambda b: run_batch(b, work, prefix, timeout, collect), batches))


