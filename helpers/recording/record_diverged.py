"""``python -m helpers.recording.record_diverged``: what one GPU did with an undefined call, recorded.

The experiment (``kernels/warp_diverged.cu``): a full-mask ``__shfl_down_sync`` or
``__ballot_sync`` is called by some lanes of a warp while the other lanes, which the mask also
names, are alive elsewhere. Those lanes busy-wait a fixed number of clock cycles and then either
return without calling (``then="exit"``) or call the same intrinsic with the same mask from
another line (``then="later"``). With ``then="exit"`` the call is undefined: what one GPU, driver and
compiler did is one observation of undefined behaviour, labelled so, not a rule; the machine flags
such calls as undefined (``undefined_shuffle``) and no notebook shows these values as results. With
``then="later"`` the calls meet and are defined on sm_70+ (PTX ISA, ``shfl.sync`` and ``vote.sync``:
each thread waits until every non-exited thread of ``membermask`` has executed the instruction with the
same qualifiers and mask; "the same instruction in convergence" is required only for ``.target sm_6x``
or below); the machine computes them, and its values equal this recording's
(``tests/machine/test_m_warp.py``). The file's own label predates that rule; ``data/`` is not edited.

Each configuration runs in its own process (``scripts/gpu/diverged.sh`` puts each under
``timeout``), so a warp that hangs costs only its own part::

    python -m helpers.recording.record_diverged --list                   # the part names
    python -m helpers.recording.record_diverged --part NAME --out FILE   # one part, JSON to FILE (GPU)
    python -m helpers.recording.record_diverged --combine DIR            # data/diverged_reads.json, stamped (GPU)

:func:`summarise` (pure, tested on the CPU) turns the raw per-lane buffers into the recording;
:func:`report` prints the whole recording, or that there is none yet; :func:`observations` reduces
it to what notebook 01 shows (``helpers.viz.diverged`` draws its table and figure).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from helpers.engine.warp_cupy import DIVERGED_KERNELS, DIVERGED_OPS

LANES = 32
NAME = "diverged_reads"
KERNEL = "warp_diverged"
OPS = DIVERGED_OPS                                         # intrinsic -> the kernel's op template argument
NAME_EXPRESSIONS: tuple[str, ...] = DIVERGED_KERNELS[KERNEL]   # registered by helpers.engine.warp_cupy
N_WARPS = 528            # 4 per SM of an H200 (132 SMs)
SPIN_CYCLES = 200_000    # how long the lanes elsewhere stay alive: about 0.1 ms at 2 GHz
CALLER_SETS = {"even lanes": 0x55555555, "lanes 0-15": 0x0000FFFF, "all lanes": 0xFFFFFFFF}
LABEL = ("one observation of undefined behaviour on this GPU, driver and compiler: not a rule, "
         "and not a value any program may rely on")


@dataclass(frozen=True)
class Part:
    """One configuration: which intrinsic, which lanes call at once, what the others do."""

    name: str
    op: str          # "shfl_down" or "ballot"
    callers: str     # a key of CALLER_SETS
    then: str        # "exit": the other lanes return without calling; "later": they call from another line
    delta: int = 0   # shfl_down only

    @property
    def caller_mask(self) -> int:
        return CALLER_SETS[self.callers]

    def describe(self) -> str:
        call = f"__shfl_down_sync(0xFFFFFFFF, v, {self.delta})" if self.op == "shfl_down" else "__ballot_sync(0xFFFFFFFF, 1)"
        if self.callers == "all lanes":
            return f"{call} called by all 32 lanes (control: a defined call)"
        others = ("then return without calling" if self.then == "exit"
                  else "then call it too, from another line")
        return f"{call} called by {self.callers}; the other lanes spin {SPIN_CYCLES:,} cycles, {others}"


PARTS: tuple[Part, ...] = (
    Part("control_shfl", "shfl_down", "all lanes", "exit", 1),
    Part("control_ballot", "ballot", "all lanes", "exit"),
    Part("shfl_even_d1_exit", "shfl_down", "even lanes", "exit", 1),
    Part("shfl_even_d2_exit", "shfl_down", "even lanes", "exit", 2),
    Part("shfl_low_d16_exit", "shfl_down", "lanes 0-15", "exit", 16),
    Part("shfl_even_d1_later", "shfl_down", "even lanes", "later", 1),
    Part("shfl_low_d16_later", "shfl_down", "lanes 0-15", "later", 16),
    Part("ballot_even_exit", "ballot", "even lanes", "exit"),
    Part("ballot_low_exit", "ballot", "lanes 0-15", "exit"),
    Part("ballot_even_later", "ballot", "even lanes", "later"),
)
_BY_NAME = {p.name: p for p in PARTS}


def part(name: str) -> Part:
    """The part called ``name``; ValueError lists the known ones."""
    if name not in _BY_NAME:
        raise ValueError(f"part must be one of {', '.join(_BY_NAME)}; got {name!r}")
    return _BY_NAME[name]


def inputs(n_warps: int = N_WARPS) -> np.ndarray:
    """(n_warps, 32) int32, every value distinct (1000 * warp + lane + 1), so a read names its origin."""
    return (1000 * np.arange(n_warps)[:, None] + np.arange(LANES)[None, :] + 1).astype(np.int32)


# ---------------------------------------------------------------- on the GPU


def run_part(p: Part, n_warps: int = N_WARPS, spin: int = SPIN_CYCLES) -> dict[str, np.ndarray]:
    """Launch one part (GPU only). Returns the raw buffers: values, called (bool), got, amask, t (n_warps, 32, 3)."""
    import cupy

    from helpers.engine import kernels

    values = inputs(n_warps)
    callers = np.full(n_warps, p.caller_mask, np.uint32)
    expr = f"diverged_kernel<{OPS[p.op]}, {'true' if p.then == 'later' else 'false'}>"
    fn = kernels.module(KERNEL, NAME_EXPRESSIONS).get_function(expr)
    d_got = cupy.full(n_warps * LANES, -1, np.int32)
    d_amask = cupy.zeros(n_warps * LANES, np.uint32)
    d_t = cupy.zeros(n_warps * LANES * 3, np.int64)
    fn((n_warps,), (LANES,), (cupy.asarray(values), cupy.asarray(callers), np.int32(p.delta), np.int64(spin),
                              d_got, d_amask, d_t))
    cupy.cuda.get_current_stream().synchronize()
    lane_bits = ((callers[:, None].astype(np.uint64) >> np.arange(LANES, dtype=np.uint64)) & 1).astype(bool)
    called = lane_bits | (p.then == "later")
    return {"values": values, "called_first": lane_bits, "called": called,
            "got": cupy.asnumpy(d_got).reshape(n_warps, LANES), "amask": cupy.asnumpy(d_amask).reshape(n_warps, LANES),
            "t": cupy.asnumpy(d_t).reshape(n_warps, LANES, 3)}


# ---------------------------------------------------------------- pure: the summary


def _hex(v: int) -> str:
    return f"0x{int(v) & 0xFFFFFFFF:08X}"


def _histogram(x: np.ndarray, top: int = 4) -> dict[str, int]:
    keys, counts = np.unique(x.astype(np.uint32), return_counts=True)
    order = np.argsort(-counts, kind="stable")[:top]
    out = {_hex(keys[i]): int(counts[i]) for i in order}
    rest = int(counts.sum() - sum(out.values()))
    if rest:
        out["other"] = rest
    return out


def _classify_reads(values: np.ndarray, got: np.ndarray, readers: np.ndarray, src: np.ndarray) -> dict[str, int]:
    """How many of the ``readers``' results were their own value, their source lane's value,
    another lane's value of the same warp, or none of these."""
    own = got == values
    from_src = got == np.take_along_axis(values, src, axis=1)
    in_warp = (got[:, :, None] == values[:, None, :]).any(axis=2)
    return {"reads": int(readers.sum()),
            "caller_own_value": int((readers & own).sum()),
            "source_lane_value": int((readers & from_src & ~own).sum()),
            "another_lane_value": int((readers & in_warp & ~own & ~from_src).sum()),
            "none_of_these": int((readers & ~in_warp).sum())}


