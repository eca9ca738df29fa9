"""A real all-reduce through NCCL (``cupy.cuda.nccl``), one process per GPU: the recording of
notebook 08, ``data/allreduce_nccl.json``. Run by ``scripts/gpu/nccl_allreduce.py`` (launched by
``scripts/gpu/allreduce.sh``); the pure parts (sizes, formulas, the loader) are in
:mod:`helpers.topics.allreduce`.

What one run records, for ``world`` ranks (default: every visible GPU; 1 is allowed, a smoke test,
since one rank's all-reduce is a copy):

* **sweep**: float32 sum, out of place, message sizes 8 B .. 4 GiB (powers of two). Per size: one
  checked all-reduce (receive buffer poisoned with NaN first; rank r's element i is
  ``((7 i + 13 r) mod 17) - 8``, small integers, so any order of additions gives the exact sum;
  every element compared on the GPU with a table of sums NumPy computed, and the first and last
  4096 elements also on the host with NumPy); then warm-ups and repetitions, each a barrier, CUDA
  events around ``iters`` back-to-back all-reduces on the rank's stream, and the host-inclusive
  time of the same batch. Device time = median over repetitions of the slowest rank.
* **float_check**: random normal floats; NCCL's float32 sums against NumPy's float64 sum (inside
  the any-order bound?), NumPy's float32 sum and the emulator's ring and tree orders.
* **hierarchical**: the global sum of one shard per GPU, two ways, interleaved: each GPU reduces
  its shard with the series' fastest kernel (``v9``, notebook 07) and NCCL all-reduces the one
  float; or NCCL all-reduces the whole shard and each GPU then reduces the summed buffer.
  ``cupy.sum`` and the local kernel alone are timed in the same run as yardsticks.

NVLink SHARP (multicast, ``NCCL_NVLS_ENABLE``) is off in this process and in everything it starts:
spawned workers inherit the environment set in :func:`main`, subprocesses get
:func:`helpers.topics.allreduce.child_env`.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from helpers.topics import allreduce as A
from helpers import data
from helpers.topics import reduce as R

LOCAL_VERSION = "v9"             # notebook 07's fastest full reduction in device time (one launch)
HIER_COUNTS = (1 << 20, 1 << 24, 1 << 28)   # float32 per GPU: 4 MiB, 64 MiB, 1 GiB
FLOAT_CHECK_COUNT = 1 << 22
PERIOD = 17
SPOT = 4096
SEED = 2026
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


# ---------------------------------------------------------------- inputs and checks (NumPy side)


def pattern(rank: int, index: np.ndarray) -> np.ndarray:
    """Rank ``rank``'s input at ``index``: ``((7 i + 13 r) mod 17) - 8`` as float32 (integers in [-8, 8])."""
    return (((7 * np.asarray(index, np.int64) + 13 * rank) % PERIOD) - 8).astype(np.float32)


def expected_table(world: int) -> np.ndarray:
    """(17,) float32: the sum over ``world`` ranks of :func:`pattern` at i = 0 .. 16; element i of the
    all-reduce must equal ``table[i % 17]`` exactly (small integers: every order of additions is exact)."""
    i = np.arange(PERIOD)
    return np.sum([pattern(r, i).astype(np.float64) for r in range(world)], axis=0).astype(np.float32)


def float_inputs(rank: int, count: int) -> np.ndarray:
    """Rank ``rank``'s random input of the float check: standard normal float32, fixed seed."""
    return np.random.default_rng([SEED, rank]).standard_normal(count).astype(np.float32)


def float_check(results: np.ndarray, world: int) -> dict[str, Any]:
    """Compare NCCL's result (count,) float32 with NumPy and the emulator, for the float check inputs."""
    count = results.shape[0]
    x = np.stack([float_inputs(r, count) for r in range(world)])
    exact = x.astype(np.float64).sum(axis=0)
    bound = A.error_bound(x)
    err = np.abs(results.astype(np.float64) - exact)
    ref32 = exact.astype(np.float32)

    def equal(other: np.ndarray) -> int:
        return int((A.ulps_apart(results, other) == 0).sum())

    out = {"count": count, "seed": SEED, "max_err_over_bound": float((err / np.where(bound > 0, bound, 1)).max()),
           "within_bound": bool((err <= bound).all()), "max_ulps_vs_ref": int(A.ulps_apart(results, ref32).max()),
           "equal_to_reference": equal(ref32), "equal_to_numpy_float32": equal(np.sum(x, axis=0))}
    for name in A.ALGORITHMS:
        out[f"equal_to_emulated_{name}"] = equal(A.run(x, name).result[0]) if world > 1 else equal(x[0])
    return out


