"""The NCCL all-reduce recording: the sizes and environment of ``scripts/gpu/allreduce.sh``'s runs,
the recording's schema (:func:`validate_recording`, :func:`load_recording`), and the tables the all-reduce
notebook prints from it (bandwidth sweep, correctness, float check, the hierarchical sum, busbw beside NVLink).

The schedules and the arithmetic of the algorithms themselves are :mod:`helpers.topics.allreduce`'s.
Nothing here imports CuPy or matplotlib.
"""
from __future__ import annotations

import inspect
import os
import re
from typing import Any, Mapping, Optional, Sequence

from helpers import data

RECORDING = "allreduce_nccl"
NVLS_VAR = "NCCL_NVLS_ENABLE"   # NVLink SHARP (multicast) stays off in every NCCL process of the project


# ---------------------------------------------------------------- sizes and environment (for the NCCL script)


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}


def parse_size(text: Any) -> int:
    """A byte count written as ``8``, ``4096``, ``64K``, ``1MiB`` or ``4GiB`` (powers of 1024) -> int."""
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(text))
    unit = m.group(2).upper() if m else None
    if not m or unit not in _UNITS:
        raise ValueError(f"size must be a number of bytes, optionally with K, M or G (KiB, MiB, GiB), "
                         f"e.g. 8, 64K, 4GiB; got {text!r}")
    return int(m.group(1)) * _UNITS[unit]


def size_label(n_bytes: int) -> str:
    """``8 B``, ``4 KiB``, ``256 MiB``, ``4 GiB`` (exact powers of 1024 get the unit)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n_bytes >= 1 << shift and n_bytes % (1 << shift) == 0:
            return f"{n_bytes >> shift} {unit}"
    return f"{n_bytes} B"


def sweep_sizes(min_bytes: int = 8, max_bytes: int = 4 << 30) -> list[int]:
    """Powers of two from ``min_bytes`` to ``max_bytes`` (both powers of two, at least 4: whole float32s)."""
    for name, v in (("min_bytes", min_bytes), ("max_bytes", max_bytes)):
        if not isinstance(v, int) or v < 4 or v & (v - 1):
            raise ValueError(f"{name} must be a power of two of at least 4 bytes (one float32); got {v!r}")
    if min_bytes > max_bytes:
        raise ValueError(f"min_bytes ({min_bytes}) must not exceed max_bytes ({max_bytes})")
    return [1 << k for k in range(min_bytes.bit_length() - 1, max_bytes.bit_length())]


def iterations_for(size_bytes: int) -> int:
    """All-reduces timed back to back between two CUDA events per repetition: enough that a small
    message's batch is well above the events' resolution, one for large messages."""
    return int(min(50, max(1, (16 << 20) // max(size_bytes, 1))))


def child_env(base: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The environment for anything the NCCL script starts: ``base`` (default: this process's) with
    NVLink SHARP multicast off (``NCCL_NVLS_ENABLE=0``), whatever ``base`` said."""
    env = dict(os.environ if base is None else base)
    env[NVLS_VAR] = "0"
    return env


def nccl_version_text(code: int) -> str:
    """NCCL's integer version code as ``major.minor.patch`` (``NCCL_VERSION``: X*10000 + Y*100 + Z since
    2.9, X*1000 + Y*100 + Z before)."""
    code = int(code)
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


# ---------------------------------------------------------------- the recording


_REQUIRED = {"stamp": dict, "world_size": int, "label": str, "sweep": list, "hierarchical": list,
             "float_check": dict, "timing": dict}
_STAMP_KEYS = ("gpu", "driver", "cupy_version", "date", "gpu_count", "nccl_version", "topology")
_ROW_KEYS = ("bytes", "count", "iters", "device_us", "host_us", "algbw_GBps", "busbw_GBps", "correct", "mismatches")