def summarise(p: Part, raw: dict[str, np.ndarray], spin: int = SPIN_CYCLES) -> dict[str, Any]:
    """The JSON-ready recording of one part, from :func:`run_part`'s buffers."""
    values, got, t = raw["values"], raw["got"], raw["t"]
    first, called = raw["called_first"], raw["called"]
    n_warps = values.shape[0]
    lane = np.arange(LANES)
    out: dict[str, Any] = {"describe": p.describe(), "op": p.op, "callers": p.callers, "then": p.then,
                           "n_warps": int(n_warps), "spin_cycles": int(spin)}
    if p.op == "shfl_down":
        j = lane + p.delta
        src = np.broadcast_to(np.where(j < LANES, j, lane), values.shape)
        past_end = np.broadcast_to(j >= LANES, values.shape)
        src_first = np.take_along_axis(first, src, axis=1)
        out["reads"] = {
            "first callers, source past lane 31 (own value in a defined call)": _classify_reads(
                values, got, first & past_end, src),
            "first callers, source also a first caller": _classify_reads(values, got, first & ~past_end & src_first, src),
            "first callers, source elsewhere": _classify_reads(values, got, first & ~past_end & ~src_first, src),
        }
        if p.then == "later":
            out["reads"]["later callers (all reads)"] = _classify_reads(values, got, called & ~first, src)
    else:
        out["ballot_first_callers"] = _histogram(got[first])
        if p.then == "later":
            out["ballot_later_callers"] = _histogram(got[called & ~first])
    out["activemask_seen_by_first_callers"] = _histogram(raw["amask"][first])
    # Did the first callers leave their call only after the lanes elsewhere had finished waiting?
    others = ~first
    if others.any(axis=1).all():
        others_done = np.where(others, t[:, :, 1], np.iinfo(np.int64).min).max(axis=1)
        callers_left = np.where(first, t[:, :, 2], np.iinfo(np.int64).max).min(axis=1)
        in_call = np.where(first, t[:, :, 2] - t[:, :, 1], 0).max(axis=1)
        out["timing"] = {
            "warps_whose_first_callers_left_after_the_others_stopped_waiting": int((callers_left >= others_done).sum()),
            "median_cycles_in_the_call_first_callers": int(np.median(in_call)),
        }
    w0 = {"values": values[0].tolist(), "called_first": first[0].astype(int).tolist(),
          "got": [int(g) if c else None for g, c in zip(got[0], called[0])]}
    out["warp_0"] = w0
    return out