def timing_summary(per_rank: Sequence[Sequence[float]]) -> tuple[float, list[float]]:
    """(median over repetitions of the slowest rank, each rank's median) of per-rank per-repetition times."""
    reps = np.asarray(per_rank, float)          # (ranks, repetitions)
    return float(np.median(reps.max(axis=0))), [float(np.median(r)) for r in reps]


def bound_total(abs_sum: float, n_per_gpu: int, world: int, first_grid: int) -> float:
    """A bound on |float32 global sum - exact| for either way of summing ``world`` shards of
    ``n_per_gpu``: the local kernel's depth (:func:`helpers.topics.reduce.error_bound`) plus one addition per
    rank, times u times the sum of |x|."""
    depth = R.error_bound(1.0, n_per_gpu, LOCAL_VERSION, R.DEFAULT_BLOCK, first_grid) / A.U32
    return (depth + world) * A.U32 * abs_sum


# ---------------------------------------------------------------- the host (no CUDA needed)


def run_text(cmd: Sequence[str], timeout: float = 20) -> str:
    """Output of a command run with NVLS off (:func:`helpers.topics.allreduce.child_env`), ANSI codes removed;
    "unavailable: ..." if it cannot run."""
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, env=A.child_env())
        if p.returncode:
            return f"unavailable: exit {p.returncode}, {p.stderr.strip()[:200]}"
        return _ANSI.sub("", p.stdout).rstrip() or "(no output)"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable: {type(exc).__name__}: {exc}"


def host_facts() -> dict[str, str]:
    """What nvidia-smi says about the GPUs and their links."""
    return {"topology": run_text(["nvidia-smi", "topo", "-m"]),
            "nvlink_status": run_text(["nvidia-smi", "nvlink", "--status"]),
            "gpus": run_text(["nvidia-smi", "--query-gpu=index,name,pci.bus_id,memory.total", "--format=csv,noheader"])}


def env_report(where: str) -> str:
    """``where: NCCL_NVLS_ENABLE=<value>`` as this process sees it."""
    return f"{where}: {A.NVLS_VAR}={os.environ.get(A.NVLS_VAR, '<unset>')}"


def _env_child(queue: Any) -> None:
    queue.put(env_report("spawned worker"))


def print_env(inherited: Optional[str]) -> int:
    """Print NCCL_NVLS_ENABLE as the script was started with (``inherited``), and as a spawned worker
    and a subprocess see it (no GPU needed)."""
    import multiprocessing as mp

    print(f"script, as started: {A.NVLS_VAR}={inherited if inherited is not None else '<unset>'}")
    print(env_report("script, after its own setting"))
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_env_child, args=(q,))
    p.start()
    print(q.get(timeout=60))
    p.join(60)
    code = f"import os; print('subprocess: {A.NVLS_VAR}=' + os.environ.get('{A.NVLS_VAR}', '<unset>'))"
    print(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=A.child_env()).stdout.strip())
    return 0


# ---------------------------------------------------------------- one rank (one process, one GPU)


def timed_batch(comm: Any, send: Any, recv: Any, count: int, iters: int, stream: Any, events: tuple) -> float:
    """Device time of one all-reduce in microseconds: CUDA events on ``stream`` around ``iters``
    back-to-back float32-sum all-reduces, divided by ``iters``."""
    from cupy.cuda import nccl, get_elapsed_time

    start, end = events
    start.record(stream)
    for _ in range(iters):
        comm.allReduce(send.data.ptr, recv.data.ptr, count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream.ptr)
    end.record(stream)
    end.synchronize()
    return get_elapsed_time(start, end) * 1e3 / iters


def _time(fn: Any, barrier: Any, stream: Any, events: tuple, iters: int = 1) -> tuple[float, float]:
    """(device us, host-inclusive us) of ``fn()`` per call: ranks aligned by ``barrier``, CUDA events on
    ``stream`` around ``iters`` calls; the host time runs from the launch of the first to the end of the last."""
    from cupy.cuda import get_elapsed_time

    start, end = events
    barrier.wait(timeout=120)
    t0 = time.perf_counter()
    start.record(stream)
    for _ in range(iters):
        fn()
    end.record(stream)
    end.synchronize()
    host = (time.perf_counter() - t0) * 1e6 / iters
    return get_elapsed_time(start, end) * 1e3 / iters, host


