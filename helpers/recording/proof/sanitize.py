"""compute-sanitizer on the generated programs, one verdict per program, and what it cannot see.

:func:`record` (on the H200, from :mod:`helpers.recording.proof.record`) runs the first
:data:`~helpers.recording.proof.batches.SANITIZER_MODULES` program modules (250 programs) under ``racecheck``
(``--racecheck-report analysis``) and ``synccheck``, one worker process per module and tool, each
program launched and synchronised on its own between ``@@start`` / ``@@done`` markers. A report is
attributed to the program named in it (``at prog_00012+0x90 in progmod_000.cu:41``), else to the
program running when it was printed. synccheck stops a kernel at a divergent barrier and the CUDA
context with it; the worker is then restarted past that program (:func:`helpers.recording.proof.batches.run_batch`).

Two experiments record what compute-sanitizer does not see, for the machine to report anyway:

* ``pooled``: the seed's ``reduce_v4`` on n = 1000 (it reads up to element 1023) with CuPy's memory
  pool on: the 4000-byte array sits in a 4096-byte pool block, so memcheck sees no invalid read;
  ``exact``: the same launch with the pool off (every array its own cudaMalloc): memcheck reports it.
* ``exited``: ``shfl_down`` with a full mask in warps where lanes have exited, under memcheck,
  racecheck, synccheck and initcheck: none of them reports the undefined reads.

:func:`parse_log` is a pure function of the text (tested without a GPU).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from helpers.recording.proof import store
from helpers.recording.proof.batches import SANITIZER_MODULES, Batch, log, run_batches

TOOLS: tuple[str, ...] = ("racecheck", "synccheck")
SANITIZER = ("compute-sanitizer", "--show-backtrace", "no", "--print-limit", "100000")
TOOL_OPTIONS: dict[str, tuple[str, ...]] = {"racecheck": ("--racecheck-report", "analysis")}

_HEADLINE = re.compile(r"^=+ (\S.*)$")
_NOT_A_REPORT = re.compile(r"^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Target application "
                           r"returned|Program hit|Saved host backtrace)")
_KERNEL_AT = re.compile(r"\bat (prog_\d+)\+0x[0-9a-fA-F]+")
_MARK = re.compile(r"^@@(start|done|error) (\S+)")


def parse_log(text: str) -> dict[str, dict[str, Any]]:
    """Per item key: ``{"reports", "errors", "warnings", "first", "killed"}`` from a worker's output
    under compute-sanitizer. ``first`` holds up to three report headlines (addresses masked)."""
    out: dict[str, dict[str, Any]] = {}
    current: Optional[str] = None
    block: list[str] = []

    def entry(key: str) -> dict[str, Any]:
        return out.setdefault(key, {"reports": 0, "errors": 0, "warnings": 0, "first": [], "killed": False})

    def flush() -> None:
        if not block:
            return
        head = block[0]
        names = [m.group(1) for line in block for m in [_KERNEL_AT.search(line)] if m]
        key = names[0] if names else current
        if key is not None:
            e = entry(key)
            e["reports"] += 1
            e["warnings" if head.startswith("Warning") else "errors"] += 1
            masked = re.sub(r"0x[0-9a-fA-F]+", "0x...", head)
            if len(e["first"]) < 3 and masked not in e["first"]:
                e["first"].append(masked)
        block.clear()

    for line in text.splitlines():
        m = _MARK.match(line)
        if m:
            flush()
            if m.group(1) == "start":
                current = m.group(2)
                entry(current)
            elif m.group(1) == "error":
                entry(m.group(2))["killed"] = True
            continue
        h = _HEADLINE.match(line)
        if h and not _NOT_A_REPORT.match(h.group(1)):
            flush()
            block.append(h.group(1))
        elif block and line.startswith("="):
            if line.strip("= ").strip():
                block.append(line)
            else:
                flush()
    flush()
    return out


def verdict(entry: Optional[dict[str, Any]]) -> str:
    """"clean", "reported" (the tool printed a hazard or error for it) or "not run"."""
    if entry is None:
        return "not run"
    return "reported" if entry["reports"] or entry["killed"] else "clean"


def sample_batches(root: Optional[Path] = None) -> list[Any]:
    """One :class:`~helpers.recording.proof.batches.Batch` per sampled program module, from the recorded PTX."""
    rec = store.read_json_gz(store.PROGRAMS, root)
    keep = ("name", "seed", "source", "grid", "block", "shared_mem", "features", "intent")
    return [Batch(m["name"], m["ptx"], [{"key": p["name"], "function": p["name"], "kind": "program",
                                         "item": {k: p[k] for k in keep}} for p in m["programs"]])
            for m in rec["modules"][:SANITIZER_MODULES]]


def merge_logs(texts: Sequence[str]) -> dict[str, dict[str, Any]]:
    """:func:`parse_log` over every attempt of one batch, summed per key."""
    merged: dict[str, dict[str, Any]] = {}
    for text in texts:
        for k, e in parse_log(text).items():
            if k not in merged:
                merged[k] = e
                continue
            for f in ("reports", "errors", "warnings"):
                merged[k][f] += e[f]
            merged[k]["killed"] |= e["killed"]
            merged[k]["first"] = (merged[k]["first"] + [h for h in e["first"] if h not in merged[k]["first"]])[:3]
    return merged


def run_sample(work: Path, jobs: int, sanitizer: Sequence[str] = SANITIZER,
               root: Optional[Path] = None) -> dict[str, dict[str, Any]]:
    """{program: {"module", TOOL: {"verdict", "status", "reports", "errors", "warnings", "first", "killed"}}}."""
    verdicts: dict[str, dict[str, Any]] = {}
    for tool in TOOLS:
        prefix = (*sanitizer, "--tool", tool, *TOOL_OPTIONS.get(tool, ())) if sanitizer else ()
        done = run_batches(sample_batches(root), work / f"sanitizer_{tool}", jobs=min(jobs, 10), prefix=prefix,
                           timeout=300)
        for b in done:
            parsed = merge_logs(b.logs)
            for it in b.items:
                k = it["key"]
                e = parsed.get(k)
                status = b.results.get(k, "not run")
                v = verdict(e) if (status == "ok" or (e and (e["reports"] or e["killed"]))) else "not run"
                verdicts.setdefault(k, {"module": b.module})[tool] = {"verdict": v, "status": status, **(e or {})}
    return verdicts


def record(work: Path, jobs: int, stamp: dict[str, str], dry_run: bool = False) -> dict[str, Any]:
    """Run the sample under each tool and the experiments; write ``data/machine_sanitizer.json``.
    ``dry_run``: no compute-sanitizer (the workers run bare, the experiments are skipped)."""
    reason = store.missing_reason("programs")
    if reason:
        log(f"  sanitizer: skipped, {reason}")
        return {"skipped": reason}
    verdicts = run_sample(work, jobs, sanitizer=() if dry_run else SANITIZER)
    experiments = [] if dry_run else run_experiments(work)
    counts = {t: {v: sum(1 for r in verdicts.values() if r.get(t, {}).get("verdict") == v)
                  for v in ("clean", "reported", "not run")} for t in TOOLS}
    store.write_json(store.SANITIZER, {"tools": list(TOOLS), "options": {t: [*SANITIZER[1:], *TOOL_OPTIONS.get(t, ())]
                                                                          for t in TOOLS},
                                       "counts": counts, "programs": verdicts, "experiments": experiments}, stamp)
    log(f"  sanitizer: {len(verdicts)} programs; {counts}")
    for e in experiments:
        log(f"    experiment {e['name']} under {e['tool']}: {e['verdict']} ({e['errors']} errors)")
    return {"programs": len(verdicts), "counts": counts, "experiments": len(experiments)}


# ------------------------------------------------------------------------------ experiments

EXPERIMENTS: tuple[tuple[str, str], ...] = (
    ("pooled", "memcheck"), ("exact", "memcheck"),
    ("exited", "memcheck"), ("exited", "racecheck"), ("exited", "synccheck"), ("exited", "initcheck"),
)
POOLED_N = 1000          # the seed kernel reads up to ceil(n / 256) * 256 - 1 = 1023
EXITED_WARPS = 64


def exited_inputs(n_warps: int = EXITED_WARPS) -> tuple[np.ndarray, ...]:
    """(values, operand, masks, active) for the shuffle_kernel<int, 2> (shfl_down) experiment:
    full masks, about one lane in five exited, delta 1..16 per warp (from :mod:`helpers.recording.proof.rand`)."""
    from helpers.recording.proof import rand

    s = rand.Stream(1111)
    values = np.arange(n_warps * 32, dtype=np.int32)
    active = (s.unit(n_warps * 32) >= 0.2).astype(np.uint8)
    delta = np.repeat(s.integers(1, 17, n_warps), 32).astype(np.int32)
    masks = np.full(n_warps, 0xFFFFFFFF, np.uint32)
    return values, delta, masks, active


def seed_inputs(n: int = POOLED_N) -> np.ndarray:
    from helpers.recording.proof import rand

    return rand.Stream(n).integers(-4, 5, n).astype(np.float32)


def _target(kind: str, root: Optional[Path] = None) -> int:
    """Run one experiment's launch on the GPU (from the recorded kernel PTX); print one line."""
    import cupy

    from helpers.recording.proof.worker import gpu_module

    rec = store.read_json_gz(store.KERNELS, root)
    if kind in ("pooled", "exact"):
        if kind == "exact":
            cupy.cuda.set_allocator(None)      # exact-size allocations: memcheck sees one past the end
        mod = rec["modules"]["seed_reduce_v4"]
        fn = gpu_module(mod["ptx"]).get_function(mod["lowered"]["seed_reduce_v4<128>"])
        x = cupy.asarray(seed_inputs())
        grid = -(-POOLED_N // 256)
        out = cupy.zeros(grid, cupy.float32)
        fn((grid,), (128,), (x, out))
    else:
        mod = rec["modules"]["warp_intrinsics"]
        fn = gpu_module(mod["ptx"]).get_function(mod["lowered"]["shuffle_kernel<int, 2>"])
        values, delta, masks, active = (cupy.asarray(a) for a in exited_inputs())
        out, src = cupy.zeros(values.size, cupy.int32), cupy.full(values.size, -1, cupy.int32)
        fn((EXITED_WARPS * 32 // 256,), (256,), (values, delta, masks, active, np.int32(32), np.int32(EXITED_WARPS),
                                                 out, src))
    cupy.cuda.runtime.deviceSynchronize()
    print(f"@@experiment {kind} ran", flush=True)
    return 0


def run_experiments(work: Path) -> list[dict[str, Any]]:
    """Every (experiment, tool) of :data:`EXPERIMENTS` under compute-sanitizer, in parallel."""
    import concurrent.futures as cf

    work.mkdir(parents=True, exist_ok=True)
    with cf.ThreadPoolExecutor(max_workers=len(EXPERIMENTS)) as ex:
        return list(ex.map(lambda e: _experiment(work, *e), EXPERIMENTS))


def _experiment(work: Path, kind: str, tool: str) -> dict[str, Any]:
    cmd = [*SANITIZER, "--tool", tool, sys.executable, "-m", "helpers.recording.proof.sanitize", kind]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        text, rc = "@@timeout", 124
    except OSError as exc:     # no compute-sanitizer on this machine
        text, rc = f"@@not run: {exc}", 127
    (work / f"experiment_{kind}_{tool}.log").write_text(text)
    m = re.search(r"ERROR SUMMARY:\s*(\d+)", text)
    race = re.search(r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*\(\s*(\d+)\s+errors?,\s*(\d+)\s+warnings?", text)
    errors = int(m.group(1)) if m else (int(race.group(2)) + int(race.group(3)) if race else -1)
    hazards = int(race.group(1)) if race else 0
    ran = "@@experiment" in text
    entry = {"name": kind, "tool": tool, "exit_code": rc, "ran": ran, "errors": errors, "hazards": hazards,
             "first": [re.sub(r"0x[0-9a-fA-F]+", "0x...", h.group(1)) for line in text.splitlines()
                       for h in [_HEADLINE.match(line)] if h and not _NOT_A_REPORT.match(h.group(1))][:3]}
    return {**entry, "verdict": experiment_verdict(entry)}


def experiment_verdict(entry: dict[str, Any]) -> str:
    """"reported" when the tool reported errors or hazards, "clean" when the launch ran to its end with
    none, else "failed". A report counts even when the launch did not finish: memcheck aborts a
    kernel at its first invalid access, so the process then fails after printing the report (the
    ``exact`` experiment: 31 "Invalid __global__ read" errors, exit code 1)."""
    if entry.get("errors", -1) > 0 or entry.get("hazards", 0) > 0:
        return "reported"
    return "clean" if entry.get("ran") and entry.get("errors", -1) == 0 else "failed"


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in {k for k, _ in EXPERIMENTS}:
        print(f"usage: python3 -m helpers.recording.proof.sanitize {'|'.join(sorted({k for k, _ in EXPERIMENTS}))}",
              file=sys.stderr)
        return 2
    return _target(argv[0])


if __name__ == "__main__":
    raise SystemExit(main())