def validate_recording(rec: Any) -> dict[str, Any]:
    """Return ``rec`` if it has the shape :mod:`helpers.recording.allreduce_nccl` writes; ValueError naming what is
    missing otherwise."""
    if not isinstance(rec, dict):
        raise ValueError(f"the recording must be a JSON object; got {type(rec).__name__}")
    for key, kind in _REQUIRED.items():
        if not isinstance(rec.get(key), kind):
            raise ValueError(f"the recording lacks {key!r} (a {kind.__name__})")
    missing = [k for k in _STAMP_KEYS if k not in rec["stamp"]]
    if missing:
        raise ValueError(f"the recording's stamp lacks {', '.join(missing)}")
    for row in rec["sweep"]:
        if not isinstance(row, dict) or any(k not in row for k in _ROW_KEYS):
            raise ValueError(f"every sweep row needs {', '.join(_ROW_KEYS)}; got {row!r}")
    if rec["world_size"] < 1 or rec["stamp"]["gpu_count"] < rec["world_size"]:
        raise ValueError(f"world_size must be in [1, gpu_count]; got {rec['world_size']} of {rec['stamp']['gpu_count']}")
    return rec


def load_recording(name: str = RECORDING) -> Optional[dict[str, Any]]:
    """``data/allreduce_nccl.json``, validated, or None when nothing has been recorded yet."""
    return validate_recording(data.load(name)) if data.exists(name) else None


def is_multi_gpu(rec: Optional[dict[str, Any]]) -> bool:
    """True for a recording over two GPUs or more (a world of 1 is a copy, not communication)."""
    return rec is not None and rec["world_size"] >= 2


def recording_status(rec: Optional[dict[str, Any]]) -> str:
    """One paragraph saying what has been recorded, for the notebook (never presents a 1-GPU run as
    multi-GPU bandwidth)."""
    if rec is None:
        return ("No NCCL recording exists yet, neither a multi-GPU one nor a one-GPU smoke test: "
                "data/allreduce_nccl.json is written by scripts/gpu/allreduce.sh on a GPU host. Everything "
                "above ran on simulated ranks on the CPU.")
    s = rec["stamp"]
    where = f"{data.label(s)}; NCCL {s['nccl_version']}"
    if is_multi_gpu(rec):
        return f"Multi-GPU recording: {rec['world_size']} ranks, one per GPU ({s['gpu_count']} GPUs on the host), {where}."
    return ("No multi-GPU recording exists yet. The only recording is a smoke test with world size 1 "
            f"({where}): with one rank, NCCL's all-reduce is a copy from the send buffer to the receive "
            "buffer, so its times and rates show that the pipeline works (launch, NCCL, checks, timing), "
            "not how fast GPUs talk to each other.")


def _bw(v: float) -> str:
    return f"{v:,.1f} GB/s" if v >= 0.05 else f"{v:.3f} GB/s"


def format_sweep(rec: dict[str, Any], sizes: Optional[Sequence[int]] = None) -> str:
    """The size sweep as a table: device time (median over repetitions of the slowest rank), host-inclusive
    time, and for a multi-GPU run algbw and busbw; for world size 1 the copy rate S / t, so labelled."""
    multi = is_multi_gpu(rec)
    rows = [r for r in rec["sweep"] if sizes is None or r["bytes"] in sizes]
    t = rec["timing"]
    head = (f"{rec['world_size']} rank(s); device time: median of {t['n_repeat']} repetitions after {t['n_warmup']} "
            f"warm-ups, each the slowest rank's CUDA-event time per all-reduce; {data.label(rec['stamp'])}")
    if multi:
        cols = f"{'size':>9}  {'device':>12}  {'host-incl.':>12}  {'algbw':>14}  {'busbw':>14}  check"
    else:
        cols = f"{'size':>9}  {'device':>12}  {'host-incl.':>12}  {'copy rate S/t':>14}  check   (world size 1: a copy)"
    lines = [head, cols]
    for r in rows:
        check = "ok" if r["correct"] else f"WRONG ({r['mismatches']:,})"
        rate = f"{_bw(r['algbw_GBps']):>14}" + (f"  {_bw(r['busbw_GBps']):>14}" if multi else "")
        lines.append(f"{size_label(r['bytes']):>9}  {r['device_us']:>9,.1f} us  {r['host_us']:>9,.1f} us  {rate}  {check}")
    return "\n".join(lines)


def format_correctness(rec: dict[str, Any]) -> str:
    """One line: how many sizes were checked against NumPy, and how many were exact."""
    rows = rec["sweep"]
    bad = [size_label(r["bytes"]) for r in rows if not r["correct"]]
    span = f"{size_label(rows[0]['bytes'])} .. {size_label(rows[-1]['bytes'])}" if rows else "no sizes"
    verdict = "every element equal to NumPy's sum" if not bad else f"WRONG at {', '.join(bad)}"
    return f"{len(rows)} sizes, {span}, {rec['world_size']} rank(s): {verdict}"