class _Rank:
    """One rank's GPU, stream, communicator and buffers."""

    def __init__(self, rank: int, world: int, uid: Any, max_bytes: int):
        import cupy
        from cupy.cuda import nccl

        if os.environ.get(A.NVLS_VAR) != "0":
            raise RuntimeError(f"{A.NVLS_VAR} must be 0 in every NCCL process; this one has "
                               f"{os.environ.get(A.NVLS_VAR, '<unset>')!r}")
        self.cupy, self.nccl = cupy, nccl
        self.rank, self.world = rank, world
        self.device = cupy.cuda.Device(rank)
        self.device.use()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.events = (cupy.cuda.Event(), cupy.cuda.Event())
        self.comm = nccl.NcclCommunicator(world, uid, rank)
        count = max_bytes // 4
        self.send = cupy.empty(count, cupy.float32)
        self.recv = cupy.empty(count, cupy.float32)
        self._mismatch = cupy.ElementwiseKernel("raw float32 table, float32 got", "bool bad",
                                                f"bad = !(got == table[i % {PERIOD}])", "warplab_allreduce_check")
        fill = cupy.ElementwiseKernel("int32 rank", "float32 x",
                                      f"x = (float)(((7 * (long long)i + 13 * rank) % {PERIOD}) - 8)",
                                      "warplab_allreduce_pattern")
        with self.stream:   # everything on this rank's stream (non-blocking: it does not wait for stream 0)
            fill(np.int32(rank), self.send)
            self.table = cupy.asarray(expected_table(world))
        self.stream.synchronize()

    def allreduce(self, count: int, send: Any = None, recv: Any = None) -> None:
        send = self.send if send is None else send
        recv = self.recv if recv is None else recv
        self.comm.allReduce(send.data.ptr, recv.data.ptr, count, self.nccl.NCCL_FLOAT32, self.nccl.NCCL_SUM,
                            self.stream.ptr)

    def check(self, count: int) -> tuple[int, bool]:
        """(elements that differ from NumPy's table, on the GPU; host spot check of both ends passed)."""
        cp = self.cupy
        with self.stream:
            self.recv[:count].fill(np.nan)    # an element NCCL did not write stays NaN and fails
            self.allreduce(count)
            bad = int(cp.count_nonzero(self._mismatch(self.table, self.recv[:count])))
        self.stream.synchronize()
        k = min(SPOT, count)
        table = expected_table(self.world)
        head, tail = np.arange(k), np.arange(count - k, count)
        spot = (np.array_equal(self.recv[:k].get(), table[head % PERIOD])
                and np.array_equal(self.recv[count - k:count].get(), table[tail % PERIOD]))
        return bad, spot


def _sweep(me: _Rank, sizes: Sequence[int], barrier: Any, n_warmup: int, n_repeat: int) -> list[dict[str, Any]]:
    rows = []
    for size in sizes:
        count = size // 4
        bad, spot = me.check(count)
        iters = A.iterations_for(size)
        for _ in range(n_warmup):
            timed_batch(me.comm, me.send, me.recv, count, iters, me.stream, me.events)
        dev, host = [], []
        for _ in range(n_repeat):
            d, h = _time(lambda: me.allreduce(count), barrier, me.stream, me.events, iters)
            dev.append(d)
            host.append(h)
        rows.append({"bytes": size, "count": count, "iters": iters, "mismatches": bad, "spot_ok": spot,
                     "device_us": dev, "host_us": host})
        if me.rank == 0:
            print(f"  {A.size_label(size):>9}: {statistics.median(dev):10.1f} us on rank 0  "
                  f"({'ok' if not bad and spot else 'WRONG'})", flush=True)
    return rows


def _float_check(me: _Rank) -> dict[str, Any]:
    cp = me.cupy
    with me.stream:
        x = cp.asarray(float_inputs(me.rank, FLOAT_CHECK_COUNT))
        y = cp.empty_like(x)
        me.allreduce(FLOAT_CHECK_COUNT, x, y)
        got = y.get()
    me.stream.synchronize()
    out = {"digest": hashlib.sha256(got.tobytes()).hexdigest()}
    if me.rank == 0:
        out["check"] = float_check(got, me.world)
    return out


