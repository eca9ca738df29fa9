"""``python3 -m helpers.recording.proof.record``: record the machine's proof on the H200 into ``data/machine_*``.

    python3 -m helpers.recording.proof.record all --work DIR        # what scripts/gpu/machine.sh runs
    python3 -m helpers.recording.proof.record kernels|programs|sanitizer --work DIR
    python3 -m helpers.recording.proof.record check [--programs N]  # no GPU: compile, plan, build every launch

Each module (a kernel file with all its registered instantiations, or 50 generated programs) is
compiled ONCE to PTX through NVRTC (:mod:`helpers.engine.nvrtc`, ``-arch=compute_90 -lineinfo``) and that
same PTX text is loaded on the GPU (``cuModuleLoadData`` via ``cupy.cuda.function.Module.load``) and
stored, so the GPU and the machine run identical PTX. Launches run in worker processes, several at a
time (:mod:`helpers.recording.proof.batches`). ``check`` runs everything that needs no GPU, so CI and the developer machine
can prove the recording side works before the H200 run.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from helpers.recording.proof import launches, programs, sanitize, store
from helpers.recording.proof.batches import Batch, log, run_batches
from helpers.recording.proof.worker import STANDIN_ENV

ARCH = "compute_90"          # the H200's; NVRTC 13 no longer compiles for sm_70
KERNEL_OPTIONS: tuple[str, ...] = ("-lineinfo",)


# ------------------------------------------------------------------------------ compiling

def compile_kernel_file(file: str, exprs: Sequence[str]) -> dict[str, Any]:
    """One kernel file with every registered instantiation: PTX, mangled names, options, log."""
    from helpers.engine import kernels

    c = kernels.compiled(file, ARCH, name_expressions=tuple(exprs), options=KERNEL_OPTIONS)
    return {"ptx": c.ptx, "lowered": c.lowered, "options": [f"-arch={ARCH}", "-std=c++17", *KERNEL_OPTIONS],
            "log": c.log}


def compile_program_module(module: programs.Module) -> dict[str, Any]:
    ptx, log_text = programs.compile_module(module, ARCH)
    return {"ptx": ptx, "options": [f"-arch={ARCH}", *programs.OPTIONS], "log": log_text}


def _pool(jobs: int) -> cf.Executor:
    return cf.ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else cf.ThreadPoolExecutor(max_workers=1)


def compile_kernels(jobs: int) -> dict[str, dict[str, Any]]:
    from helpers.topics.registry import registry

    reg = registry()
    with _pool(jobs) as ex:
        futs = {f: ex.submit(compile_kernel_file, f, exprs) for f, exprs in reg.items()}
        return {f: fut.result() for f, fut in futs.items()}


def compile_programs(mods: Sequence[programs.Module], jobs: int) -> dict[str, dict[str, Any]]:
    with _pool(jobs) as ex:
        futs = {m.name: ex.submit(compile_program_module, m) for m in mods}
        return {name: fut.result() for name, fut in futs.items()}


class _Collector:
    """Gathers the workers' npz outputs and checksums."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.sums: dict[str, int] = {}

    def __call__(self, out: Path) -> None:
        with np.load(f"{out}.npz") as z:
            for k in z.files:
                self.arrays[k] = z[k]
        if Path(f"{out}.json").exists():
            self.sums.update(json.loads(Path(f"{out}.json").read_text()))


# ------------------------------------------------------------------------------ the recordings

def _stamp() -> dict[str, str]:
    from helpers.engine import backend
    from helpers.engine import nvrtc

    return {**backend.stamp(), "nvrtc_version": nvrtc.version()}