def format_float_check(rec: dict[str, Any]) -> str:
    """What NCCL's float32 sum of random inputs was, against NumPy's float64 sum and the emulator's orders."""
    f = rec["float_check"]
    if rec["world_size"] == 1:
        return (f"{f['count']:,} random floats, world size 1: NCCL returned the input unchanged "
                f"({'bitwise' if f['equal_to_numpy_float32'] == f['count'] else 'NOT'} equal to it): nothing to add.")
    return (f"{f['count']:,} random floats on {rec['world_size']} ranks: worst {f['max_ulps_vs_ref']} float32 step(s) "
            f"from the float64 sum, {'inside' if f['within_bound'] else 'OUTSIDE'} the any-order bound; "
            f"bitwise equal to NumPy float32 in {f['equal_to_numpy_float32']:,}, to the emulated ring in "
            f"{f['equal_to_emulated_ring']:,}, to the emulated tree in {f['equal_to_emulated_tree']:,} elements")


def format_hierarchical(rec: dict[str, Any]) -> str:
    """Hierarchical reduce (local kernel, then an all-reduce of one float) against all-reducing the whole
    shard (then reducing it locally), per shard size; for world size 1, so labelled."""
    multi = is_multi_gpu(rec)
    rows = rec["hierarchical"]
    note = "" if multi else "   (world size 1: both all-reduces are copies)"
    lines = [f"sum of {rec['world_size']} shard(s), one per GPU; device times, medians{note}",
             f"{'shard':>9}  {'local ' + (rows[0]['local_version'] if rows else ''):>14}  {'cupy.sum':>11}  "
             f"{'hierarchical':>13}  {'whole buffer':>13}  {'ratio':>6}  check"]
    for r in rows:
        ok = "ok" if r["hier_ok"] and r["whole_ok"] else "WRONG"
        lines.append(f"{size_label(r['bytes_per_gpu']):>9}  {r['local_reduce_us']:>11,.1f} us  {r['cupy_sum_us']:>8,.1f} us  "
                     f"{r['hier_us']:>10,.1f} us  {r['whole_us']:>10,.1f} us  {r['whole_us'] / r['hier_us']:>5.1f}x  {ok}")
    return "\n".join(lines)


def nvlink_links(rec: dict[str, Any]) -> list[float]:
    """The link speeds (GB/s) ``nvidia-smi nvlink --status`` reported for GPU 0 in the recording."""
    text = rec["stamp"].get("nvlink_status", "")
    first = re.split(r"\nGPU 1\b", text)[0]
    return [float(v) for v in re.findall(r"Link \d+: ([\d.]+) GB/s", first)]


def format_busbw_vs_nvlink(rec: dict[str, Any], size: int = 1 << 30) -> str:
    """busbw at ``size`` against the sum of GPU 0's NVLink link speeds as nvidia-smi reported them."""
    if not is_multi_gpu(rec):
        return "busbw needs two GPUs or more: this recording has one (a copy), so there is nothing to compare."
    row = next((r for r in rec["sweep"] if r["bytes"] == size), None)
    if row is None:
        return f"the recording has no {size_label(size)} row"
    links = nvlink_links(rec)
    if not links:
        return f"busbw at {size_label(size)}: {_bw(row['busbw_GBps'])}; nvidia-smi reported no NVLink speeds"
    total = sum(links)
    return (f"busbw at {size_label(size)}: {_bw(row['busbw_GBps'])}; NVLink on GPU 0 as nvidia-smi reports it: "
            f"{len(links)} links, {_bw(total)} in all; busbw is {row['busbw_GBps'] / total:.0%} of that")


def code_markdown(obj: Any) -> str:
    """Markdown of a helper's Python source (read from its file, never pasted), with where it lives."""
    src = inspect.getsource(obj)
    where = f"{inspect.getmodule(obj).__name__.replace('.', '/')}.py · {obj.__qualname__}"
    return f"```python\n{src.rstrip()}\n```\n<sub>from <code>{where}</code></sub>"
