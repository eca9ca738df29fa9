"""The CI side of the proof: the recorded PTX on the SIMT machine, compared with the H200's outputs.

For every recorded launch (:mod:`helpers.recording.proof.launches`) and generated program
(:mod:`helpers.recording.proof.programs`) the machine runs the very PTX the GPU ran, on inputs rebuilt from
the seed (their checksum must equal the recorded one), and each output is compared as its region
says:

* ``exact``: bit for bit, wherever the machine says the element is defined (``Report.undefined``);
* ``multiset`` / ``multiset_prefix:ARG``: as multisets of bit patterns (what atomics put in an order
  the hardware leaves free: tickets, the runs of a warp-aggregated compaction);
* ``float_sum``: a float atomicAdd whose order is free: both the H200's and the machine's value must
  lie within the float32 rounding bound of the exact sum of the recorded terms;
* ``at_least``: a count the contract bounds from below only (coalesced groups): the H200's value
  is at least the machine's; ``none``: never compared (clock readings).

A launch that is undefined by its kernel's contract (:func:`helpers.recording.proof.launches.undefined_by_contract`)
has no output compared as a number: every element counts as undefined, and what the machine
reported is kept in ``issues``. Where a family declares the machine's findings
(:func:`helpers.recording.proof.launches.expected_findings`: none at all for v9), any other
set of findings is a mismatch.

:func:`replay_kernels` and :func:`replay_programs` return one :class:`Outcome` per item;
:func:`summary` counts them. Nothing here needs a GPU.
"""
from __future__ import annotations

import functools
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from helpers.recording.proof import launches, programs, rand, store
from helpers.topics.launch import bits

FULL_ENV = "WARPLAB_PROOF"   # every recorded launch, in CI too; "sample": a quicker sample, for local runs


@dataclass
class Outcome:
    """One launch or program on the machine, against the recording.

    status: "match" (every defined element equal), "mismatch", "machine_error" (the machine raised),
            "inputs_differ" (rebuilt inputs do not match the recorded checksum), "not_recorded"
            (the H200 run failed for this item).
    """

    key: str
    name: str
    status: str
    compared: int = 0            # output elements compared
    undefined: int = 0           # output elements the machine marked undefined (not compared)
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    issues: tuple[str, ...] = ()  # kinds the machine reported
    error: str = ""
    seconds: float = 0.0

    def add(self, compared: int, undefined: int, mismatches: list[dict[str, Any]]) -> None:
        """Count one comparison's elements; any mismatch makes the outcome a "mismatch"."""
        self.compared += compared
        self.undefined += undefined
        self.mismatches += mismatches
        if mismatches:
            self.status = "mismatch"


def full() -> bool:
    """Whether to replay every recorded launch: yes, unless ``WARPLAB_PROOF=sample``."""
    return os.environ.get(FULL_ENV, "").strip().lower() != "sample"


@functools.lru_cache(maxsize=64)
def _machine_module(ptx: str) -> Any:
    from helpers import machine

    return machine.RawModule(ptx=ptx)


def compare_exact(name: str, hw: np.ndarray, got: np.ndarray, undefined: Optional[np.ndarray],
                  lo: int = 0, hi: Optional[int] = None) -> tuple[int, int, list[dict[str, Any]]]:
    """(compared, undefined, mismatches) over ``[lo, hi)``: bit for bit where defined."""
    hi = hw.size if hi is None else hi
    h, g = bits(hw.reshape(-1)[lo:hi]), bits(got.reshape(-1)[lo:hi])
    und = np.zeros(h.shape, bool) if undefined is None else np.asarray(undefined).reshape(-1)[lo:hi]
    bad = np.nonzero((h != g) & ~und)[0]
    out = [{"arg": name, "index": int(lo + i), "hw": hw.reshape(-1)[lo + i].item(), "machine": got.reshape(-1)[lo + i].item()}
           for i in bad[:8]]
    if len(bad) > 8:
        out.append({"arg": name, "more": int(len(bad) - 8)})
    return int((~und).sum()), int(und.sum()), out


