"""Item 5: the machine's counters beside Nsight Compute's for the ladder's first rungs, v0..v4.

``data/ncu_ladder.json`` holds what ncu measured on the H200 for one first pass of reduce_v0..v4
(n = 2^24, 256 threads). The machine runs the same kernels on a few blocks (every block of a first
pass with n a multiple of the tile does the same work, so the per-block counts scale with the grid)
and its counters are scaled to ncu's grid. The two count different programs:

* ncu counts **SASS**, the machine code ptxas made from the PTX; the machine counts **PTX**, the
  virtual ISA (PTX ISA, "Introduction": PTX is translated to the target's instruction set by the
  optimising backend, ptxas). Instruction counts therefore differ: PTX's ``ld.param`` and
  ``cvta.to.global`` have no SASS instruction (parameters are constant-bank operands; generic and
  global addresses coincide), address arithmetic folds into the load/store's immediate offset,
  special registers are read with ``S2R``, and ptxas schedules, if-converts and sometimes unrolls.
* Lanes per instruction differ where ptxas turns a short branch into predicated instructions
  (if-conversion): the machine sees fewer *active* lanes after a branch; ncu sees all lanes active
  and fewer *predicated-on* ones (reduce_v0's ``tid % (2 s) == 0``).
* Shared-memory requests and wavefronts match where ptxas keeps every ``ld.shared``/``st.shared``
  as one ``LDS``/``STS``; they differ where it merges, drops (a value kept in a register) or adds
  accesses. Wavefronts follow the same 32-bank, 4-byte-word rule with broadcast on both sides.

:func:`ladder_table` returns the rows; :func:`format_table` prints them; :func:`sass_counts` reads
the recorded SASS (``data/machine_sass.json.gz``, when present) and counts instructions by kind,
beside the PTX's, which is where each difference comes from.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from helpers.engine import sass
from helpers.topics.reduce_maps import machine_counters

VERSIONS: tuple[str, ...] = ("v0", "v1", "v2", "v3", "v4")
BLOCKS_RUN = 8           # blocks the machine runs per version


@dataclass(frozen=True)
class Row:
    version: str
    metric: str
    ncu: Optional[float]
    machine: Optional[float]
    ncu_metric: str

    @property
    def ratio(self) -> Optional[float]:
        if self.ncu is None or self.machine is None or self.machine == 0:
            return None
        return self.ncu / self.machine


_METRICS: tuple[tuple[str, str, str], ...] = (
    # (row label, ncu metric, how the machine's value is formed)
    ("warp instructions executed", "smsp__inst_executed.sum", "issued"),
    ("active lanes per instruction", "smsp__thread_inst_executed_per_inst_executed.ratio", "active/issued"),
    ("predicated-on lanes per instruction", "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "pred/issued"),
    ("shared load instructions", "smsp__sass_inst_executed_op_shared_ld.sum", "shared_ld_requests"),
    ("shared store instructions", "smsp__sass_inst_executed_op_shared_st.sum", "shared_st_requests"),
    ("shared load wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared_ld_wavefronts"),
    ("shared store wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared_st_wavefronts"),
    ("shared load bank conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "ld_conflicts"),
    ("shared store bank conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "st_conflicts"),
    ("branch instructions (SASS targets / PTX bra)", "smsp__sass_branch_targets.sum", "branches"),
)


def ladder_table(ncu: Optional[dict[str, Any]] = None, versions: Sequence[str] = VERSIONS) -> list[Row]:
    """One row per (version, metric): ncu's measurement beside the machine's, scaled to ncu's grid."""
    from helpers import data

    ncu = ncu or data.load("ncu_ladder")
    rows = []
    for v in versions:
        rec = ncu["by_version"][v]
        m = machine_counters(v, int(rec["block"]), blocks=BLOCKS_RUN)
        scale = rec["grid"] / m["blocks"]
        derived = {"issued": m["issued"] * scale, "active/issued": m["active_lanes"] / m["issued"],
                   "pred/issued": m["predicated_on"] / m["issued"],
                   "ld_conflicts": (m["shared_ld_wavefronts"] - m["shared_ld_requests"]) * scale,
                   "st_conflicts": (m["shared_st_wavefronts"] - m["shared_st_requests"]) * scale,
                   "branches": m["branches"] * scale}
        for k in ("shared_ld_requests", "shared_st_requests", "shared_ld_wavefronts", "shared_st_wavefronts"):
            derived[k] = m[k] * scale
        for label, metric, how in _METRICS:
            rows.append(Row(v, label, rec["measured"].get(metric), derived[how], metric))
    return rows