def _hierarchical(me: _Rank, barrier: Any, n_warmup: int, n_repeat: int) -> list[dict[str, Any]]:
    cp = me.cupy
    rows = []
    for n in HIER_COUNTS:
        with me.stream:
            x = cp.random.RandomState(SEED + 1000 * me.rank + n % 997).random_sample(size=n, dtype=cp.float32)
            y = cp.empty_like(x)
            total = cp.empty(1, cp.float32)
            px, py = R.make_plan(LOCAL_VERSION, n), R.make_plan(LOCAL_VERSION, n)
        me.stream.synchronize()
        first_x, second_x = px.launchers(x)
        first_y, second_y = py.launchers(y)

        def hierarchical() -> None:     # reduce the shard here, then all-reduce one float
            first_x()
            second_x()
            me.allreduce(1, px.result, total)

        def whole() -> None:            # all-reduce the whole shard, then reduce the summed buffer here
            me.allreduce(n, x, y)
            first_y()
            second_y()

        def local() -> None:
            first_x()
            second_x()

        def cub() -> None:
            cp.sum(x)

        variants = {"hier": hierarchical, "whole": whole, "local_reduce": local, "cupy_sum": cub}
        times: dict[str, list[float]] = {k: [] for k in variants}
        with me.stream:
            for fn in variants.values():
                for _ in range(n_warmup):
                    fn()
            me.stream.synchronize()
            for _ in range(n_repeat):          # interleaved: drift touches every variant alike
                for k, fn in variants.items():
                    times[k].append(_time(fn, barrier, me.stream, me.events)[0])
            hierarchical()
            whole()
        me.stream.synchronize()
        host = x.get(stream=me.stream)
        rows.append({"count_per_gpu": n, "bytes_per_gpu": 4 * n, "times": times,
                     "hier_value": float(total.get(stream=me.stream)[0]),
                     "whole_value": float(py.result.get(stream=me.stream)[0]),
                     "ref": float(np.sum(host, dtype=np.float64)), "abs_sum": float(np.abs(host, dtype=np.float64).sum()),
                     "first_grid": int(px.grids[0])})
        del x, y, px, py, host
        cp.get_default_memory_pool().free_all_blocks()
        if me.rank == 0:
            print(f"  hierarchical, {A.size_label(4 * n)} per GPU: "
                  f"{statistics.median(times['hier']):.1f} us against {statistics.median(times['whole']):.1f} us",
                  flush=True)
    return rows


def worker(rank: int, world: int, uid_queue: Any, results: Any, barrier: Any, cfg: dict[str, Any]) -> None:
    """One rank: join the communicator, run the sweep, the float check and the hierarchical reduce, and
    put ``("ok", rank, results)`` (or ``("error", rank, traceback)``) on ``results``."""
    try:
        from cupy.cuda import nccl

        if rank == 0:
            uid = nccl.get_unique_id()
            for _ in range(world - 1):
                uid_queue.put(uid)
        else:
            uid = uid_queue.get(timeout=120)
        me = _Rank(rank, world, uid, cfg["max_bytes"])
        if rank == 0:
            print(f"NCCL {A.nccl_version_text(nccl.get_version())}, {world} rank(s): sweep", flush=True)
        out = {"rank": rank, "pci_bus_id": me.device.pci_bus_id, A.NVLS_VAR: os.environ.get(A.NVLS_VAR),
               "sweep": _sweep(me, cfg["sizes"], barrier, cfg["n_warmup"], cfg["n_repeat"])}
        del me.send, me.recv     # the hierarchical reduce needs the memory of the big buffers
        me.cupy.get_default_memory_pool().free_all_blocks()
        out["float"] = _float_check(me)
        out["hierarchical"] = _hierarchical(me, barrier, cfg["n_warmup"], cfg["n_repeat"]) if cfg["hierarchical"] else []
        me.comm.destroy()
        results.put(("ok", rank, out))
    except BaseException:  # report anything, including a barrier timeout, to the parent
        results.put(("error", rank, traceback.format_exc()))


# ---------------------------------------------------------------- the parent: start, collect, record