def compare_at_least(name: str, hw: np.ndarray, got: np.ndarray,
                     undefined: Optional[np.ndarray]) -> tuple[int, int, list[dict[str, Any]]]:
    """(compared, undefined, mismatches): the H200's value must be >= the machine's where defined."""
    und = np.zeros(hw.size, bool) if undefined is None else np.asarray(undefined).reshape(-1)
    bad = np.nonzero((hw.reshape(-1) < got.reshape(-1)) & ~und)[0]
    return int((~und).sum()), int(und.sum()), [{"arg": name, "index": int(i), "hw": hw.reshape(-1)[i].item(),
                                               "machine (a lower bound)": got.reshape(-1)[i].item()} for i in bad[:8]]


def compare_multiset(name: str, hw: np.ndarray, got: np.ndarray, undefined: Optional[np.ndarray],
                     lo: int, hi: int) -> tuple[int, int, list[dict[str, Any]]]:
    h, g = bits(hw.reshape(-1)[lo:hi]), bits(got.reshape(-1)[lo:hi])
    und = np.zeros(h.shape, bool) if undefined is None else np.asarray(undefined).reshape(-1)[lo:hi]
    if und.any():
        return 0, int(und.sum()), []       # a multiset with undefined members is not comparable
    if np.array_equal(np.sort(h), np.sort(g)):
        return int(h.size), 0, []
    return int(h.size), 0, [{"arg": name, "index": lo, "hw": "multiset", "machine": "differs",
                             "only_hw": np.setdiff1d(h, g)[:4].tolist(), "only_machine": np.setdiff1d(g, h)[:4].tolist()}]


def compare_float_sum(name: str, hw: np.ndarray, got: np.ndarray, undefined: Optional[np.ndarray], index: int,
                      terms: np.ndarray) -> tuple[int, int, list[dict[str, Any]]]:
    if undefined is not None and np.asarray(undefined).reshape(-1)[index]:
        return 0, 1, []
    t = terms[bits(terms) != programs.SENTINEL32]
    exact, bound = programs.float_sum_bound(t)
    bad = []
    for who, v in (("hw", float(hw.reshape(-1)[index])), ("machine", float(got.reshape(-1)[index]))):
        if not abs(v - exact) <= bound:
            bad.append({"arg": name, "index": index, who: v, "exact": exact, "bound": bound})
    return 1, 0, bad


def _run(fn: Any, obj: Any, args: list[Any]) -> Any:
    return fn(obj.grid, obj.block, tuple(args), shared_mem=obj.shared_mem)


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _on_machine(o: Outcome, row: dict[str, Any], checksum: Callable[[], int], run: Callable[[], Any]) -> Any:
    """What ``run()`` (the machine's run of a recorded item) returns, timed into ``o``; None, with
    ``o.status`` saying why, where the H200 run failed ("not_recorded"), the inputs rebuilt from the
    seed do not have the recorded ``checksum()`` ("inputs_differ") or the machine raised ("machine_error")."""
    if row["status"] != "ok":
        o.status, o.error = "not_recorded", row["status"]
        return None
    if checksum() != row["checksum"]:
        o.status = "inputs_differ"
        return None
    t0 = time.perf_counter()
    try:
        return run()
    except Exception as exc:   # the machine refused or failed: reported, never hidden
        o.status, o.error = "machine_error", _error(exc)
        return None
    finally:
        o.seconds = time.perf_counter() - t0


# ------------------------------------------------------------------------------ kernels

class KernelRecording:
    """``data/machine_kernels.*``: modules (PTX, mangled names) and launches with the H200's outputs."""

    def __init__(self, root: Optional[Path] = None) -> None:
        self.meta = store.read_json_gz(store.KERNELS, root)
        self.arrays = store.read_arrays(store.KERNELS, root)
        self.stamp = self.meta["stamp"]
        self.rows = self.meta["launches"]

    def sample(self, budget_threads: int = 60_000) -> list[dict[str, Any]]:
        """Every (file, family) at least once (its smallest launch), then the smallest others until
        ``budget_threads`` threads in all: what ``WARPLAB_PROOF=sample`` runs (by default, CI included, all run)."""
        rows = [r for r in self.rows if r["status"] == "ok"]
        key = lambda r: int(np.prod(r["launch"]["grid"]) * np.prod(r["launch"]["block"]))  # noqa: E731
        picked, seen, used = [], set(), 0
        for r in sorted(rows, key=key):
            g = (r["launch"]["file"], r["launch"]["family"])
            if g not in seen:
                seen.add(g)
                picked.append(r)
                used += key(r)
        for r in sorted(rows, key=key):
            if r not in picked and used + key(r) <= budget_threads:
                picked.append(r)
                used += key(r)
        return sorted(picked, key=lambda r: r["key"])