def record_kernels(work: Path, jobs: int, stamp: dict[str, str]) -> dict[str, Any]:
    t0 = time.time()
    mods = compile_kernels(jobs)
    log(f"  kernels: {len(mods)} files compiled in {time.time() - t0:.1f} s")
    plan = list(launches.launches())
    batches = []
    for file, mod in mods.items():
        items = [{"key": f"L{i:04d}", "function": mod["lowered"][l.expr], "kind": "launch", "item": l.to_dict()}
                 for i, l in enumerate(plan) if l.file == file]
        batches.append(Batch(file, mod["ptx"], items))
    col = _Collector()
    # the largest modules (100 instantiations, ~1 MB of PTX) take the driver's JIT a while to load
    done = run_batches(batches, work / "kernels", jobs=min(jobs, 8), collect=col, timeout=240)
    status = {k: v for b in done for k, v in b.results.items()}
    rows = [{"key": f"L{i:04d}", "launch": l.to_dict(), "status": status.get(f"L{i:04d}", "not run"),
             "checksum": col.sums.get(f"L{i:04d}")} for i, l in enumerate(plan)]
    store.write_json_gz(store.KERNELS, {"stamp": stamp, "arch": ARCH, "modules": mods, "launches": rows})
    store.write_arrays(store.KERNELS, {k.replace("/", "_"): v for k, v in col.arrays.items()})
    bad = [r for r in rows if r["status"] != "ok"]
    log(f"  kernels: {len(rows)} launches, {len(bad)} not ok, {time.time() - t0:.1f} s")
    for r in bad[:10]:
        log(f"    {r['launch']['id']}: {r['status']}")
    return {"launches": len(rows), "not_ok": len(bad), "modules": len(mods)}


def record_programs(work: Path, jobs: int, stamp: dict[str, str], n_programs: int = programs.PROGRAMS) -> dict[str, Any]:
    t0 = time.time()
    mods = programs.modules(n_programs)
    compiled = compile_programs(mods, jobs)
    log(f"  programs: {len(mods)} modules compiled in {time.time() - t0:.1f} s")
    batches = [Batch(m.name, compiled[m.name]["ptx"],
                     [{"key": p.name, "function": p.name, "kind": "program", "item": p.to_dict()} for p in m.programs])
               for m in mods]
    col = _Collector()
    done = run_batches(batches, work / "programs", jobs=min(jobs, 8), collect=col)
    status = {k: v for b in done for k, v in b.results.items()}
    payload = {"stamp": stamp, "arch": ARCH, "options": list(programs.OPTIONS), "per_module": programs.PER_MODULE,
               "modules": [{"name": m.name, "ptx": compiled[m.name]["ptx"], "log": compiled[m.name]["log"],
                            "programs": [{**p.to_dict(), "status": status.get(p.name, "not run"),
                                          "checksum": col.sums.get(p.name)} for p in m.programs]} for m in mods]}
    store.write_json_gz(store.PROGRAMS, payload)
    store.write_arrays(store.PROGRAMS, col.arrays)
    bad = [k for k, v in status.items() if v != "ok"]
    log(f"  programs: {sum(len(m.programs) for m in mods)} programs, {len(bad)} not ok, {time.time() - t0:.1f} s")
    for k in bad[:10]:
        log(f"    {k}: {status[k]}")
    return {"programs": sum(len(m.programs) for m in mods), "not_ok": len(bad), "modules": len(mods)}


# v0..v4 for the counters beside ncu's; v9 so that tests/engine/test_sass.py can check, on the H200 host's own
# SASS, what the CPU's ptxas says of v9's loads in flight and its ticket
SASS_FILES: tuple[str, ...] = ("reduce_v0", "reduce_v1", "reduce_v2", "reduce_v3", "reduce_v4", "reduce_v9")


def record_sass(stamp: dict[str, str]) -> dict[str, Any]:
    """ptxas + cuobjdump on the recorded PTX of the ladder's first rungs (v0..v4) and of v9
    (:func:`helpers.engine.sass.assemble`): the SASS the GPU runs, so the machine's PTX-level counters
    can be set beside ncu's SASS-level ones (item 5)."""
    from helpers.engine import sass

    rec = store.read_json_gz(store.KERNELS)
    out: dict[str, Any] = {}
    for file in SASS_FILES:
        try:
            dump = sass.assemble(rec["modules"][file]["ptx"]).sass
            ver = subprocess.run([sass.tools()[0], "--version"], capture_output=True, text=True, timeout=30).stdout
            out[file] = {"sass": dump, "ptxas": ver.strip().splitlines()[-1] if ver.strip() else "?",
                         "lowered": rec["modules"][file]["lowered"]}
        except (sass.SassUnavailable, RuntimeError, OSError, subprocess.SubprocessError) as exc:
            out[file] = {"error": f"{type(exc).__name__}: {exc}"}
    store.write_json_gz(store.SASS, {"stamp": stamp, "arch": "sm_90", "files": out})
    ok = [f for f, v in out.items() if "sass" in v]
    log(f"  sass: {len(ok)}/{len(SASS_FILES)} files disassembled")
    return {"files": len(ok)}