def _fmt(x: Optional[float]) -> str:
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.2f}"


def format_table(rows: Sequence[Row]) -> str:
    """ncu (SASS) beside the machine (PTX, scaled to ncu's grid), with their ratio."""
    head = f"{'version':<7} {'counter':<45} {'ncu (SASS)':>14} {'machine (PTX)':>14} {'ncu/machine':>11}"
    lines = [head, "-" * len(head)]
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        lines.append(f"{r.version:<7} {r.metric:<45} {_fmt(r.ncu):>14} {_fmt(r.machine):>14} {ratio:>11}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ PTX beside SASS

_SASS_KINDS: dict[str, str] = {"LDS": "shared load", "STS": "shared store", "BAR": "barrier", "BRA": "branch",
                               "LDG": "global load", "STG": "global store", "S2R": "special register",
                               "FADD": "float add", "SHFL": "shuffle", "WARPSYNC": "warp sync", "EXIT": "exit"}
_PTX_KINDS: dict[str, str] = {r"ld(\.volatile)?\.shared": "shared load", r"st(\.volatile)?\.shared": "shared store",
                              r"bar\.sync|barrier\.sync": "barrier", r"bra": "branch",
                              r"ld\.global": "global load", r"st\.global": "global store",
                              r"mov\.u32 %r\d+, %(tid|ctaid|ntid|laneid)": "special register",
                              r"add(\.rn)?\.f32": "float add", r"shfl\.sync": "shuffle",
                              r"bar\.warp\.sync": "warp sync", r"ret|exit": "exit"}


def _functions_sass(text: str) -> dict[str, list[str]]:
    """cuobjdump -sass text -> {mangled function: [opcode, ...]} (modifiers, predicates and operands dropped)."""
    return {name: [ins.opcode.split(".")[0] for ins in body] for name, body in sass.functions(text).items()}


def _functions_ptx(ptx: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    cur = None
    for line in ptx.splitlines():
        m = re.match(r"\.(?:visible|weak) \.entry (\w+)\(", line)   # templates are .weak
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        s = line.strip()
        if cur and s and not s.startswith((".", "//", "{", "}", "$", ")")):
            out[cur].append(re.sub(r"^@!?%p\d+\s+", "", s).rstrip(";"))
    return out


def sass_counts(version: str, block: int = 256, root: Any = None) -> Optional[dict[str, dict[str, int]]]:
    """Static instruction counts by kind, {"ptx": {...}, "sass": {...}}, of ``reduce_vN<block>`` from
    the recording (``data/machine_sass.json.gz``); None when it is not recorded."""
    from helpers.topics import reduce as R
    from helpers.recording.proof import store

    try:
        rec = store.read_json_gz(store.SASS, root)
        kern = store.read_json_gz(store.KERNELS, root)
    except FileNotFoundError:
        return None
    file = f"reduce_{version}"
    entry = rec["files"].get(file, {})
    if "sass" not in entry:
        return None
    name = entry["lowered"][R.kernel_name(version, block)]
    sass = _functions_sass(entry["sass"]).get(name, [])
    ptx = _functions_ptx(kern["modules"][file]["ptx"]).get(name, [])
    counts_s = {k: sum(1 for op in sass if op == s) for s, k in _SASS_KINDS.items()}
    counts_p = {k: sum(1 for ins in ptx if re.match(p, ins)) for p, k in _PTX_KINDS.items()}
    counts_s["all"] = len(sass)
    counts_p["all"] = len(ptx)
    return {"ptx": counts_p, "sass": counts_s}


def format_static(versions: Sequence[str] = VERSIONS, root: Any = None) -> str:
    """Static instruction counts, PTX beside SASS, per version (empty when SASS is not recorded)."""
    lines = []
    kinds = ["all", *dict.fromkeys(_SASS_KINDS.values())]
    for v in versions:
        c = sass_counts(v, root=root)
        if c is None:
            continue
        if not lines:
            lines.append(f"{'version':<7} {'instructions':<18} {'PTX':>6} {'SASS':>6}")
        for k in kinds:
            lines.append(f"{v:<7} {k:<18} {c['ptx'].get(k, 0):>6} {c['sass'].get(k, 0):>6}")
    return "\n".join(lines)