def _run_launch(rec: KernelRecording, launch: launches.Launch, args: list[Any]) -> Any:
    mod = rec.meta["modules"][launch.file]
    return _run(_machine_module(mod["ptx"]).get_function(mod["lowered"][launch.expr]), launch, args)


def replay_launch(rec: KernelRecording, row: dict[str, Any]) -> Outcome:
    launch = launches.Launch.from_dict(row["launch"])
    o = Outcome(row["key"], launch.id, "match")
    args = launches.arguments(launch)
    report = _on_machine(o, row, lambda: launches.input_checksum(launch, args), lambda: _run_launch(rec, launch, args))
    if report is None:
        return o
    o.issues = tuple(sorted({f.kind for f in report.issues}))
    expected = launches.expected_findings(launch)
    found = tuple(sorted(f.kind for f in report.issues))
    if expected is not None and found != expected:
        o.add(0, 0, [{"arg": "findings", "hw": f"expected {list(expected)}", "machine": list(found)}])
    fam, _ = launches.family_of(launch.file, launch.expr)
    names = [a.name for a in fam.args]
    for pos, arg in launches.output_names(launch):
        hw = rec.arrays[f"{row['key']}.{arg.name}"]
        got, und = args[pos], report.undefined[pos]
        if arg.compare == "none":
            continue
        if launches.undefined_by_contract(launch):   # undefined on purpose: never compared as numbers
            o.add(0, int(hw.size), [])
            continue
        if arg.compare == "at_least":
            parts = [compare_at_least(arg.name, hw, got, und)]
        elif arg.compare.startswith("multiset_prefix:"):
            cpos = names.index(arg.compare.split(":", 1)[1])
            n_hw = int(rec.arrays[f"{row['key']}.{names[cpos]}"][0])
            n_got = int(args[cpos][0])
            parts = [compare_multiset(arg.name, hw, got, und, 0, n_hw),
                     compare_exact(arg.name, hw, got, und, n_hw)] if n_hw == n_got else [(0, 0, [])]
        else:
            parts = [compare_exact(arg.name, hw, got, und)]
        for part in parts:
            o.add(*part)
    return o


def replay_kernels(rec: Optional[KernelRecording] = None, rows: Optional[Sequence[dict[str, Any]]] = None,
                   root: Optional[Path] = None) -> list[Outcome]:
    rec = rec or KernelRecording(root)
    chosen = rows if rows is not None else (rec.rows if full() else rec.sample())
    return [replay_launch(rec, r) for r in chosen]


# ------------------------------------------------------------------------------ programs

class ProgramRecording:
    """``data/machine_programs.*``: modules (PTX) and programs with the H200's outputs."""

    def __init__(self, root: Optional[Path] = None) -> None:
        self.meta = store.read_json_gz(store.PROGRAMS, root)
        self.arrays = store.read_arrays(store.PROGRAMS, root)
        self.stamp = self.meta["stamp"]

    def items(self) -> Iterable[tuple[dict[str, Any], dict[str, Any]]]:
        """(module, program row) for every recorded program."""
        for m in self.meta["modules"]:
            for p in m["programs"]:
                yield m, p

    @property
    def count(self) -> int:
        return sum(len(m["programs"]) for m in self.meta["modules"])


_KEEP = ("name", "seed", "source", "grid", "block", "shared_mem", "features", "intent")


def program_of(row: dict[str, Any]) -> programs.Program:
    return programs.Program.from_dict({k: row[k] for k in _KEEP})


_RUNS: dict[tuple[str, int], tuple[programs.Program, list[np.ndarray], Any]] = {}