def write_manifest(stamp: dict[str, str], parts: dict[str, Any]) -> Path:
    return store.write_json(store.MANIFEST, {"arch": ARCH, "parts": parts, "files": {
        "kernels": [f"{store.KERNELS}.json.gz", f"{store.KERNELS}.npz"],
        "programs": [f"{store.PROGRAMS}.json.gz", f"{store.PROGRAMS}.npz"],
        "sanitizer": [f"{store.SANITIZER}.json"], "sass": [f"{store.SASS}.json.gz"]}}, stamp)


# ------------------------------------------------------------------------------ without a GPU

def check(n_programs: int, jobs: int) -> int:
    """Everything the recording does that needs no GPU: compile every kernel module and program
    module, plan every launch, build every argument list, and check each launch's function exists."""
    t0 = time.time()
    mods = compile_kernels(jobs)
    plan = list(launches.launches())
    missing = [l.id for l in plan if l.expr not in mods[l.file]["lowered"]]
    for l in plan:
        args = launches.arguments(l)
        launches.input_checksum(l, args)
    log(f"kernels: {len(mods)} files compiled, {len(plan)} launches planned and built, "
        f"{len(missing)} without a function ({time.time() - t0:.1f} s)")
    t1 = time.time()
    pmods = programs.modules(n_programs)
    compiled = compile_programs(pmods, jobs)
    entries = sum(len(re.findall(r"^\.visible \.entry (\w+)\(", c["ptx"], re.M)) for c in compiled.values())
    contractable = sum(len(re.findall(r"^\s*(?:mul|add|sub)\.f(?:32|64)\b", c["ptx"], re.M)) for c in compiled.values())
    for m in pmods:
        for p in m.programs:
            programs.arguments(p)
    log(f"programs: {len(pmods)} modules, {entries} entries for {n_programs} programs, "
        f"{contractable} float add/mul without .rn ({time.time() - t1:.1f} s)")
    return 0 if not missing and entries == n_programs and contractable == 0 else 1


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m helpers.recording.proof.record", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("all", "kernels", "programs", "sanitizer", "check"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/warplab_proof"), help="scratch folder (PTX, logs)")
    parser.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    parser.add_argument("--programs", type=int, default=programs.PROGRAMS)
    parser.add_argument("--dry-run", type=Path, metavar="DIR",
                        help="no GPU: launches leave buffers as they are, files go to DIR (never data/)")
    args = parser.parse_args(argv)
    if args.what == "check":
        return check(args.programs, args.jobs)
    from helpers import data
    from helpers.engine import backend

    if args.dry_run is not None:
        if args.dry_run.resolve() == data.DATA_DIR.resolve():
            parser.error("--dry-run must not write into data/: recordings there come only from a GPU")
        os.environ[STANDIN_ENV] = "1"          # inherited by the workers
        data.DATA_DIR = args.dry_run
        stamp = {"gpu": "dry run, no GPU", "driver": "-", "cupy_version": "-", "nvrtc_version": "-"}
    else:
        d = backend.detect()
        if not d.usable:
            log(f"helpers.recording.proof.record needs a CUDA GPU and found none: {d.reason}.")
            return 2
        stamp = _stamp()
        log(backend.report("cupy") + f"; NVRTC {stamp['nvrtc_version']}")
    parts: dict[str, Any] = {}
    old = store.read_json(store.MANIFEST) if (store.data_dir() / f"{store.MANIFEST}.json").exists() else {}
    parts.update(old.get("parts", {}))
    if args.what in ("all", "kernels"):
        parts["kernels"] = record_kernels(args.work, args.jobs, stamp)
    if args.what in ("all", "kernels"):
        parts["sass"] = record_sass(stamp)
    if args.what in ("all", "programs"):
        parts["programs"] = record_programs(args.work, args.jobs, stamp, args.programs)
    if args.what in ("all", "sanitizer"):
        parts["sanitizer"] = sanitize.record(args.work, args.jobs, stamp, dry_run=args.dry_run is not None)
    print(f"wrote {write_manifest(stamp, parts)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