def combine(per_rank: list[dict[str, Any]], world: int) -> dict[str, Any]:
    """The recording's payload from every rank's results (ordered by rank)."""
    sweep = []
    for rows in zip(*(r["sweep"] for r in per_rank)):
        dev, dev_ranks = timing_summary([row["device_us"] for row in rows])
        host, _ = timing_summary([row["host_us"] for row in rows])
        size = rows[0]["bytes"]
        mismatches = sum(row["mismatches"] for row in rows)
        sweep.append({"bytes": size, "count": rows[0]["count"], "iters": rows[0]["iters"], "device_us": dev,
                      "device_us_per_rank": dev_ranks, "host_us": host,
                      "algbw_GBps": A.algbw(size, dev * 1e-6) / 1e9, "busbw_GBps": A.busbw(size, dev * 1e-6, world) / 1e9,
                      "correct": mismatches == 0 and all(row["spot_ok"] for row in rows), "mismatches": mismatches})
    digests = {r["float"]["digest"] for r in per_rank}
    fcheck = {**per_rank[0]["float"]["check"], "identical_on_every_rank": len(digests) == 1}
    hier = []
    for rows in zip(*(r["hierarchical"] for r in per_rank)):
        n = rows[0]["count_per_gpu"]
        med = {k: timing_summary([row["times"][k] for row in rows])[0] for k in rows[0]["times"]}
        ref = sum(row["ref"] for row in rows)
        bound = bound_total(sum(row["abs_sum"] for row in rows), n, world, rows[0]["first_grid"])
        hv = [row["hier_value"] for row in rows]
        wv = [row["whole_value"] for row in rows]
        hier.append({"count_per_gpu": n, "bytes_per_gpu": 4 * n, "local_version": LOCAL_VERSION,
                     "hier_us": med["hier"], "whole_us": med["whole"], "local_reduce_us": med["local_reduce"],
                     "cupy_sum_us": med["cupy_sum"], "reference": ref, "bound": bound,
                     "hier_value": hv[0], "whole_value": wv[0],
                     "hier_ok": len(set(hv)) == 1 and abs(hv[0] - ref) <= bound,
                     "whole_ok": len(set(wv)) == 1 and abs(wv[0] - ref) <= bound})
    rank_env = [{"rank": r["rank"], "pci_bus_id": r["pci_bus_id"], A.NVLS_VAR: r[A.NVLS_VAR]} for r in per_rank]
    label = "multi-GPU" if world > 1 else "smoke test: world size 1, the all-reduce is a copy"
    return {"kind": "allreduce_nccl", "world_size": world, "label": label, "dtype": "float32", "op": "sum",
            "in_place": False, "sweep": sweep, "float_check": fcheck, "hierarchical": hier, "rank_env": rank_env}


def run_workers(world: int, cfg: dict[str, Any], timeout: float, target: Any = None) -> list[dict[str, Any]]:
    """Start ``world`` processes running ``target`` (default :func:`worker`), one rank each, and return
    their results ordered by rank. Raises RuntimeError naming the rank that failed or stayed silent
    for ``timeout`` seconds; every worker still running then is terminated."""
    import multiprocessing as mp

    target = worker if target is None else target

    ctx = mp.get_context("spawn")   # fresh interpreters: no CUDA state inherited from this process
    uid_queue, results, barrier = ctx.Queue(), ctx.Queue(), ctx.Barrier(world)
    procs = [ctx.Process(target=target, args=(r, world, uid_queue, results, barrier, cfg), daemon=True)
             for r in range(world)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + timeout
    got: dict[int, dict[str, Any]] = {}
    finished = False
    try:
        while len(got) < world:
            try:
                status, rank, payload = results.get(timeout=max(1.0, deadline - time.monotonic()))
            except queue.Empty:
                missing = sorted(set(range(world)) - set(got))
                raise RuntimeError(f"no result from rank(s) {missing} within {timeout:.0f} s") from None
            if status != "ok":
                raise RuntimeError(f"rank {rank} failed:\n{payload}")
            got[rank] = payload
        finished = True
    finally:
        for p in procs:          # only our own workers; after a failure the others may wait for it forever
            if finished:
                p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
    return [got[r] for r in range(world)]


def stamp(world: int) -> dict[str, Any]:
    """``helpers.engine.backend.stamp()`` plus GPU count, world size, NCCL versions, topology and NVLink status."""
    import cupy
    from cupy.cuda import nccl

    from helpers.engine import backend

    return {**backend.stamp(), "gpu_count": int(cupy.cuda.runtime.getDeviceCount()), "world_size": world,
            "nccl_version": A.nccl_version_text(nccl.get_version()),
            "nccl_build_version": A.nccl_version_text(nccl.get_build_version()),
            "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")}, **host_facts()}