def run_program(module: dict[str, Any], row: dict[str, Any]) -> tuple[programs.Program, list[np.ndarray], Any]:
    """(program, its arguments after the launch, the machine's Report) -- raises what the machine raises.

    Cached for the process, so the sanitizer check reuses the replay's runs of the same programs."""
    key = (row["name"], hash(module["ptx"]))
    if key not in _RUNS:
        p = program_of(row)
        args = programs.arguments(p)
        report = _run(_machine_module(module["ptx"]).get_function(p.name), p, args)
        _RUNS[key] = (p, args, report)
    p, args, report = _RUNS[key]
    return p, [a.copy() for a in args], report


def replay_program(rec: ProgramRecording, module: dict[str, Any], row: dict[str, Any]) -> Outcome:
    o = Outcome(row["name"], row["name"], "match")
    ran = _on_machine(o, row, lambda: rand.checksum(*programs.arguments(program_of(row))),
                      lambda: run_program(module, row))
    if ran is None:
        return o
    p, args, report = ran
    o.issues = tuple(sorted({f.kind for f in report.issues}))
    lay = programs.layout(p.threads)
    for pos, name in ((2, "iout"), (3, "fout")):
        hw, got, und = rec.arrays[f"{p.name}.{name}"], args[pos], report.undefined[pos]
        for mode, lo, hi in programs.regions(p)[name]:
            if mode == "exact":
                o.add(*compare_exact(name, hw, got, und, lo, hi))
            elif mode == "multiset":
                o.add(*compare_multiset(name, hw, got, und, lo, hi))
            else:
                terms = hw[lay["float_terms"]:lay["float_terms"] + p.threads]
                o.add(*compare_float_sum(name, hw, got, und, lo, terms))
    return o


def replay_programs(rec: Optional[ProgramRecording] = None, names: Optional[set[str]] = None,
                    root: Optional[Path] = None) -> list[Outcome]:
    rec = rec or ProgramRecording(root)
    return [replay_program(rec, m, p) for m, p in rec.items() if names is None or p["name"] in names]


# ------------------------------------------------------------------------------ summaries

def summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Counts by status, elements compared and undefined, the first failures, total machine time."""
    by: dict[str, int] = {}
    for o in outcomes:
        by[o.status] = by.get(o.status, 0) + 1
    errors: dict[str, int] = {}
    for o in outcomes:   # grouped by message, registers and line numbers left out
        if o.status == "machine_error":
            key = re.sub(r"%\w+|:\d+|\(no single source line\)", "", o.error.split(" at ")[0])
            errors[key] = errors.get(key, 0) + 1
    return {"items": len(outcomes), "by_status": by, "compared": sum(o.compared for o in outcomes),
            "undefined": sum(o.undefined for o in outcomes), "seconds": round(sum(o.seconds for o in outcomes), 2),
            "machine_errors": dict(sorted(errors.items(), key=lambda kv: -kv[1])[:10]),
            "mismatches": [{"item": o.name, **m} for o in outcomes if o.status == "mismatch" for m in o.mismatches[:2]][:20]}


def failures(s: dict[str, Any]) -> dict[str, Any]:
    """What in a :func:`summary` breaks the proof: inputs rebuilt from the seeds that differ from the
    H200's, machine errors (grouped by message) and mismatches (the first ones). Empty: the replay holds."""
    out: dict[str, Any] = {}
    if s["by_status"].get("inputs_differ"):
        out["inputs_differ"] = f"{s['by_status']['inputs_differ']} items: inputs rebuilt from the seeds differ from the H200's"
    if s["machine_errors"]:
        out["machine_errors"] = s["machine_errors"]
    if s["by_status"].get("mismatch"):
        out["mismatches"] = s["mismatches"]
    return out


def format_summary(title: str, s: dict[str, Any]) -> str:
    lines = [f"{title}: {s['items']} items {s['by_status']}, {s['compared']} elements compared, "
             f"{s['undefined']} undefined (not compared), machine {s['seconds']} s"]
    lines += [f"  machine error x{n}: {e}" for e, n in s["machine_errors"].items()]
    lines += [f"  mismatch: {m}" for m in s["mismatches"][:10]]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ command line

_LOADED: dict[tuple[str, Optional[str]], Any] = {}