# ---------------------------------------------------------------- combining, reporting


def combine(parts_dir: Path | str) -> Path:
    """Gather the parts' JSON files into ``data/diverged_reads.json``, stamped (GPU only). A part
    with no file (it timed out or failed) is recorded as such."""
    from helpers import data
    from helpers.engine import backend

    parts: dict[str, Any] = {}
    for p in PARTS:
        f = Path(parts_dir) / f"{p.name}.json"
        parts[p.name] = json.loads(f.read_text()) if f.is_file() else {
            "describe": p.describe(), "status": "no result: the part timed out or failed (see its log)"}
    return data.write(NAME, {"experiment": "full-mask __shfl_down_sync / __ballot_sync while lanes named in the "
                                           "mask are alive elsewhere (kernels/warp_diverged.cu)",
                             "label": LABEL, "parts": parts}, backend.stamp())


def _read_line(name: str, r: dict[str, int]) -> str:
    n = r["reads"]
    if not n:
        return f"    {name}: none"
    pct = lambda k: f"{r[k]} ({100 * r[k] / n:.0f} %)"  # noqa: E731
    return (f"    {name}: {n} reads: own value {pct('caller_own_value')}, source lane's value "
            f"{pct('source_lane_value')}, another lane's {pct('another_lane_value')}, none of these {pct('none_of_these')}")


def part_lines(name: str, r: dict[str, Any]) -> list[str]:
    """A few plain lines for one recorded part."""
    lines = [f"{name}: {r['describe']}"]
    if "status" in r:
        return lines + [f"    {r['status']}"]
    for k, v in r.get("reads", {}).items():
        lines.append(_read_line(k, v))
    for k in ("ballot_first_callers", "ballot_later_callers", "activemask_seen_by_first_callers"):
        if k in r:
            lines.append(f"    {k.replace('_', ' ')}: " + ", ".join(f"{h} x{c}" for h, c in r[k].items()))
    if "timing" in r:
        tm = r["timing"]
        lines.append(f"    first callers left their call after the other lanes stopped waiting in "
                     f"{tm['warps_whose_first_callers_left_after_the_others_stopped_waiting']} of {r['n_warps']} warps "
                     f"(median {tm['median_cycles_in_the_call_first_callers']:,} cycles in the call; the others "
                     f"waited {r['spin_cycles']:,})")
    return lines