def import_recording(src: str, dest: Optional[str] = None) -> Path:
    """The recording-import step: check that ``src`` (the file the script wrote on the GPU host) is a valid
    recording, then copy it byte for byte to ``data/allreduce_nccl.json`` (or ``dest``)."""
    import json

    A.validate_recording(json.loads(Path(src).read_text()))
    target = Path(dest) if dest else data.path(A.RECORDING)
    shutil.copyfile(src, target)
    return target


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="nccl_allreduce.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--world", type=int, default=None, help="ranks, one GPU each (default: every visible GPU)")
    p.add_argument("--min-bytes", default="8", help="smallest message (default 8)")
    p.add_argument("--max-bytes", default="4GiB", help="largest message (default 4GiB)")
    p.add_argument("--repeat", type=int, default=20, help="timed repetitions per size (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="untimed warm-ups per size (default 5)")
    p.add_argument("--no-hierarchical", action="store_true", help="skip the hierarchical reduce")
    p.add_argument("--timeout", type=float, default=170.0, help="seconds before the run is abandoned (default 170)")
    p.add_argument("--copy-to", default=None, help="also copy the recording into this folder (e.g. $OUT)")
    p.add_argument("--print-env", action="store_true", help=f"print {A.NVLS_VAR} as every process sees it; no GPU")
    p.add_argument("--import", dest="import_src", default=None, metavar="FILE",
                   help="validate a recording brought back from the GPU host and copy it into data/")
    p.add_argument("--to", default=None, help="with --import: where to copy (default data/allreduce_nccl.json)")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: record (default), ``--print-env`` or ``--import FILE``. Returns the exit status."""
    inherited = os.environ.get(A.NVLS_VAR)
    os.environ[A.NVLS_VAR] = "0"   # before anything starts: spawned workers inherit it
    # `timeout` sends SIGTERM: exit through the finally blocks, which stop the workers this process started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args = parse_args(argv)
    if args.print_env:
        return print_env(inherited)
    if args.import_src:
        print(f"imported {args.import_src} -> {import_recording(args.import_src, args.to)}")
        return 0
    try:
        sizes = A.sweep_sizes(A.parse_size(args.min_bytes), A.parse_size(args.max_bytes))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from cupy.cuda import nccl
    import cupy

    if not getattr(nccl, "available", False):
        print("error: NCCL is not loadable through CuPy (cupy.cuda.nccl.available is False); install the "
              "nvidia-nccl wheel for your CUDA major version, e.g. pip install nvidia-nccl-cu13", file=sys.stderr)
        return 3
    gpus = int(cupy.cuda.runtime.getDeviceCount())
    world = gpus if args.world is None else args.world
    if not 1 <= world <= gpus:
        print(f"error: --world must be in [1, {gpus}] (the visible GPUs); got {world}", file=sys.stderr)
        return 2
    cfg = {"sizes": sizes, "max_bytes": sizes[-1], "n_warmup": args.warmup, "n_repeat": args.repeat,
           "hierarchical": not args.no_hierarchical}
    t0 = time.monotonic()
    per_rank = run_workers(world, cfg, args.timeout)
    payload = combine(per_rank, world)
    payload["timing"] = {"n_warmup": args.warmup, "n_repeat": args.repeat,
                         "device": "CUDA events on each rank's stream around a batch of iters back-to-back "
                                   "all-reduces after a barrier; per repetition the slowest rank; median",
                         "host": "perf_counter from the first launch to the end event's synchronize, per all-reduce",
                         "seconds": round(time.monotonic() - t0, 1)}
    path = data.write(A.RECORDING, payload, stamp(world))
    if args.copy_to:
        shutil.copy(path, Path(args.copy_to) / path.name)
    rec = A.validate_recording(data.load(A.RECORDING))
    print(A.recording_status(rec))
    print(A.format_correctness(rec))
    print(A.format_float_check(rec))
    print(A.format_sweep(rec))
    if rec["hierarchical"]:
        print(A.format_hierarchical(rec))
    print(A.format_busbw_vs_nvlink(rec))
    print(f"wrote {path}")
    ok = all(r["correct"] for r in rec["sweep"]) and all(h["hier_ok"] and h["whole_ok"] for h in rec["hierarchical"])
    return 0 if ok and rec["float_check"]["within_bound"] else 1