def recording(what: str, root: Optional[Path | str] = None) -> Any:
    """The :class:`KernelRecording` (``what="kernels"``) or :class:`ProgramRecording` (``"programs"``)
    under ``root`` (default data/), loaded once per process (forked workers inherit the parent's copy)."""
    key = (what, str(root) if root else None)
    if key not in _LOADED:
        r = Path(root) if root else None
        _LOADED[key] = KernelRecording(r) if what == "kernels" else ProgramRecording(r)
    return _LOADED[key]


def _chunk(args: tuple[str, list[str], Optional[str]]) -> list[dict[str, Any]]:
    what, keys, root = args
    rec = recording(what, root)
    want = set(keys)
    if what == "kernels":
        out = replay_kernels(rec, [x for x in rec.rows if x["key"] in want])
    else:
        out = replay_programs(rec, names=want)
    return [vars(o) for o in out]


def ci_jobs() -> int:
    """Processes for the CI replay: ``WARPLAB_PROOF_JOBS``, else the CPU count (at most 8)."""
    env = os.environ.get("WARPLAB_PROOF_JOBS", "").strip()
    return max(1, int(env)) if env.isdigit() else max(1, min(os.cpu_count() or 1, 8))


def _chunks(what: str, rec: Any, keys: Sequence[str], jobs: int) -> list[list[str]]:
    """Work units: for programs one module each (its PTX is parsed by one process only), for kernel
    launches about 8 per process, dealt largest first so that the processes finish together."""
    want = set(keys)
    if what == "programs":
        return [c for c in ([p["name"] for p in m["programs"] if p["name"] in want] for m in rec.meta["modules"]) if c]
    rows = sorted((r for r in rec.rows if r["key"] in want),
                  key=lambda r: -int(np.prod(r["launch"]["grid"]) * np.prod(r["launch"]["block"])))
    n = max(1, min(len(rows), jobs * 8))
    return [c for c in ([r["key"] for r in rows[i::n]] for i in range(n)) if c]


def run_parallel(what: str, jobs: int, root: Optional[Path] = None,
                 keys: Optional[Sequence[str]] = None) -> list[Outcome]:
    """Every recorded launch (``what="kernels"``) or program (``"programs"``), or those named in
    ``keys``, split over ``jobs`` processes (CI, and the GPU host's replay step). The recording is
    loaded once, before the processes fork."""
    import concurrent.futures as cf
    import multiprocessing as mp

    r = str(root) if root else None
    rec = recording(what, r)
    if keys is None:
        keys = [x["key"] for x in rec.rows] if what == "kernels" else [p["name"] for _, p in rec.items()]
    chunks = _chunks(what, rec, keys, jobs)
    if jobs <= 1 or len(chunks) <= 1:
        return [Outcome(**d) for c in chunks for d in _chunk((what, c, r))]
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as ex:
        parts = ex.map(_chunk, [(what, c, r) for c in chunks])
        return [Outcome(**d) for part in parts for d in part]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python3 -m helpers.recording.proof.replay [--jobs N] [--out FILE.json]``: every recording on the machine."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python3 -m helpers.recording.proof.replay", description=main.__doc__)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--what", default="kernels,programs")
    parser.add_argument("--only", default="", help="comma-separated launch keys or program names (default: all)")
    args = parser.parse_args(argv)
    only = [k for k in args.only.split(",") if k] or None
    report: dict[str, Any] = {}
    status = 0
    for what in args.what.split(","):
        reason = store.missing_reason(what)
        if reason:
            print(f"{what}: skipped ({reason})")
            continue
        t0 = time.time()
        rec = recording(what)
        known = {x["key"] for x in rec.rows} if what == "kernels" else {p["name"] for _, p in rec.items()}
        keys = None if only is None else [k for k in only if k in known]
        if keys == []:
            continue
        out = run_parallel(what, args.jobs, keys=keys)
        s = summary(out)
        s["wall_seconds"] = round(time.time() - t0, 1)
        report[what] = {"summary": s, "failures": [vars(o) for o in out if o.status != "match"][:200]}
        which = "all" if keys is None else f"{len(keys)} named"
        print(format_summary(f"{what} ({which}, {args.jobs} processes, {s['wall_seconds']} s)", s), flush=True)
        if set(s["by_status"]) - {"match"}:
            status = 1
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, default=str))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