def report(rec: Optional[dict[str, Any]] = None, parts: Optional[tuple[str, ...]] = None) -> str:
    """What notebook 01 prints: the recording with its label and stamp, or a line saying there is
    none yet (then no claim about the hardware is made). ``parts`` picks parts by name."""
    from helpers import data

    if rec is None:
        if not data.exists(NAME):
            return (f"Not recorded yet: data/{NAME}.json is written on a GPU by scripts/gpu/diverged.sh. "
                    f"Until it exists, this notebook makes no claim about what a GPU does here.")
        rec = data.load(NAME)
    lines = [f"{data.label(rec['stamp'])}: {rec['label']}"]
    for name, r in rec["parts"].items():
        if parts is None or name in parts:
            lines += part_lines(name, r)
    return "\n".join(lines)


@dataclass(frozen=True)
class Observation:
    """One recorded part, reduced to what notebook 01 shows (table and figure): who called first,
    what the others did, what the first callers got back, and how long they stayed in the call."""

    name: str
    op: str                     # "shfl_down" or "ballot"
    call: str                   # the call as written, e.g. "__ballot_sync(0xFFFFFFFF, 1)"
    callers: str                # who calls first: a key of CALLER_SETS
    then: str                   # what the other lanes do after their wait: "exit" or "later"
    control: bool               # all 32 lanes call at once: a defined call
    got: str                    # what the first callers' calls returned, in words
    got_later: Optional[str]    # then == "later": what the other lanes' calls returned
    activemask: str             # what __activemask() said just before the call
    n_warps: int
    spin_cycles: int
    warps_back_after_wait: Optional[int]   # warps whose first callers all came back after the others' wait
    median_cycles_in_call: Optional[int]


_READ_WORDS = {"caller_own_value": "own value", "source_lane_value": "source lane's value",
               "another_lane_value": "another lane's value", "none_of_these": "none of the warp's values"}


_WHERE_WORDS = {"source past lane 31": "source past lane 31", "source also a first caller": "source calling too",
                "source elsewhere": "source a lane elsewhere"}


def _got_words(r: dict[str, Any], who: str) -> Optional[str]:
    """``who``: "first" or "later". None where that group made no call."""
    if r["op"] == "ballot":
        h = r.get(f"ballot_{who}_callers")
        return None if h is None else ", ".join(f"{k} ({c} calls)" if len(h) > 1 else k for k, c in h.items())
    parts = []
    for kind, counts in r["reads"].items():
        if not kind.startswith(f"{who} callers") or not counts["reads"]:
            continue
        where = _WHERE_WORDS.get(kind.removeprefix(f"{who} callers").lstrip(", ").split(" (")[0], "")
        seen = [f"{_READ_WORDS[k]} {100 * counts[k] / counts['reads']:.0f} %" for k in _READ_WORDS if counts[k]]
        parts.append(f"{where}: {', '.join(seen)}" if where else ", ".join(seen))
    return "; ".join(parts) or None


def observations(rec: Optional[dict[str, Any]] = None) -> list[Observation]:
    """The recorded parts (``data/diverged_reads.json`` unless ``rec`` is given), one
    :class:`Observation` each, in recording order; parts with no result are left out."""
    from helpers import data

    rec = data.load(NAME) if rec is None else rec
    out = []
    for name, r in rec["parts"].items():
        if "status" in r:
            continue
        p = part(name)
        call = p.describe().split(" called by")[0]
        tm = r.get("timing")
        out.append(Observation(
            name=name, op=r["op"], call=call, callers=r["callers"], then=r["then"],
            control=r["callers"] == "all lanes", got=_got_words(r, "first") or "", got_later=_got_words(r, "later"),
            activemask=", ".join(r["activemask_seen_by_first_callers"]), n_warps=r["n_warps"],
            spin_cycles=r["spin_cycles"],
            warps_back_after_wait=None if tm is None else tm["warps_whose_first_callers_left_after_the_others_stopped_waiting"],
            median_cycles_in_call=None if tm is None else tm["median_cycles_in_the_call_first_callers"]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true", help="print the part names")
    g.add_argument("--part", help="run one part on the GPU")
    g.add_argument("--combine", metavar="DIR", help="write data/diverged_reads.json from DIR/*.json")
    ap.add_argument("--out", help="where --part writes its JSON")
    args = ap.parse_args(argv)
    if args.list:
        print(" ".join(p.name for p in PARTS))
        return 0
    if args.combine:
        print(f"wrote {combine(args.combine)}")
        return 0
    if not args.out:
        ap.error("--part needs --out FILE")
    p = part(args.part)
    summary = summarise(p, run_part(p))
    Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    print("\n".join(part_lines(p.name, summary)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
